/**
 * Revert and restore end to end: over REST and from the command line, each a
 * new commit made through the push's commit path, checked with the real git CLI (the commit and
 * its message in `git log`, history never rewritten, `git fsck` clean), refusals when later
 * commits conflict (naming the key or file, changing nothing), and the access rules of a push.
 */
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  cliOk,
  cliWithInput,
  commitCount,
  createOpenRepository,
  pushCommitted,
  git,
  gitdirOf,
  headOf,
  pushTo,
  serverForFile,
} from '../../support/harness.js';
import { expectJsonError, keyPath, plainGitCommit, read } from '../../support/reads.js';

const REPO = 'acme/roll';
const LOCKED = 'acme/locked';

const fixture = serverForFile();
let gitdir: string;

const pushOk = (comment: string, data: unknown[]) =>
  pushCommitted(fixture.server.url, `/rest/push/${REPO}`, { changeComment: comment, enableKeyCreation: true, data });

const set = (key: string, context: string, value: string) => ({ key, values: [{ context, value }] });

async function post(path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await fetch(`${fixture.server.url}${path}`, {
    method: 'POST',
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text ? JSON.parse(text) : undefined,
    etag: response.headers.get('etag')?.replace(/"/g, ''),
  };
}

/** The value of a key for a context at the head, as a pull sees it. */
async function valueOf(key: string, context = 'Production;web'): Promise<unknown> {
  const answer = await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: context });
  expect(answer.status, answer.text).toBe(200);
  return answer.json.properties[key]?.val;
}

