/**
 * Read replicas as an operator runs them: `cfghub serve` processes started with the real command
 * line, one primary and two `--replica-of` replicas; the primary killed outright (SIGKILL), a
 * replica promoted by the documented steps, the other re-pointed at it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, getJson, git, gitdirOf, headOf, pushTo, tempDir } from '../../support/harness.js';
import { eventually } from '../../support/replicas.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';

const APP = 'acme/app';
const dirs = { primary: tempDir(), a: tempDir(), b: tempDir() };
const running: ServerProcess[] = [];
let token: string;

const start = async (repos: string, primaryUrl?: string, ...extra: string[]) => {
  const server = await startServerProcess(
    repos,
    primaryUrl ? { CFGHUB_REPLICATION_TOKEN: token } : {},
    [],
    primaryUrl ? ['--replica-of', primaryUrl, ...extra] : [],
  );
  running.push(server);
  return server;
};
const push = (url: string, value: string) =>
  pushTo(url, `/rest/push/${APP}`, {
    enableKeyCreation: true,
    data: [{ key: 'feature.flag', values: [{ context: '*', value }] }],
  });
const serves = (url: string, value: string) =>
  eventually(
    `${url} serving ${value}`,
    async () => {
      const answer = await getJson(url, `/rest/pull/${APP}`, { Context: 'Prod' });
      return answer.status === 200 && answer.text.includes(value) ? answer : undefined;
    },
    15_000,
  );

beforeAll(() => {
  cliOk(dirs.primary.path, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull');
  token = cliOk(dirs.primary.path, 'token', 'create', '--replication').trim();
});

afterAll(async () => {
  for (const server of running) await server.kill();
  for (const dir of Object.values(dirs)) dir.remove();
});

describe('cfghub serve --replica-of', () => {
  it('refuses to start without a replication token or with a URL that is not one', () => {
    const noToken = cli(dirs.a.path, 'serve', '--port', '0', '--replica-of', 'http://127.0.0.1:1');
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('CFGHUB_REPLICATION_TOKEN');
    expect(cli(dirs.a.path, 'serve', '--port', '0', '--accept-new-primary').code).toBe(2);
    expect(cli(dirs.a.path, 'token', 'create', 'acme/app', '--replication').code).toBe(2);
  });

  it('follows a primary, forwards writes, survives the primary being killed, and fails over by the documented steps', async () => {
    const primary = await start(dirs.primary.path);
    let a = await start(dirs.a.path, primary.url);
    let b = await start(dirs.b.path, primary.url);

    const first = await push(a.url, 'one'); // sent to a replica: forwarded
    expect(first.status).toBe(200);
    for (const server of [primary, a, b]) await serves(server.url, 'one');
    const acknowledged = first.etag!.replace(/"/g, '');
    expect(headOf(dirs.primary.path, APP)).toBe(acknowledged);

    // A replica that has the data but has not yet finished its first round says `unknown`: wait for its confirmation.
    await eventually('B confirmed current', async () =>
      (await getJson(b.url, '/healthz')).headers.get('replica-lag') === 'unknown' ? undefined : true,
    );
    await primary.kill();
    const stale = await serves(b.url, 'one');
    expect(stale.headers.get('replica-lag')).toMatch(/^[0-9]+\.[0-9]$/);

    // Promote A: stop it, `cfghub promote` its folder (a replica's folder is not served as a
    // primary before), start a plain `cfghub serve` on it. Re-point B at A, accepting the new primary.
    await a.stop();
    const refused = cli(dirs.a.path, 'serve', '--port', '0');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('cfghub promote');
    expect(cliOk(dirs.a.path, 'promote').trim()).toBe('2');
    a = await start(dirs.a.path);
    await b.stop();
    b = await start(dirs.b.path, a.url, '--accept-new-primary');
    const second = await push(b.url, 'two'); // forwarded to the new primary
    expect(second.status).toBe(200);
    for (const server of [a, b]) await serves(server.url, 'two');
    const head = second.etag!.replace(/"/g, '');
    await eventually('B at the new head', () => (headOf(dirs.b.path, APP) === head ? true : undefined));
    git(gitdirOf(dirs.b.path, APP), 'merge-base', '--is-ancestor', acknowledged, head);
    git(gitdirOf(dirs.a.path, APP), 'fsck', '--strict');
  });
});
