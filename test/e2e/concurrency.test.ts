/**
 * Concurrent writers lose nothing (contract section 6, "Guarantees"): pushes racing in one server,
 * two server processes, plain git writing the same repository, and the CLI beside them.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cli,
  cliOk,
  commitCount,
  git,
  gitdirOf,
  headOf,
  pushTo,
  startTestServer,
  tempDir,
  type TestServer,
} from '../support/harness.js';

const run = promisify(execFile);
let dir: ReturnType<typeof tempDir>;
let server: TestServer;

beforeAll(async () => {
  dir = tempDir();
  server = await startTestServer(dir.path);
});

afterAll(async () => {
  await server.close();
  dir.remove();
});

function createRepo(name: string): string {
  cliOk(dir.path, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
  return gitdirOf(dir.path, name);
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
    .map((path) => path.split('/').pop()!.replace(/\.yaml$/, ''));
}

describe('20 concurrent pushes to one repository', () => {
  it('give 20 commits with every change present', async () => {
    const gitdir = createRepo('acme/race');
    const before = commitCount(dir.path, 'acme/race');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pushTo(server.url, '/rest/push/acme/race', setKey(`key.${i}`, `v${i}`))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.etag)).size).toBe(20);
    expect(commitCount(dir.path, 'acme/race')).toBe(before + 20);
    expect(keysAtHead(gitdir).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `key.${i}`).sort());
    assertLinear(gitdir);
    await server.settle('acme/race');
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
      const commit = (await run('git', ['commit-tree', tree, '-p', head, '-m', `plain git ${n}`], { env })).stdout.trim();
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
    const before = commitCount(dir.path, 'acme/mixed');
    const pushes = Array.from({ length: 15 }, (_, i) => pushTo(server.url, '/rest/push/acme/mixed', setKey(`pushed.${i}`, `v${i}`)));
    const plain = Array.from({ length: 8 }, (_, i) => plainGitCommit(gitdir, i));
    const answers = await Promise.all(pushes);
    await Promise.all(plain);
    expect(answers.map((a) => a.status)).toEqual(Array(15).fill(200));
    expect(commitCount(dir.path, 'acme/mixed')).toBe(before + 15 + 8);
    expect(keysAtHead(gitdir).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `pushed.${i}`).sort());
    const notes = git(gitdir, 'ls-tree', '--name-only', 'refs/heads/main', 'notes/').trim().split('\n');
    expect(notes).toHaveLength(8);
    assertLinear(gitdir);
    // The push's own commit is still served after plain git moved the head (no stale cache).
    const after = await pushTo(server.url, '/rest/push/acme/mixed', setKey('pushed.last', 'x'));
    expect(after.status).toBe(200);
    expect(git(gitdir, 'ls-tree', '--name-only', 'refs/heads/main', 'notes/').trim().split('\n')).toHaveLength(8);
  });
});

/** A second server process on the same repositories folder; resolves with its URL. */
function startServerProcess(repos: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--repos', repos], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const match = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (match) resolve({ url: match[1], child });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

describe('two server processes and the CLI on the same repositories folder', () => {
  it('lose no push, and tokens created meanwhile all work', async () => {
    const gitdir = createRepo('acme/shared');
    const other = await startServerProcess(dir.path);
    try {
      const before = commitCount(dir.path, 'acme/shared');
      const tokenRuns = Array.from({ length: 4 }, (_, i) =>
        run(process.execPath, [CLI, 'token', 'create', 'acme/shared', '--name', `t${i}`, '--repos', dir.path]),
      );
      const pushes = Array.from({ length: 24 }, (_, i) =>
        pushTo(i % 2 ? server.url : other.url, '/rest/push/acme/shared', setKey(`both.${i}`, `v${i}`)),
      );
      const answers = await Promise.all(pushes);
      const tokens = (await Promise.all(tokenRuns)).map((r) => r.stdout.trim());
      expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
      expect(commitCount(dir.path, 'acme/shared')).toBe(before + 24);
      expect(keysAtHead(gitdir)).toHaveLength(24);
      assertLinear(gitdir);
      // Each server sees every token at once, including ones the other process's CLI wrote.
      for (const [i, token] of tokens.entries()) {
        const answer = await pushTo(i % 2 ? server.url : other.url, '/rest/push', setKey(`by.token.${i}`, 'x'), { 'Client-Token': token });
        expect(answer.status).toBe(200);
      }
      const revoke = cli(dir.path, 'token', 'revoke', 'acme/shared', 't0');
      expect(revoke.code).toBe(0);
      const revoked = await pushTo(other.url, '/rest/push', setKey('after.revoke', 'x'), { 'Client-Token': tokens[0] });
      expect(revoked.status).toBe(401);
      expect(headOf(dir.path, 'acme/shared')).toBe(git(gitdir, 'rev-parse', 'refs/heads/main').trim());
    } finally {
      other.child.kill('SIGTERM');
    }
  });
});

describe('a push while another writer holds the ref lock', () => {
  it('waits for the lock and then lands on top of that writer\'s commit', async () => {
    const gitdir = createRepo('acme/locked');
    const lock = join(gitdir, 'refs/heads/main.lock');
    writeFileSync(lock, '');
    const pending = pushTo(server.url, '/rest/push/acme/locked', setKey('waited', 'x'));
    await new Promise((resolve) => setTimeout(resolve, 150));
    rmSync(lock);
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(keysAtHead(gitdir)).toEqual(['waited']);
  });
});