/** `git fsck --strict` finds nothing. */
async function fsckClean(): Promise<void> {
  await fixture.server.settle(REPO);
  const result = spawnSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { encoding: 'utf8' });
  expect({ code: result.status, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
}

const isAncestor = (ancestor: string, of: string) =>
  spawnSync('git', ['--git-dir', gitdir, 'merge-base', '--is-ancestor', ancestor, of]).status === 0;

beforeAll(() => {
  createOpenRepository(fixture.repos, REPO);
  cliOk(fixture.repos, 'repo', 'create', LOCKED, '--context', 'Environment', '--token-free-pull');
  gitdir = gitdirOf(fixture.repos, REPO);
});

describe('POST /rest/revert', () => {
  it('makes a new commit that undoes one commit, with a message git log shows, keeping the history', async () => {
    await pushOk('Add the database', [set('db.host', 'Production;*', 'db1.prod'), set('db.port', '*;*', '5432')]);
    const bad = await pushOk('Move the database', [
      set('db.host', 'Production;*', 'db2.prod'),
      set('cache.ttl', '*;*', '60'),
    ]);
    const later = await pushOk('Unrelated', [set('log.level', '*;*', 'info')]);
    const count = commitCount(fixture.repos, REPO);

    const answer = await post(`/rest/revert/${REPO}`, { Commit: bad, 'Application-Name': 'ops-console' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.etag).toBe(headOf(fixture.repos, REPO));
    expect(commitCount(fixture.repos, REPO)).toBe(count + 1);
    expect(git(gitdir, 'rev-parse', `${answer.etag}^`).trim()).toBe(later);
    expect(isAncestor(bad, answer.etag!)).toBe(true);
    expect(git(gitdir, 'log', '-1', '--format=%B', answer.etag!)).toBe(
      `Revert "Move the database"\n\nThis reverts commit ${bad}.\n\nApplication-Name: ops-console\n\n`,
    );
    expect(await valueOf('db.host')).toBe('db1.prod');
    expect(await valueOf('cache.ttl')).toBeUndefined();
    expect(await valueOf('log.level')).toBe('info');
    // What the revert changed is the inverse of the commit, as history shows it.
    const [top] = (await read(fixture.server.url, `/rest/history/${REPO}`, { Limit: '1' })).json.commits;
    expect(top.keys.map((k: { key: string; change: string }) => `${k.change} ${k.key}`)).toEqual([
      'deleted cache.ttl',
      'modified db.host',
    ]);
    await fsckClean();
  });

  it('refuses with 409 naming the key and context when a later commit changed the same value, and changes nothing', async () => {
    const first = await pushOk('Set the pool', [set('pool.size', 'Production;*', '10')]);
    await pushOk('Grow the pool', [set('pool.size', 'Production;*', '20')]);
    const head = headOf(fixture.repos, REPO);
    const answer = await post(`/rest/revert/${REPO}`, { Commit: first });
    expect(expectJsonError(answer, 409)).toBe(
      `cannot revert commit ${first.slice(0, 12)}: key pool.size: its value for context Production;* was changed again by a later commit`,
    );
    expect(headOf(fixture.repos, REPO)).toBe(head);
    expect(await valueOf('pool.size')).toBe('20');
  });

  it('refuses to delete a key a later commit added values to, and a file a later commit changed', async () => {
    const created = await pushOk('Create feature flag', [
      set('feature.x', '*;*', 'off'),
      { file: 'conf/x.txt', context: '*;*', content: 'one\n' },
    ]);
    await pushOk('Flag for staging', [set('feature.x', 'Staging;*', 'on')]);
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: created }), 409)).toMatch(
      /key feature\.x: values were added to it by a later commit/,
    );
    await pushOk('Edit the file', [
      { key: 'feature.x', opp: 'delete' },
      { file: 'conf/x.txt', context: '*;*', content: 'two\n' },
    ]);
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: created }), 409)).toMatch(
      /file conf\/x\.txt \(context \*;\*\) was changed again by a later commit/,
    );
  });

  it('refuses a revert that would leave a template referencing a key that no longer exists', async () => {
    const key = await pushOk('Add the url', [set('api.url', '*;*', 'http://api')]);
    await pushOk('Use the url', [{ file: 'conf/api.properties', context: '*;*', content: 'url=${ api.url }\n' }]);
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: key }), 409)).toMatch(
      /file conf\/api\.properties: its template references key api\.url, which would no longer exist/,
    );
  });

  it('answers 200 with the head and makes no commit when the commit is already undone', async () => {
    const change = await pushOk('Set timeout', [set('timeout', '*;*', '5')]);
    const first = await post(`/rest/revert/${REPO}`, {}, { commit: change, changeComment: 'No timeout after all' });
    expect(first.status, first.text).toBe(200);
    expect(git(gitdir, 'log', '-1', '--format=%s', first.etag!).trim()).toBe('No timeout after all');
    const count = commitCount(fixture.repos, REPO);
    const again = await post(`/rest/revert/${REPO}`, { Commit: change });
    expect(again.status).toBe(200);
    expect(again.etag).toBe(first.etag);
    expect(commitCount(fixture.repos, REPO)).toBe(count);
  });

  it('reverts a commit made with plain git', async () => {
    await pushOk('Base', [set('edited', '*;*', 'original')]);
    const doc = git(gitdir, 'show', `refs/heads/main:${keyPath('edited')}`).replace(
      /value: .*original.*/,
      'value: by-hand',
    );
    const plain = plainGitCommit(gitdir, { [keyPath('edited')]: doc }, 'Edited by hand');
    expect(await valueOf('edited')).toBe('by-hand');
    expect((await post(`/rest/revert/${REPO}`, { Commit: plain })).status).toBe(200);
    expect(await valueOf('edited')).toBe('original');
  });

  it('refuses a malformed commit id (400), an unknown one (404), the first commit (409), and a commit that changed the settings (409)', async () => {
    expect(expectJsonError(await post(`/rest/revert/${REPO}`), 400)).toMatch(/Commit header/);
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: 'abc123' }), 400)).toMatch(
      /must be a commit id: 40 hex digits, or the first 7 or more/,
    );
    expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: 'b'.repeat(40) }), 404);
    const root = git(gitdir, 'rev-list', '--max-parents=0', 'refs/heads/main').trim();
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: root }), 409)).toMatch(
      /created the repository/,
    );
    const settings = git(gitdir, 'show', 'refs/heads/main:repository.yaml').replace(
      'description: ""',
      'description: edited',
    );
    const plain = plainGitCommit(gitdir, { 'repository.yaml': settings }, 'Describe it');
    expect(expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: plain }), 409)).toMatch(
      /changed repository\.yaml/,
    );
    expectJsonError(
      await post(`/rest/revert/${REPO}`, { 'Content-Type': 'application/json' }, { commit: root, colour: 'red' }),
      400,
    );
  });

  it('follows the access rules of a push', async () => {
    expectJsonError(await post(`/rest/revert/${LOCKED}`, { Commit: 'c'.repeat(40) }), 403);
    expectJsonError(await post('/rest/revert', { Commit: 'c'.repeat(40) }), 401);
    const token = cliOk(fixture.repos, 'token', 'create', LOCKED).trim();
    expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: 'c'.repeat(40), 'Client-Token': token }), 403);
    expectJsonError(await post('/rest/revert', { Commit: 'c'.repeat(40), 'Client-Token': token }), 404);
    // The token form: the token names the repository, and its label is recorded.
    const pushed = await pushTo(
      fixture.server.url,
      '/rest/push',
      { enableKeyCreation: true, data: [set('k', '*', 'v')] },
      { 'Client-Token': token },
    );
    expect(pushed.status).toBe(200);
    const reverted = await post('/rest/revert', { Commit: pushed.etag!.replace(/"/g, ''), 'Client-Token': token });
    expect(reverted.status, reverted.text).toBe(200);
    const locked = gitdirOf(fixture.repos, LOCKED);
    expect(git(locked, 'log', '-1', '--format=%B', reverted.etag!)).toBe(
      `Revert "Push: k"\n\nThis reverts commit ${pushed.etag!.replace(/"/g, '')}.\n\nToken: token-1\n\n`,
    );
    expect(git(locked, 'ls-tree', '-r', '--name-only', reverted.etag!).trim()).toBe('repository.yaml');
  });
});

