/**
 * Concurrent writers lose nothing ("Guarantees"): pushes racing in one server,
 * two server processes, plain git writing the same repository, and the CLI beside them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI, cli, cliOk, commitCount, git, gitdirOf, headOf, pushTo, serverForFile } from '../../support/harness.js';
import { startServerProcess } from '../../support/serverProcess.js';
import { holdsFor, tracked, until } from '../../support/poll.js';

const run = promisify(execFile);
const fixture = serverForFile();

function createRepo(name: string): string {
  cliOk(fixture.repos, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
  return gitdirOf(fixture.repos, name);
}

const setKey = (key: string, value: string) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*;*', value }] }],
});

/** Every commit of the branch has at most one parent: history is a line. */
function assertLinear(gitdir: string): void {
  const parents = git(gitdir, 'rev-list', '--parents', 'refs/heads/main').trim().split('\n');
  for (const line of parents) expect(line.split(' ').length).toBeLessThanOrEqual(2);
}

function keysAtHead(gitdir: string): string[] {
  return git(gitdir, 'ls-tree', '-r', '--name-only', 'refs/heads/main', 'keys/')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((path) =>
      path
        .split('/')
        .pop()!
        .replace(/\.yaml$/, ''),
    );
}

describe('20 concurrent pushes to one repository', () => {
  it('give 20 commits with every change present', async () => {
    const gitdir = createRepo('acme/race');
    const before = commitCount(fixture.repos, 'acme/race');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pushTo(fixture.server.url, '/rest/push/acme/race', setKey(`key.${i}`, `v${i}`)),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.etag)).size).toBe(20);
    expect(commitCount(fixture.repos, 'acme/race')).toBe(before + 20);
    expect(keysAtHead(gitdir).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `key.${i}`).sort());
    assertLinear(gitdir);
    await fixture.server.settle('acme/race');
    await run('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling']);
  });
});

/** Commits with git's plumbing, moving the ref only if it still points where it was read (update-ref's old value). */
async function plainGitCommit(gitdir: string, n: number): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'cfghub-git-'));
  const env = { ...process.env, GIT_INDEX_FILE: join(scratch, 'index'), GIT_DIR: gitdir };
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      const head = (await run('git', ['rev-parse', 'refs/heads/main'], { env })).stdout.trim();
      await run('git', ['read-tree', head], { env });
      writeFileSync(join(scratch, 'note'), `note ${n}\n`);
      const blob = (await run('git', ['hash-object', '-w', join(scratch, 'note')], { env })).stdout.trim();
      await run('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},notes/note-${n}.txt`], { env });
      const tree = (await run('git', ['write-tree'], { env })).stdout.trim();
      const commit = (
        await run('git', ['commit-tree', tree, '-p', head, '-m', `plain git ${n}`], { env })
      ).stdout.trim();
      try {
        await run('git', ['update-ref', 'refs/heads/main', commit, head], { env });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10));
      }
    }
    throw new Error(`plain git commit ${n} never landed`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('pushes racing with plain git on the same repository', () => {
  it('lose no commit from either side, and history stays linear', async () => {
    const gitdir = createRepo('acme/mixed');
    const before = commitCount(fixture.repos, 'acme/mixed');
    const pushes = Array.from({ length: 15 }, (_, i) =>
      pushTo(fixture.server.url, '/rest/push/acme/mixed', setKey(`pushed.${i}`, `v${i}`)),
    );
    const plain = Array.from({ length: 8 }, (_, i) => plainGitCommit(gitdir, i));
    const answers = await Promise.all(pushes);
    await Promise.all(plain);
    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(200));
    expect(commitCount(fixture.repos, 'acme/mixed')).toBe(before + 15 + 8);
    expect(keysAtHead(gitdir).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `pushed.${i}`).sort());
    const notes = git(gitdir, 'ls-tree', '--name-only', 'refs/heads/main', 'notes/').trim().split('\n');
    expect(notes).toHaveLength(8);
    assertLinear(gitdir);
    // The push's own commit is still served after plain git moved the head (no stale cache).
    const after = await pushTo(fixture.server.url, '/rest/push/acme/mixed', setKey('pushed.last', 'x'));
    expect(after.status).toBe(200);
    expect(git(gitdir, 'ls-tree', '--name-only', 'refs/heads/main', 'notes/').trim().split('\n')).toHaveLength(8);
  });
});

