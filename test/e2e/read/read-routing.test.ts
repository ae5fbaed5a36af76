/**
 * How the read endpoints, served without express (src/http/routes/readRoutes.ts), are reached: paths
 * without regard to case and with a final slash, HEAD, every answer with a request id and a UTF-8
 * content type, malformed URLs answered 400, other methods and near-miss paths left to the rest of
 * the server; and the registry's memory of found repositories never outlives them on disk.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cliOk, gitdirOf, jsonOrUndefined, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const REPO = 'acme/app';
const CONTEXT = { Context: 'Prod;web' };
const fixture = serverForFile();

beforeAll(async () => {
  for (const repo of [REPO, 'acme/gone', 'acme/moved', 'other/target']) {
    cliOk(
      fixture.repos,
      'repo',
      'create',
      repo,
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
  }
  for (const repo of [REPO, 'acme/gone', 'acme/moved', 'other/target']) {
    const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
      enableKeyCreation: true,
      data: [{ key: 'who', values: [{ context: '*;*', value: repo }] }],
    });
    expect(answer.status, reasonOf(answer)).toBe(200);
  }
});

describe('reaching the read endpoints', () => {
  it('matches paths without regard to case, with or without a final slash, with a query string', async () => {
    for (const path of [
      '/rest/pull/acme/app',
      '/REST/Pull/acme/app',
      '/rest/pull/ACME/APP/',
      '/rest/pull/acme/app?x=1',
    ]) {
      const answer = await read(fixture.server.url, path, CONTEXT);
      expect(answer.status, path).toBe(200);
      expect(answer.json.properties.who.val).toBe(REPO);
    }
  });

  it('answers with a request id, an ETag and a UTF-8 content type', async () => {
    const answer = await read(fixture.server.url, '/rest/pull/acme/app', { ...CONTEXT, 'X-Request-Id': 'trace-42' });
    expect(answer.headers.get('x-request-id')).toBe('trace-42');
    expect(answer.headers.get('etag')).toMatch(/^"[0-9a-f]{40}"$/);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(answer.text));
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await read(fixture.server.url, '/rest/pull/acme/app', CONTEXT);
    const response = await fetch(`${fixture.server.url}/rest/pull/acme/app`, { method: 'HEAD', headers: CONTEXT });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(get.headers.get('etag'));
    expect(response.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await response.text()).toBe('');
  });

  it('answers a malformed percent-encoding in the path with 400', async () => {
    const message = expectJsonError(await read(fixture.server.url, '/rest/pull/acme/%E0%A4%A'), 400);
    expect(message).toMatch(/percent-encoding/);
  });

  it('decodes percent-encoded names', async () => {
    expect((await read(fixture.server.url, '/rest/pull/%61cme/app', CONTEXT)).status).toBe(200);
  });

  it('leaves other methods and near-miss paths to the rest of the server', async () => {
    const post = await fetch(`${fixture.server.url}/rest/pull/acme/app`, { method: 'POST', headers: CONTEXT });
    const text = await post.text();
    expectJsonError({ status: post.status, headers: post.headers, text, json: jsonOrUndefined(text) }, 404);
    for (const path of ['/rest/pull/acme', '/rest/pull/acme/app/extra', '/rest/pulls/acme/app']) {
      expectJsonError(await read(fixture.server.url, path, CONTEXT), 404);
    }
    // The listing is no read endpoint with the account "all".
    expect(
      (await read(fixture.server.url, '/rest/info/all')).json.map((r: { account: string }) => r.account),
    ).toContain('acme');
  });
});

describe('repositories found before', () => {
  it('are not found once their folder is gone', async () => {
    expect((await read(fixture.server.url, '/rest/pull/acme/gone', CONTEXT)).status).toBe(200);
    rmSync(gitdirOf(fixture.repos, 'acme/gone'), { recursive: true, force: true });
    expectJsonError(await read(fixture.server.url, '/rest/pull/acme/gone', CONTEXT), 404);
  });

  it('are not followed through a symbolic link that replaced their folder', async () => {
    expect((await read(fixture.server.url, '/rest/pull/acme/moved', CONTEXT)).status).toBe(200);
    const gitdir = gitdirOf(fixture.repos, 'acme/moved');
    renameSync(gitdir, join(fixture.repos, 'elsewhere.git'));
    symlinkSync(gitdirOf(fixture.repos, 'other/target'), gitdir);
    const answer = await read(fixture.server.url, '/rest/pull/acme/moved', CONTEXT);
    expectJsonError(answer, 404);
    expect(answer.text).not.toContain('other/target');
  });
});
