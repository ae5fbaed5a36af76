/**
 * A tree object whose bytes are not a tree, committed with plain git (`hash-object --literally`
 * writes what git's own checks would refuse): a pull and a push of the repository answer 409
 * repository_damaged naming the repository and the commit, never a 500; its history still
 * answers, with the damaged commit's problem in it; other repositories go on serving. The real server, a real bare repository, the real git CLI.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, gitdirOf, pushTo, serverForFile } from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const fixture = serverForFile();
let damagedCommit: string;
const REPO = 'acme/broken';

function git(gitdir: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', '--git-dir', gitdir, ...args],
    { encoding: 'utf8' },
  ).trim();
}

beforeAll(async () => {
  for (const repo of [REPO, 'acme/fine']) {
    cliOk(fixture.repos, 'repo', 'create', repo, '--context', 'Environment', '--token-free-push', '--token-free-pull');
    const pushed = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
      changeComment: 'one key',
      enableKeyCreation: true,
      data: [{ key: 'a.b', values: [{ context: '*', value: 'v' }] }],
    });
    expect(pushed.status, pushed.body).toBe(200);
  }
  // The `keys` folder of the head replaced by a tree object whose bytes are no tree at all.
  const gitdir = gitdirOf(fixture.repos, REPO);
  const garbage = join(fixture.repos, 'garbage');
  writeFileSync(garbage, 'this is not a tree object');
  const badTree = git(gitdir, 'hash-object', '-t', 'tree', '--literally', '-w', garbage);
  const root = git(gitdir, 'ls-tree', 'main')
    .split('\n')
    .map((line) => (line.endsWith('\tkeys') ? line.replace(/[0-9a-f]{40}\tkeys$/, `${badTree}\tkeys`) : line))
    .join('\n');
  const rootId = execFileSync('git', ['--git-dir', gitdir, 'mktree', '--missing'], {
    input: `${root}\n`,
    encoding: 'utf8',
  }).trim();
  damagedCommit = git(gitdir, 'commit-tree', rootId, '-p', 'main', '-m', 'damaged outside cfghub');
  git(gitdir, 'update-ref', 'refs/heads/main', damagedCommit);
});

describe('a damaged tree committed by plain git', () => {
  it('a pull answers 409 repository_damaged naming the repository and the commit', async () => {
    const pulled = await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Prod' });
    const message = expectJsonError(pulled, 409, [fixture.repos]);
    expect(pulled.json).toMatchObject({ error: 'repository_damaged', repository: REPO, object: damagedCommit });
    expect(message).toContain(`repository ${REPO} is damaged`);
    expect(message).toContain('malformed tree object');
  });

  it('a push answers the same, and changes nothing', async () => {
    const pushed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
      changeComment: 'more',
      enableKeyCreation: true,
      data: [{ key: 'c.d', values: [{ context: '*', value: 'w' }] }],
    });
    expect(pushed.status, pushed.body).toBe(409);
    expect(pushed.json).toMatchObject({ error: 'repository_damaged', repository: REPO, object: damagedCommit });
    expect(git(gitdirOf(fixture.repos, REPO), 'rev-parse', 'main')).toBe(damagedCommit);
  });

  it('the history still answers, the damaged commit with a problem naming it (so it can be found and rolled back)', async () => {
    const history = await read(fixture.server.url, `/rest/history/${REPO}`, {});
    expect(history.status, history.text).toBe(200);
    const [damaged, before] = history.json.commits;
    expect(damaged).toMatchObject({
      id: damagedCommit,
      keys: [],
      problems: [`commit ${damagedCommit.slice(0, 12)} cannot be read: malformed tree object`],
    });
    expect(before).toMatchObject({ comment: 'one key', keys: [{ key: 'a.b', change: 'added' }] });
    expect(before.problems).toBeUndefined();
  });

  it('other repositories go on serving', async () => {
    const pulled = await read(fixture.server.url, '/rest/pull/acme/fine', { Context: 'Prod' });
    expect(pulled.status, pulled.text).toBe(200);
  });
});
