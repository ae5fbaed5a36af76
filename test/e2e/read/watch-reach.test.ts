/**
 * A held watch whose answer a push may change is answered, however the change reaches its
 * context: the watch makes the answers only of the contexts a push's changes can reach
 * (service/answers/changeReach.ts, domain/keyReach.ts), and these are the ways a change reaches a context
 * other than a value of that very context: a wildcard value, a value of a context group holding
 * the context's item, a change of the context groups themselves, a key's own fields, a value
 * removed so that a wider one wins, and a key going that a template names (the template lists an
 * unresolved key by its name as stored, a missing one as the template writes it). Where a case
 * also holds a watcher the push does not reach, that one stays held and its answer is not made:
 * the test fails both if the reach is too narrow and if it is not narrowed at all. The real
 * server, real bare repositories, and the real git CLI.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliOk, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { metricOf } from '../../support/reads.js';
import { gitEnv } from '../../support/gitCli.js';
import { until } from '../../support/poll.js';

const fixture = serverForFile();
let seq = 0;

const metric = (name: string) => metricOf(fixture.server.url, name);

function newRepository(...extra: string[]): string {
  const repo = `acme/reach${++seq}`;
  cliOk(
    fixture.repos,
    'repo',
    'create',
    repo,
    '--context',
    'Env,App',
    '--token-free-pull',
    '--token-free-push',
    ...extra,
  );
  return repo;
}

async function pushOk(repo: string, data: unknown[]): Promise<void> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
    changeComment: 'reach',
    enableKeyCreation: true,
    data,
  });
  expect(answer.status, reasonOf(answer)).toBe(200);
}

interface Watch {
  done: boolean;
  status?: number;
  etag?: string | null;
  text?: string;
}

/** Reads the context's answer, then holds a watch of it (If-None-Match and Wait) until it is held. */
async function watch(repo: string, context: string, headers: Record<string, string> = {}): Promise<Watch> {
  const url = `${fixture.server.url}/rest/pull/${repo}`;
  const first = await fetch(url, { headers: { Context: context, ...headers } });
  await first.text();
  const held = await metric('cfghub_watchers');
  const watcher: Watch = { done: false };
  void fetch(url, {
    headers: { Context: context, ...headers, 'If-None-Match': first.headers.get('etag')!, Wait: '60' },
  }).then(async (response) => {
    Object.assign(watcher, {
      status: response.status,
      etag: response.headers.get('etag'),
      text: await response.text(),
      done: true,
    });
  });
  await until(async () => (await metric('cfghub_watchers')) === held + 1, 'the watch held');
  return watcher;
}

/** Pushes, then waits for `reached` to be answered with the answer a read now gives; `unreached` stays held, its answer not made. */
async function expectReach(
  repo: string,
  data: unknown[],
  reached: { watcher: Watch; context: string; headers?: Record<string, string> },
  unreached: Watch,
): Promise<void> {
  const made = await metric('cfghub_watch_answers_made_total');
  await pushOk(repo, data);
  await until(() => reached.watcher.done, 'the reached watcher answered');
  expect(reached.watcher.status).toBe(200);
  const now = await fetch(`${fixture.server.url}/rest/pull/${repo}`, {
    headers: { Context: reached.context, ...reached.headers },
  });
  expect(reached.watcher.text).toBe(await now.text());
  expect(reached.watcher.etag).toBe(now.headers.get('etag'));
  expect(unreached.done).toBe(false);
  // One answer made by the wake: the reached context's, not the other's.
  expect((await metric('cfghub_watch_answers_made_total')) - made).toBe(1);
}