describe('two server processes and the CLI on the same repositories folder', () => {
  it('lose no push, and tokens created meanwhile all work', async () => {
    const gitdir = createRepo('acme/shared');
    const other = await startServerProcess(fixture.repos);
    try {
      const before = commitCount(fixture.repos, 'acme/shared');
      const tokenRuns = Array.from({ length: 4 }, (_, i) =>
        run(process.execPath, [CLI, 'token', 'create', 'acme/shared', '--name', `t${i}`, '--repos', fixture.repos]),
      );
      const pushes = Array.from({ length: 24 }, (_, i) =>
        pushTo(i % 2 ? fixture.server.url : other.url, '/rest/push/acme/shared', setKey(`both.${i}`, `v${i}`)),
      );
      const answers = await Promise.all(pushes);
      const tokens = (await Promise.all(tokenRuns)).map((r) => r.stdout.trim());
      expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
      expect(commitCount(fixture.repos, 'acme/shared')).toBe(before + 24);
      expect(keysAtHead(gitdir)).toHaveLength(24);
      assertLinear(gitdir);
      // Each server sees every token at once, including ones the other process's CLI wrote.
      for (const [i, token] of tokens.entries()) {
        const answer = await pushTo(
          i % 2 ? fixture.server.url : other.url,
          '/rest/push',
          setKey(`by.token.${i}`, 'x'),
          { 'Client-Token': token },
        );
        expect(answer.status).toBe(200);
      }
      const revoke = cli(fixture.repos, 'token', 'revoke', 'acme/shared', 't0');
      expect(revoke.code).toBe(0);
      const revoked = await pushTo(other.url, '/rest/push', setKey('after.revoke', 'x'), { 'Client-Token': tokens[0] });
      expect(revoked.status).toBe(401);
      expect(headOf(fixture.repos, 'acme/shared')).toBe(git(gitdir, 'rev-parse', 'refs/heads/main').trim());
    } finally {
      await other.stop();
    }
  });
});

describe('two servers, the CLI and plain git all writing one repository at once', () => {
  it('keep every commit on one line, and each writer either lands or gets a clear conflict', async () => {
    const gitdir = createRepo('acme/everyone');
    const other = await startServerProcess(fixture.repos);
    try {
      const before = commitCount(fixture.repos, 'acme/everyone');
      const urls = [fixture.server.url, other.url];
      const pushes = Array.from({ length: 16 }, (_, i) =>
        pushTo(urls[i % 2], '/rest/push/acme/everyone', setKey(`all.${i}`, `v${i}`)),
      );
      // Conditional pushes: each names the head it read; a moved head is a 412 naming the head.
      const conditional = Array.from({ length: 8 }, async (_, i) => {
        const head = headOf(fixture.repos, 'acme/everyone');
        return pushTo(urls[i % 2], '/rest/push/acme/everyone', setKey(`if.${i}`, `v${i}`), { 'If-Match': `"${head}"` });
      });
      const plain = Array.from({ length: 6 }, (_, i) => plainGitCommit(gitdir, 100 + i));
      const tags = Array.from({ length: 4 }, (_, i) =>
        run(process.execPath, [CLI, 'tag', 'create', 'acme/everyone', `t${i}`, '--repos', fixture.repos]),
      );
      const answers = await Promise.all(pushes);
      const conditionalAnswers = await Promise.all(conditional);
      await Promise.all([...plain, ...tags]);

      expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
      for (const answer of conditionalAnswers) {
        expect([200, 412], answer.body).toContain(answer.status);
        if (answer.status === 412)
          expect(answer.json).toMatchObject({
            error: 'precondition_failed',
            message: expect.stringMatching(/head is [0-9a-f]{40}/),
          });
      }
      const landed = conditionalAnswers.filter((a) => a.status === 200).length;
      expect(commitCount(fixture.repos, 'acme/everyone')).toBe(before + 16 + landed + 6);
      expect(keysAtHead(gitdir).sort()).toEqual(
        [
          ...Array.from({ length: 16 }, (_, i) => `all.${i}`),
          ...conditionalAnswers.flatMap((a, i) => (a.status === 200 ? [`if.${i}`] : [])),
        ].sort(),
      );
      expect(git(gitdir, 'ls-tree', '--name-only', 'refs/heads/main', 'notes/').trim().split('\n')).toHaveLength(6);
      assertLinear(gitdir);
      // Every tag points at a commit of the line.
      const line = new Set(git(gitdir, 'rev-list', 'refs/heads/main').trim().split('\n'));
      for (let i = 0; i < 4; i++) expect(line.has(git(gitdir, 'rev-parse', `t${i}^{commit}`).trim())).toBe(true);
      await fixture.server.settle('acme/everyone');
      await other.stop();
      await run('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling']);
    } finally {
      await other.stop();
    }
  });
});

describe('a push while another writer holds the ref lock', () => {
  it("waits for the lock and then lands on top of that writer's commit", async () => {
    const gitdir = createRepo('acme/locked');
    const lock = join(gitdir, 'refs/heads/main.lock');
    writeFileSync(lock, '');
    const head = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    const packs = () => readdirSync(join(gitdir, 'objects', 'pack')).filter((name) => name.endsWith('.idx')).length;
    const packsBefore = packs();
    const pending = tracked(pushTo(fixture.server.url, '/rest/push/acme/locked', setKey('waited', 'x')));
    // The push writes its pack while it takes the lock: once the pack is there, it has met the lock.
    await until(() => packs() > packsBefore, "the push's pack");
    await holdsFor(200, () => {
      expect(pending.settled(), 'the push is still pending').toBe(false);
      expect(git(gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(head);
    });
    rmSync(lock);
    const answer = await pending.promise;
    expect(answer.status).toBe(200);
    expect(keysAtHead(gitdir)).toEqual(['waited']);
  });
});
