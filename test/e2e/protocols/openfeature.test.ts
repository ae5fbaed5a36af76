/**
 * OpenFeature's remote evaluation protocol (OFREP) under /ofrep, read by OpenFeature's published
 * SDKs and OFREP providers as they are: the server SDK with `@openfeature/ofrep-provider` (one
 * request per evaluation) and the web SDK with `@openfeature/ofrep-web-provider` (bulk evaluation,
 * polled with If-None-Match), run in Node. Values typed by value type, the evaluation context
 * mapped onto the context levels, variant and reason, a sealed flag, a missing flag, the
 * repository named by the token or by a path prefix, and a change seen by a polling client.
 * The real server on a loopback port, real bare repositories.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { OpenFeature, type Client } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature as WebOpenFeature } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { cliOk, cliWithInput, headOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/flags';
const PASSWORD = 'correct-horse-battery';

const fixture = serverForFile();
let token: string;
let client: Client;

async function pushOk(data: unknown[]): Promise<void> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { changeComment: 'flags', enableKeyCreation: true, data },
    { 'Client-Token': token },
  );
  expect(answer.status, `push refused: ${reasonOf(answer)}`).toBe(200);
}

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${fixture.server.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application,Instance');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'flag-reader').trim();
  const group = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', REPO, 'secrets');
  expect(group.code, group.stderr).toBe(0);
  await pushOk([
    {
      key: 'new-checkout',
      vdt: 'Boolean',
      values: [
        { context: '*;*;*', value: 'false' },
        { context: 'Production;Billing;*', value: 'true' },
        { context: '*;*;canary-1', value: 'true' },
      ],
    },
    {
      key: 'max-items',
      vdt: 'Integer',
      values: [
        { context: '*;*;*', value: '10' },
        { context: 'Production;*;*', value: '25' },
      ],
    },
    { key: 'ratio', vdt: 'Double', values: [{ context: '*;*;*', value: '0.25' }] },
    { key: 'banner', values: [{ context: '*;*;*', value: 'Welcome' }] },
    { key: 'limits', vdt: 'Map', values: [{ context: '*;*;*', value: '{"rps":100,"burst":20}' }] },
    {
      key: 'api.key',
      securityGroup: 'secrets',
      password: PASSWORD,
      values: [{ context: '*;*;*', value: 'sk_live_1234' }],
    },
  ]);
  await OpenFeature.setProviderAndWait(
    new OFREPProvider({ baseUrl: fixture.server.url, headers: { Authorization: `Bearer ${token}` } }),
  );
  client = OpenFeature.getClient();
});

describe('the server SDK with the OFREP provider, as published', () => {
  it('evaluates typed values for the context the attributes name, with variant and reason', async () => {
    const billing = { targetingKey: 'node-1', Environment: 'Production', application: 'Billing' };
    const on = await client.getBooleanDetails('new-checkout', false, billing);
    expect(on).toMatchObject({
      value: true,
      variant: 'Production;Billing;*',
      reason: 'TARGETING_MATCH',
      flagMetadata: { commit: headOf(fixture.repos, REPO) },
    });
    expect(on.errorCode).toBeUndefined();
    const off = await client.getBooleanDetails('new-checkout', true, { Environment: 'Development' });
    expect(off).toMatchObject({ value: false, variant: '*;*;*', reason: 'DEFAULT' });
    expect(await client.getNumberValue('max-items', 0, billing)).toBe(25);
    expect(await client.getNumberValue('ratio', 0)).toBe(0.25);
    expect(await client.getStringValue('banner', '')).toBe('Welcome');
    expect(await client.getObjectValue('limits', {})).toEqual({ rps: 100, burst: 20 });
  });

  it('maps targetingKey onto the last level, unless an attribute names that level', async () => {
    expect(await client.getBooleanDetails('new-checkout', false, { targetingKey: 'canary-1' })).toMatchObject({
      value: true,
      variant: '*;*;canary-1',
    });
    expect(await client.getBooleanValue('new-checkout', false, { targetingKey: 'canary-1', Instance: 'node-2' })).toBe(
      false,
    );
  });

  it('gives the default with an error for a missing flag, a sealed flag, a wrong type and an invalid context', async () => {
    expect(await client.getBooleanDetails('no-such-flag', true)).toMatchObject({
      value: true,
      errorCode: 'FLAG_NOT_FOUND',
    });
    const sealed = await client.getStringDetails('api.key', 'fallback');
    expect(sealed).toMatchObject({ value: 'fallback', errorCode: 'GENERAL' });
    expect(JSON.stringify(sealed)).not.toContain('sk_live');
    expect(await client.getBooleanDetails('banner', false)).toMatchObject({ value: false, errorCode: 'TYPE_MISMATCH' });
    expect(await client.getBooleanDetails('new-checkout', false, { Environment: 'not valid' })).toMatchObject({
      value: false,
      errorCode: 'INVALID_CONTEXT',
    });
  });

  it('reads a sealed flag with a token bound to its group', async () => {
    const created = await cliWithInput(
      fixture.repos,
      `${PASSWORD}\n`,
      'token',
      'create',
      REPO,
      '--name',
      'flag-secrets',
      '--security-group',
      'secrets',
    );
    const bound = created.stdout.trim();
    await until(
      async () =>
        (await post('/ofrep/v1/evaluate/flags/banner', {}, { Authorization: `Bearer ${bound}` })).status === 200,
      'the new token to be known',
    );
    const answer = await post(
      '/ofrep/v1/evaluate/flags/api.key',
      { context: {} },
      { Authorization: '', 'X-API-Key': bound },
    );
    expect(await answer.json()).toMatchObject({ key: 'api.key', value: 'sk_live_1234', reason: 'DEFAULT' });
  });
});

describe('the OFREP endpoints over HTTP', () => {
  it('names the repository by the path prefix as well, and refuses a missing token as /rest/pull does', async () => {
    const answer = await post(`/openfeature/${REPO}/ofrep/v1/evaluate/flags/max-items`, {
      context: { Environment: 'Production' },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({
      key: 'max-items',
      value: 25,
      reason: 'TARGETING_MATCH',
      variant: 'Production;*;*',
      metadata: { commit: headOf(fixture.repos, REPO) },
    });
    const tokenless = await fetch(`${fixture.server.url}/openfeature/${REPO}/ofrep/v1/evaluate/flags/max-items`, {
      method: 'POST',
      body: '{}',
    });
    expect(tokenless.status).toBe(
      (await fetch(`${fixture.server.url}/rest/pull/${REPO}`, { headers: { Context: '*;*;*' } })).status,
    );
    expect((await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, { method: 'POST', body: '{}' })).status).toBe(
      401,
    );
  });

  it("answers the bulk evaluation with a content ETag, and 304 while the context's answer holds", async () => {
    const first = await post('/ofrep/v1/evaluate/flags', { context: { Environment: 'Production' } });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    const body = await first.json();
    expect(body.flags.map((f: { key: string }) => f.key)).toEqual([
      'api.key',
      'banner',
      'limits',
      'max-items',
      'new-checkout',
      'ratio',
    ]);
    expect(body.flags[0]).toMatchObject({ key: 'api.key', errorCode: 'GENERAL' });
    expect(
      (await post('/ofrep/v1/evaluate/flags', { context: { Environment: 'Production' } }, { 'If-None-Match': etag }))
        .status,
    ).toBe(304);
    // A push that changes what another context reads keeps this context's ETag.
    await pushOk([{ key: 'banner', values: [{ context: 'Development;*;*', value: 'Hello dev' }] }]);
    expect(
      (await post('/ofrep/v1/evaluate/flags', { context: { Environment: 'Production' } }, { 'If-None-Match': etag }))
        .status,
    ).toBe(304);
    expect(
      (await post('/ofrep/v1/evaluate/flags', { context: { Environment: 'Development' } }, { 'If-None-Match': etag }))
        .status,
    ).toBe(200);
  });

  it('answers a malformed body and an oversized one with a clear 4xx', async () => {
    const malformed = await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags/banner`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: '{not json',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ key: 'banner', errorCode: 'PARSE_ERROR' });
    const huge = await post('/ofrep/v1/evaluate/flags', { context: { pad: 'x'.repeat(100_000) } });
    expect(huge.status).toBe(413);
  });
});

describe('the web SDK with the OFREP web provider, as published (in Node)', () => {
  it('reads every flag at once, polls with If-None-Match, and sees a change after a push', async () => {
    await WebOpenFeature.setContext({ targetingKey: 'node-9', Environment: 'Production', Application: 'Billing' });
    const provider = new OFREPWebProvider({
      baseUrl: fixture.server.url,
      headers: [['Authorization', `Bearer ${token}`]],
      pollInterval: 100,
      cacheMode: 'disabled',
      disableVisibilityRefresh: true,
    });
    await WebOpenFeature.setProviderAndWait(provider);
    try {
      const web = WebOpenFeature.getClient();
      expect(web.getBooleanDetails('new-checkout', false)).toMatchObject({
        value: true,
        variant: 'Production;Billing;*',
        reason: 'TARGETING_MATCH',
      });
      expect(web.getNumberValue('max-items', 0)).toBe(25);
      const notModified = () =>
        fixture.server.logs.filter((line) => line.path === '/ofrep/v1/evaluate/flags' && line.status === 304).length;
      const before = notModified();
      await until(() => notModified() >= before + 2, 'the provider to poll and be answered 304');
      await pushOk([{ key: 'max-items', values: [{ context: 'Production;Billing;*', value: '40' }] }]);
      await until(() => web.getNumberValue('max-items', 0) === 40, 'the polling provider to see the new value');
    } finally {
      await WebOpenFeature.close();
    }
  });
});
