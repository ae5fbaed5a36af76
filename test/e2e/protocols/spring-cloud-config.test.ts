/**
 * Spring Cloud Config Server–compatible reads under /spring, read by the published Node clients
 * as they are (`cloud-config-client`, and `spring-cloud-config`, which loads through its fork
 * `nice-cloud-config-client`): values for a context, a tag, a secret sealed and opened, an unknown
 * application, and an answer that changes after a push; plus the Environment document's shape and
 * order, the `.yml`/`.properties`/`.json` documents, the label form and the rendered file route,
 * checked over plain HTTP. The real server on a loopback port, real bare repositories.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import cloudConfigClient from 'cloud-config-client';
import {
  cliOk,
  cliWithInput,
  git,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  serverForFile,
  tempDir,
} from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/shop';
const APPLICATION = 'acme.shop';
const PASSWORD = 'correct-horse-battery';
const SECRET = 'Pr0d-DB-s3cret-value';

const fixture = serverForFile();
let token: string;
let secretsToken: string;
let endpoint: string;

async function pushOk(data: unknown[], comment = 'spring'): Promise<void> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { changeComment: comment, enableKeyCreation: true, data },
    { 'Client-Token': token },
  );
  expect(answer.status, `push refused: ${reasonOf(answer)}`).toBe(200);
}

const load = (options: Record<string, unknown>) =>
  cloudConfigClient.load({ endpoint, name: APPLICATION, auth: { user: 'app', pass: token }, ...options } as Parameters<
    typeof cloudConfigClient.load
  >[0]);

beforeAll(async () => {
  endpoint = `${fixture.server.url}/spring`;
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application,Instance');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'shop-reader').trim();
  const group = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', REPO, 'secrets');
  expect(group.code, group.stderr).toBe(0);
  const bound = await cliWithInput(
    fixture.repos,
    `${PASSWORD}\n`,
    'token',
    'create',
    REPO,
    '--name',
    'shop-secrets',
    '--security-group',
    'secrets',
  );
  expect(bound.code, bound.stderr).toBe(0);
  secretsToken = bound.stdout.trim();
  await pushOk([
    {
      key: 'server.port',
      vdt: 'Integer',
      values: [
        { context: '*;*;*', value: '8080' },
        { context: 'Production;*;*', value: '9090' },
      ],
    },
    {
      key: 'greeting',
      values: [
        { context: '*;*;*', value: 'hello' },
        { context: 'Production;Billing;*', value: 'hello billing' },
      ],
    },
    {
      key: 'feature.enabled',
      vdt: 'Boolean',
      values: [
        { context: '*;*;*', value: 'false' },
        { context: 'Production;Billing;node-7', value: 'true' },
      ],
    },
    { key: 'db.password', securityGroup: 'secrets', password: PASSWORD, values: [{ context: '*;*;*', value: SECRET }] },
    { file: 'conf/app.conf', context: '*;*;*', content: 'port=${ server.port }\n' },
  ]);
});

describe('cloud-config-client, as published', () => {
  it('reads the values resolved for the profiles (the context items in level order)', async () => {
    const config = await load({ profiles: ['Production', 'Billing'] });
    expect(config.get('server.port')).toBe(9090);
    expect(config.get('greeting')).toBe('hello billing');
    expect(config.get('feature.enabled')).toBe(false);
    const instance = await load({ profiles: 'Production,Billing,node-7' });
    expect(instance.get('feature.enabled')).toBe(true);
    // No profile (the client sends Spring's "default"): every level is *.
    const plain = await load({});
    expect(plain.get('server.port')).toBe(8080);
    expect(plain.get('greeting')).toBe('hello');
  });

  it('reads a tag as the label, and the head again without one', async () => {
    cliOk(fixture.repos, 'tag', 'create', REPO, 'v1', '--comment', 'before the greeting changed');
    const tagged = headOf(fixture.repos, REPO);
    await pushOk([{ key: 'greeting', values: [{ context: '*;*;*', value: 'hello again' }] }]);
    const old = await load({ label: 'v1' });
    expect(old.get('greeting')).toBe('hello');
    const now = await load({});
    expect(now.get('greeting')).toBe('hello again');
    const environment = await read(endpoint, `/${APPLICATION}/default/v1`, { Authorization: `Bearer ${token}` });
    expect(environment.json).toMatchObject({ name: APPLICATION, profiles: ['default'], label: 'v1', version: tagged });
    // A commit id (short or full) is a label too.
    expect((await load({ label: tagged.slice(0, 10) })).get('greeting')).toBe('hello');
  });

  it('reads a date as the label: the last commit at or before it', async () => {
    const before = headOf(fixture.repos, REPO);
    const greeting = (await load({})).get('greeting');
    const second = Number(git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%ct', before).trim());
    // Commit times are in seconds: the next commit must fall in a later second than the date asked.
    await until(() => Math.floor(Date.now() / 1000) > second, 'the clock to pass the head commit second');
    await pushOk([{ key: 'greeting', values: [{ context: '*;*;*', value: 'hello by date' }] }]);
    const date = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    expect((await load({ label: date })).get('greeting')).toBe(greeting);
    const environment = await read(endpoint, `/${APPLICATION}/default/${date}`, { Authorization: `Bearer ${token}` });
    expect(environment.json).toMatchObject({ label: date, version: before });
    expect((await load({})).get('greeting')).toBe('hello by date');
    // A date before the repository's first commit names no point.
    expectJsonError(
      await read(endpoint, `/${APPLICATION}/default/2001-01-01T00:00:00Z`, { Authorization: `Bearer ${token}` }),
      404,
    );
    // What the later cases read.
    await pushOk([{ key: 'greeting', values: [{ context: '*;*;*', value: greeting }] }]);
  });

  it('leaves a secret out without its group, and reads it with a token bound to the group or its password', async () => {
    const sealed = await load({});
    expect(sealed.get('db.password')).toBeUndefined();
    const raw = await read(endpoint, `/${APPLICATION}/default`, { Authorization: `Bearer ${token}` });
    expect(raw.text).not.toContain(SECRET);
    expect(raw.text).not.toContain('enc:v1');
    const opened = await load({ auth: { user: 'app', pass: secretsToken } });
    expect(opened.get('db.password')).toBe(SECRET);
    const withPassword = await load({ headers: { 'Security-Profile-Auth': JSON.stringify({ secrets: PASSWORD }) } });
    expect(withPassword.get('db.password')).toBe(SECRET);
  });

  it('fails on an unknown application (404), and without a token or with one of another repository as /rest/pull does', async () => {
    await expect(load({ name: 'acme.nothing' })).rejects.toThrow('Invalid response: 404');
    await expect(load({ name: 'nodots' })).rejects.toThrow('Invalid response: 404');
    const tokenless = await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: '*;*;*' });
    expect(tokenless.status).toBe(403);
    await expect(load({ auth: undefined })).rejects.toThrow(`Invalid response: ${tokenless.status}`);
    cliOk(fixture.repos, 'repo', 'create', 'acme/other', '--context', 'Environment');
    const other = cliOk(fixture.repos, 'token', 'create', 'acme/other').trim();
    // The server learns of a token written by another process through a file watch: wait until it knows this one.
    await until(
      async () =>
        (await read(fixture.server.url, '/rest/pull/acme/other', { 'Client-Token': other, Context: '*' })).status ===
        200,
      'the new token to be known',
    );
    await expect(load({ auth: { user: 'app', pass: other } })).rejects.toThrow('Invalid response: 403');
    expectJsonError(await read(endpoint, `/acme.nothing/default`, { Authorization: `Bearer ${token}` }), 404);
  });

  it('reads the new answer after a push', async () => {
    const before = await load({ profiles: ['Production'] });
    expect(before.get('server.port')).toBe(9090);
    await pushOk([{ key: 'server.port', values: [{ context: 'Production;*;*', value: '9443' }] }]);
    const after = await load({ profiles: ['Production'] });
    expect(after.get('server.port')).toBe(9443);
  });
});

describe('spring-cloud-config, as published', () => {
  it("loads bootstrap.yml and application.yml, overriding local values with the server's", async () => {
    const folder = tempDir();
    try {
      mkdirSync(join(folder.path, 'config'));
      writeFileSync(
        join(folder.path, 'config', 'bootstrap.yml'),
        [
          'spring:',
          '  cloud:',
          '    config:',
          '      enabled: true',
          '      fail-fast: true',
          `      endpoint: ${endpoint}`,
          `      name: ${APPLICATION}`,
          '      auth:',
          '        user: app',
          `        pass: ${token}`,
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(folder.path, 'config', 'application.yml'),
        ['greeting: local', 'local.only: kept', ''].join('\n'),
      );
      const { default: springCloudConfig } = await import('spring-cloud-config');
      const config = (await springCloudConfig.load({
        configPath: join(folder.path, 'config'),
        activeProfiles: ['Production', 'Billing'],
        level: 'error',
      })) as any;
      expect(config.server.port).toBe(9443);
      expect(config.greeting).toBe('hello billing');
      expect(config.local.only).toBe('kept');
      expect(config.db?.password).toBeUndefined();
    } finally {
      folder.remove();
    }
  });
});

describe('the Spring endpoints over HTTP', () => {
  const auth = () => ({ Authorization: `Basic ${Buffer.from(`app:${token}`).toString('base64')}` });

  it('answers the Environment with one property source per winning context, most specific first', async () => {
    const answer = await read(endpoint, `/${APPLICATION}/Production,Billing,node-7`, auth());
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const head = headOf(fixture.repos, REPO);
    expect(answer.headers.get('commit')).toBe(head);
    const body = answer.json;
    expect(body).toMatchObject({
      name: APPLICATION,
      profiles: ['Production', 'Billing', 'node-7'],
      label: null,
      version: head,
      state: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(body.propertySources.map((s: { name: string }) => s.name)).toEqual([
      `cfghub:${REPO}@${head}#Production;Billing;node-7`,
      `cfghub:${REPO}@${head}#Production;Billing;*`,
      `cfghub:${REPO}@${head}#Production;*;*`,
    ]);
    expect(body.propertySources.map((s: { source: unknown }) => s.source)).toEqual([
      { 'feature.enabled': true },
      { greeting: 'hello billing' },
      { 'server.port': 9443 },
    ]);
    // Without a profile, one source: the values stored for *;*;*, the secret left out.
    const plain = await read(endpoint, `/${APPLICATION}/default`, auth());
    expect(plain.json.propertySources).toEqual([
      {
        name: `cfghub:${REPO}@${head}#*;*;*`,
        source: { 'feature.enabled': false, greeting: 'hello again', 'server.port': 8080 },
      },
    ]);
  });

  it('answers the .yml, .properties and .json documents, with and without a label', async () => {
    const yml = await read(endpoint, `/${APPLICATION}-Production.yml`, auth());
    expect(yml.status).toBe(200);
    expect(yml.text).toContain('server.port: "9443"');
    const properties = await read(endpoint, `/v1/${APPLICATION}-Production.properties`, auth());
    expect(properties.text).toContain('server.port=9090\n');
    expect(properties.text).toContain('greeting=hello\n');
    const json = await read(endpoint, `/${APPLICATION}-Production.json`, auth());
    expect(json.json).toMatchObject({ 'server.port': 9443, greeting: 'hello again', 'feature.enabled': false });
    expect(json.json['db.password']).toBeUndefined();
  });

  it('answers a file rendered for the context, at a label', async () => {
    const file = await read(endpoint, `/${APPLICATION}/Production/main/conf/app.conf`, auth());
    expect(file.status).toBe(200);
    expect(file.text).toBe('port=9443\n');
    expect((await read(endpoint, `/${APPLICATION}/Production/v1/conf/app.conf`, auth())).text).toBe('port=9090\n');
    expectJsonError(await read(endpoint, `/${APPLICATION}/Production/main/conf/none.conf`, auth()), 404);
  });

  it('refuses more profiles than levels, a malformed one, and an unknown label with a clear 4xx', async () => {
    expectJsonError(await read(endpoint, `/${APPLICATION}/a,b,c,d`, auth()), 400);
    expectJsonError(await read(endpoint, `/${APPLICATION}/bad%20item`, auth()), 400);
    expectJsonError(await read(endpoint, `/${APPLICATION}/default/nosuchtag`, auth()), 404);
    expectJsonError(await read(endpoint, `/${APPLICATION}/default/%E0%A4%A`, auth()), 400);
  });
});