describe('POST /rest/restore', () => {
  it('makes a new commit whose keys and files equal those of a tag; history stays', async () => {
    await pushOk('Before release', [
      set('release', '*;*', '1'),
      { file: 'conf/r.txt', context: '*;*', content: 'r1\n' },
    ]);
    cliOk(fixture.repos, 'tag', 'create', REPO, 'release-1');
    const tagged = headOf(fixture.repos, REPO);
    const after = await pushOk('After release', [
      set('release', '*;*', '2'),
      set('extra', '*;*', 'x'),
      { file: 'conf/r.txt', context: '*;*', active: false },
    ]);
    const answer = await post(`/rest/restore/${REPO}`, { To: 'release-1' });
    expect(answer.status, answer.text).toBe(200);
    expect(git(gitdir, 'rev-parse', `${answer.etag}^{tree}`).trim()).toBe(
      git(gitdir, 'rev-parse', `${tagged}^{tree}`).trim(),
    );
    expect(git(gitdir, 'rev-parse', `${answer.etag}^`).trim()).toBe(after);
    expect(git(gitdir, 'log', '-1', '--format=%B', answer.etag!)).toBe(
      `Restore release-1\n\nThis restores the keys and files of commit ${tagged}.\n\n`,
    );
    expect(await valueOf('release')).toBe('1');
    expect(await valueOf('extra')).toBeUndefined();
    await fsckClean();
  });

  it('makes no commit when the point is the current state, and 404 for a point that does not exist', async () => {
    const head = headOf(fixture.repos, REPO);
    const count = commitCount(fixture.repos, REPO);
    const same = await post(`/rest/restore/${REPO}`, {}, { to: 'release-1' });
    expect(same.status).toBe(200);
    expect(same.etag).toBe(head);
    expect(commitCount(fixture.repos, REPO)).toBe(count);
    expect(expectJsonError(await post(`/rest/restore/${REPO}`, { To: 'no-such-tag' }), 404)).toMatch(
      /no tag no-such-tag/,
    );
    expectJsonError(await post(`/rest/restore/${REPO}`), 400);
  });
});

describe('rollback when a commit made with plain git breaks the layout rules', () => {
  it('refuses a revert with 409 naming the file and commit, and restores the last good point away from it', async () => {
    const good = await pushOk('Last good state', [set('repair.me', '*;*', 'fine')]);
    const bad = plainGitCommit(gitdir, { [keyPath('broken')]: 'key: broken\nvalues: [\n' }, 'Broken by hand');
    expect((await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Production;web' })).status).not.toBe(200);
    const refused = await post(`/rest/revert/${REPO}`, { Commit: good });
    expect(expectJsonError(refused, 409)).toMatch(new RegExp(`${keyPath('broken')} at commit ${bad.slice(0, 12)}`));
    expect(headOf(fixture.repos, REPO)).toBe(bad);

    const restored = await post(`/rest/restore/${REPO}`, { To: good });
    expect(restored.status, restored.text).toBe(200);
    expect(git(gitdir, 'rev-parse', `${restored.etag}^`).trim()).toBe(bad);
    expect(git(gitdir, 'rev-parse', `${restored.etag}^{tree}`).trim()).toBe(
      git(gitdir, 'rev-parse', `${good}^{tree}`).trim(),
    );
    expect(await valueOf('repair.me')).toBe('fine');
    await fsckClean();
  });
});

describe('cfghub revert and cfghub restore', () => {
  it('revert prints the new commit, which git log shows; a conflict is exit 1 with the reason', async () => {
    const change = await pushOk('CLI target', [set('cli.key', '*;*', 'a')]);
    const out = JSON.parse(cliOk(fixture.repos, 'revert', REPO, change, '--comment', 'Undo from the CLI'));
    expect(out).toEqual({ commit: headOf(fixture.repos, REPO), outcome: 'applied' });
    expect(git(gitdir, 'log', '-1', '--format=%B', out.commit)).toBe(
      `Undo from the CLI\n\nThis reverts commit ${change}.\n\nApplication-Name: cfghub-cli\n\n`,
    );
    expect(await valueOf('cli.key')).toBeUndefined();

    const first = await pushOk('v1', [set('cli.conflict', '*;*', '1')]);
    await pushOk('v2', [set('cli.conflict', '*;*', '2')]);
    const refused = cli(fixture.repos, 'revert', REPO, first);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^cfghub: cannot revert commit [0-9a-f]{12}: key cli\.conflict: its value for context \*;\* was changed again by a later commit\n$/,
    );
    expect(cli(fixture.repos, 'revert', REPO, 'nope').code).toBe(2);
  });

  it('restore goes back to a commit id, and the server sees it at once', async () => {
    const point = headOf(fixture.repos, REPO);
    await pushOk('Change after point', [set('cli.restore', '*;*', 'new')]);
    // Awaited as a child process: a synchronous run would block this process, whose server the
    // command's own request and the next fetch need.
    const run = await cliWithInput(fixture.repos, '', 'restore', REPO, point);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.outcome).toBe('applied');
    expect(git(gitdir, 'rev-parse', `${out.commit}^{tree}`).trim()).toBe(
      git(gitdir, 'rev-parse', `${point}^{tree}`).trim(),
    );
    expect(await valueOf('cli.restore')).toBeUndefined();
    await fsckClean();
  });
});