describe('a watch is answered whenever a push may change its answer', () => {
  it('by a wildcard value of a key that has values for other contexts', async () => {
    const repo = newRepository();
    await pushOk(repo, [
      {
        key: 'url',
        values: [
          { context: '*;*', value: 'global' },
          { context: 'Prod;*', value: 'prod' },
        ],
      },
    ]);
    const dev = await watch(repo, 'Dev;web');
    const prod = await watch(repo, 'Prod;web');
    await expectReach(
      repo,
      [{ key: 'url', values: [{ context: '*;*', value: 'global-2' }] }],
      { watcher: dev, context: 'Dev;web' },
      prod,
    );
    expect(JSON.parse(dev.text!).properties.url.val).toBe('global-2');
  });

  it('by a value removed from its context, so that a wider one wins', async () => {
    const repo = newRepository();
    await pushOk(repo, [
      {
        key: 'url',
        values: [
          { context: '*;*', value: 'global' },
          { context: 'Prod;*', value: 'prod' },
          { context: 'Test;*', value: 'test' },
        ],
      },
    ]);
    const prod = await watch(repo, 'Prod;web');
    const test = await watch(repo, 'Test;web');
    await expectReach(
      repo,
      [{ key: 'url', values: [{ context: 'Prod;*', opp: 'delete' }] }],
      { watcher: prod, context: 'Prod;web' },
      test,
    );
    expect(JSON.parse(prod.text!).properties.url.val).toBe('global');
  });

  it("by a change of the key's own fields, its values unchanged", async () => {
    const repo = newRepository();
    await pushOk(repo, [{ key: 'url', values: [{ context: 'Prod;*', value: 'prod' }] }]);
    const prod = await watch(repo, 'Prod;web');
    const test = await watch(repo, 'Test;web'); // url resolves nothing there: its fields are not read
    await expectReach(
      repo,
      [{ key: 'url', deprecated: true, values: [] }],
      { watcher: prod, context: 'Prod;web' },
      test,
    );
    expect(JSON.parse(prod.text!).properties.url).toMatchObject({ deprecated: true, val: 'prod' });
  });

  it('by a value of a context group that holds its item, and by a change of the groups', async () => {
    const repo = newRepository('--context-groups');
    cliOk(fixture.repos, 'context-group', 'create', repo, 'App', 'Frontends', 'web');
    await pushOk(repo, [
      {
        key: 'url',
        values: [
          { context: '*;*', value: 'global' },
          { context: '*;Frontends', value: 'front' },
        ],
      },
    ]);
    const web = await watch(repo, 'Prod;web');
    const api = await watch(repo, 'Prod;api');
    await expectReach(
      repo,
      [{ key: 'url', values: [{ context: '*;Frontends', value: 'front-2' }] }],
      { watcher: web, context: 'Prod;web' },
      api,
    );
    expect(JSON.parse(web.text!).properties.url.val).toBe('front-2');

    // The groups change: api joins Frontends, and its answer with it. No push: a commit of the command.
    cliOk(fixture.repos, 'context-group', 'add', repo, 'App', 'Frontends', 'api');
    await until(() => api.done, 'the watcher of a new member answered');
    expect(JSON.parse(api.text!).properties.url.val).toBe('front-2');
  });

  it('by a key going, by plain git, that a template of its context names and that resolves nothing there', async () => {
    const repo = newRepository();
    await pushOk(repo, [
      { key: 'DB.Host', values: [{ context: 'Dev;*', value: 'dev-db' }] },
      { file: 'app.conf', context: '*;*', content: 'host=${ db.host }\n' },
    ]);
    const noProps = { 'No-Properties': 'true' };
    const before = await (
      await fetch(`${fixture.server.url}/rest/pull/${repo}`, { headers: { Context: 'Prod;web', ...noProps } })
    ).json();
    expect(before.files['app.conf'].unresolved).toEqual(['DB.Host']); // named as stored
    const prod = await watch(repo, 'Prod;web', noProps);
    // Removed with plain git (a push may not leave a template naming a missing key): Prod still
    // resolves nothing, but its template now names the key as the template writes it.
    const clone = join(fixture.repos, `clone${seq}`);
    execFileSync('git', ['clone', '--quiet', gitdirOf(fixture.repos, repo), clone], { env: gitEnv(), stdio: 'pipe' });
    const keyFile = execFileSync('git', ['ls-files', 'keys'], { cwd: clone, encoding: 'utf8' })
      .split('\n')
      .find((f) => f.endsWith('/db.host.yaml'))!;
    execFileSync('git', ['rm', '--quiet', keyFile], { cwd: clone, env: gitEnv() });
    execFileSync(
      'git',
      ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '--quiet', '-m', 'by hand'],
      { cwd: clone, env: gitEnv() },
    );
    execFileSync('git', ['push', '--quiet', 'origin', 'HEAD:main'], { cwd: clone, env: gitEnv(), stdio: 'pipe' });
    await until(() => prod.done, 'the watcher of the template answered');
    expect(prod.status).toBe(200);
    expect(JSON.parse(prod.text!).files['app.conf'].unresolved).toEqual(['db.host']);
  });
});
