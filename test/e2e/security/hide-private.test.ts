/**
 * `serve --hide-private`: the listing shows a private repository only to a
 * caller holding a token of it, and a read (or push, or clone) of a private repository without one
 * answers exactly as an unknown repository does. Without the option the seed's listing of every
 * repository stays. The real server, real repositories, the real `cfghub` command and real git.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, cliWithInput, pushTo, startTestServer, tempDir, type TestServer } from '../../support/harness.js';
import { gitAsync } from '../../support/gitCli.js';
import { read } from '../../support/reads.js';

let dir: ReturnType<typeof tempDir>;
let plain: TestServer;
let hiding: TestServer;
let hiddenToken: string;
let openToken: string;

beforeAll(async () => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', 'acme/open', '--context', 'Environment', '--token-free-pull', '--token-free-push');
  cliOk(
    dir.path,
    'repo',
    'create',
    'acme/hidden',
    '--context',
    'Environment',
    '--private',
    '--token-free-pull',
    '--token-free-push',
  );
  hiddenToken = cliOk(dir.path, 'token', 'create', 'acme/hidden', '--name', 'reader').trim();
  openToken = cliOk(dir.path, 'token', 'create', 'acme/open', '--name', 'reader').trim();
  plain = await startTestServer(dir.path);
  hiding = await startTestServer(dir.path, { hidePrivate: true });
  const pushed = await pushTo(
    hiding.url,
    '/rest/push',
    { enableKeyCreation: true, data: [{ key: 'k', values: [{ context: '*', value: 'v' }] }] },
    { 'Client-Token': hiddenToken },
  );
  expect(pushed.status).toBe(200);
});

afterAll(async () => {
  await plain?.close();
  await hiding?.close();
  dir?.remove();
});

const names = async (url: string, headers: Record<string, string> = {}) => {
  const answer = await read(url, '/rest/info/all', headers);
  expect(answer.status).toBe(200);
  return answer.json.map((r: { account: string; name: string }) => `${r.account}/${r.name}`);
};

/** The answer with the repository's name taken out, to compare a hidden one with an unknown one. */
const shape = (answer: { status: number; json: any }, name: string) => ({
  status: answer.status,
  body: JSON.stringify(answer.json).replaceAll(name, 'NAME'),
});

describe('serve --hide-private', () => {
  it("without the option, the listing shows every repository (the seed's default)", async () => {
    expect(await names(plain.url)).toEqual(['acme/hidden', 'acme/open']);
  });

  it('lists a private repository only to a caller holding a token of it', async () => {
    expect(await names(hiding.url)).toEqual(['acme/open']);
    expect(await names(hiding.url, { 'Client-Token': openToken })).toEqual(['acme/open']);
    expect(await names(hiding.url, { 'Client-Token': hiddenToken })).toEqual(['acme/hidden', 'acme/open']);
  });

  it('answers a read of a private repository without its token exactly as an unknown repository', async () => {
    for (const endpoint of ['pull', 'info', 'export', 'history', 'diff']) {
      const headers = { Context: 'Prod', From: '2000-01-01T00:00:00Z' };
      const unknown = shape(await read(hiding.url, `/rest/${endpoint}/acme/nosuch`, headers), 'acme/nosuch');
      expect(unknown.status, endpoint).toBe(404);
      for (const extra of [{}, { 'Client-Token': openToken }, { 'Client-Token': 'cfg_not-a-token' }] as Record<
        string,
        string
      >[]) {
        expect(
          shape(await read(hiding.url, `/rest/${endpoint}/acme/hidden`, { ...headers, ...extra }), 'acme/hidden'),
          endpoint,
        ).toEqual(unknown);
      }
      // Spelled in another case, the name in the answer is the request's, as for an unknown one.
      expect(shape(await read(hiding.url, `/rest/${endpoint}/ACME/Hidden`, headers), 'ACME/Hidden'), endpoint).toEqual(
        unknown,
      );
    }
    const withToken = await read(hiding.url, '/rest/pull/acme/hidden', {
      Context: 'Prod',
      'Client-Token': hiddenToken,
    });
    expect(withToken.status).toBe(200);
    expect(withToken.json.properties.k).toEqual({ val: 'v' });
    // Without the option the private repository is a 401 (it exists, a token is needed).
    expect((await read(plain.url, '/rest/pull/acme/hidden', { Context: 'Prod' })).status).toBe(401);
  });

  it('answers a push without its token as for an unknown repository', async () => {
    const body = { data: [{ key: 'k', values: [{ context: '*', value: 'x' }] }] };
    const unknown = await pushTo(hiding.url, '/rest/push/acme/nosuch', body);
    const hidden = await pushTo(hiding.url, '/rest/push/acme/hidden', body);
    expect(unknown.status).toBe(404);
    expect(shape(hidden, 'acme/hidden')).toEqual(shape(unknown, 'acme/nosuch'));
  });

  it('keeps public repositories readable without a token', async () => {
    expect((await read(hiding.url, '/rest/pull/acme/open', { Context: 'Prod' })).status).toBe(200);
  });

  it('git: a clone without a token gets the same challenge as an unknown repository; with its token it clones', async () => {
    const unknown = await fetch(`${hiding.url}/git/acme/nosuch.git/info/refs?service=git-upload-pack`);
    const hidden = await fetch(`${hiding.url}/git/acme/hidden.git/info/refs?service=git-upload-pack`);
    expect(unknown.status).toBe(401);
    expect(hidden.status).toBe(401);
    expect((await hidden.text()).replaceAll('acme/hidden', 'NAME')).toBe(
      (await unknown.text()).replaceAll('acme/nosuch', 'NAME'),
    );
    const url = new URL(`${hiding.url}/git/acme/hidden.git`);
    url.username = 'ci';
    url.password = hiddenToken;
    // Asynchronous: git talks to the server in this very process.
    const cloned = await gitAsync(['clone', '--quiet', url.toString(), 'clone'], {
      cwd: dir.path,
      env: { GIT_TERMINAL_PROMPT: '0' },
    });
    expect(cloned.code, cloned.stderr).toBe(0);
    const refused = await gitAsync(['clone', '--quiet', `${hiding.url}/git/acme/hidden.git`, 'refused'], {
      cwd: dir.path,
      env: { GIT_TERMINAL_PROMPT: '0' },
    });
    expect(refused.code).not.toBe(0);
  });

  it('is a documented option of cfghub serve', async () => {
    expect((await cliWithInput(dir.path, '', 'serve', '--help')).stdout).toMatch(/--hide-private/);
  });
});
