/**
 * `cfghub tag create|list|delete`, run as a child process and checked with the
 * real git CLI: annotated tag objects git accepts, refs created and deleted with git's lock
 * protocol, loose and packed tags, tags made by plain git, and tags that outlive pushes.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cli, cliOk, git, gitdirOf, headOf, pushTo, startTestServer, tempDir } from '../../support/harness.js';
import { holdsFor, tracked } from '../../support/poll.js';

let dir: ReturnType<typeof tempDir>;
let gitdir: string;
const REPO = 'acme/app';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
/** Plain git, with an identity for the commands that record one. */
const plainGit = (...args: string[]) =>
  git(gitdir, '-c', 'user.name=Plain Git', '-c', 'user.email=plain@example.com', ...args);

beforeAll(() => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Environment', '--token-free-push');
  gitdir = gitdirOf(dir.path, REPO);
});

afterAll(() => dir.remove());

/** `git fsck --strict` finds nothing: exit 0, and no warning either. */
function fsckClean(): void {
  const result = spawnSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { encoding: 'utf8' });
  expect({ code: result.status, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
}

function tags(): { name: string; commitId: string; created: string; message: string }[] {
  return JSON.parse(cliOk(dir.path, 'tag', 'list', REPO));
}

describe('tag create', () => {
  it('writes an annotated tag object for the head, with a ref git lists, and prints the record', () => {
    const head = headOf(dir.path, REPO);
    const before = Math.floor(Date.now() / 1000);
    const record = JSON.parse(
      cliOk(dir.path, 'tag', 'create', REPO, 'v1.0', '--comment', 'First release\n\nwith details'),
    );
    expect(record).toEqual({
      name: 'v1.0',
      commitId: head,
      created: expect.stringMatching(ISO),
      message: 'First release\n\nwith details',
    });
    expect(Date.parse(record.created) / 1000).toBeGreaterThanOrEqual(before);

    expect(git(gitdir, 'tag', '-l')).toBe('v1.0\n');
    expect(git(gitdir, 'cat-file', '-t', 'refs/tags/v1.0').trim()).toBe('tag');
    expect(git(gitdir, 'rev-parse', 'v1.0^{commit}').trim()).toBe(head);
    const object = git(gitdir, 'cat-file', 'tag', 'v1.0');
    expect(object).toMatch(
      new RegExp(
        `^object ${head}\ntype commit\ntag v1\\.0\ntagger cfghub <cfghub@localhost> \\d+ \\+0000\n\nFirst release\n\nwith details\n$`,
      ),
    );
    // git mktag checks a tag object strictly, and writes the very same object from the same text.
    const tagId = git(gitdir, 'rev-parse', 'refs/tags/v1.0').trim();
    const remade = spawnSyncGit(['mktag'], object);
    expect(remade.trim()).toBe(tagId);
    expect(
      git(
        gitdir,
        'for-each-ref',
        '--format=%(refname) %(objecttype) %(*objectname) %(taggername) %(contents:subject)',
        'refs/tags',
      ),
    ).toBe(`refs/tags/v1.0 tag ${head} cfghub First release\n`);
    fsckClean();
  });

  it('without --comment writes a tag with an empty message, as `git tag -a -m ""` does', () => {
    const record = JSON.parse(cliOk(dir.path, 'tag', 'create', REPO, 'empty'));
    expect(record.message).toBe('');
    expect(git(gitdir, 'cat-file', 'tag', 'empty')).toMatch(/\+0000\n\n$/);
    fsckClean();
    cliOk(dir.path, 'tag', 'delete', REPO, 'empty');
  });

  it('is carried by a clone', () => {
    const target = tempDir('cfghub-clone-');
    try {
      const clone = join(target.path, 'app');
      execGit(['clone', '--quiet', gitdir, clone]);
      expect(execGit(['-C', clone, 'tag', '-l'])).toBe('v1.0\n');
      expect(execGit(['-C', clone, 'cat-file', '-t', 'v1.0']).trim()).toBe('tag');
      expect(execGit(['-C', clone, 'rev-parse', 'v1.0^{commit}']).trim()).toBe(headOf(dir.path, REPO));
      expect(readFileSync(join(clone, 'repository.yaml'), 'utf8')).toContain('Environment');
    } finally {
      target.remove();
    }
  });

  it.each(['v1.0', 'V1.0'])('refuses %s, a tag that exists in any case, with exit 1 and one line', (name) => {
    const result = cli(dir.path, 'tag', 'create', REPO, name);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`cfghub: repository ${REPO} already has a tag v1.0\n`);
    expect(git(gitdir, 'tag', '-l')).toBe('v1.0\n');
  });

  it('refuses a name git has in another case in packed-refs', () => {
    cliOk(dir.path, 'tag', 'create', REPO, 'packed-one');
    git(gitdir, 'pack-refs', '--all');
    expect(existsSync(join(gitdir, 'refs/tags/packed-one'))).toBe(false);
    expect(cli(dir.path, 'tag', 'create', REPO, 'PACKED-one').code).toBe(1);
    expect(cli(dir.path, 'tag', 'create', REPO, 'packed-one').code).toBe(1);
  });

  it.each([
    ['bad name', 'tag name'],
    ['a/b', 'tag name'],
    ['v1..2', 'tag name'],
    ['v1-', 'tag name'],
    ['v1_.2', 'tag name'],
    ['v1.lock', ".lock'"],
    ['x'.repeat(121), 'longer than 120'],
  ])('refuses the name %j with exit 2 and a one-line error', (name, problem) => {
    const result = cli(dir.path, 'tag', 'create', REPO, name);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(problem);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 2 for a usage error and 1 for an unknown repository', () => {
    expect(cli(dir.path, 'tag', 'create', REPO).code).toBe(2);
    expect(cli(dir.path, 'tag', 'create', 'acme', 'v1').code).toBe(2);
    expect(cli(dir.path, 'tag', 'frobnicate', REPO).code).toBe(2);
    expect(cli(dir.path, 'tag', 'create', 'acme/nope', 'v1').code).toBe(1);
    expect(cli(dir.path, 'tag', 'list', 'acme/nope').code).toBe(1);
    expect(cli(dir.path, 'tag', 'delete', 'acme/nope', 'v1').code).toBe(1);
    // A bad tag name is exit 2 whether or not the repository exists.
    expect(cli(dir.path, 'tag', 'create', 'acme/nope', 'a b').code).toBe(2);
  });

  it('of the same name by two processes at once: exactly one succeeds', async () => {
    const results = await Promise.all([runCli('tag', 'create', REPO, 'race'), runCli('tag', 'create', REPO, 'RACE')]);
    expect(results.map((r) => r.code).sort()).toEqual([0, 1]);
    expect(tags().filter((t) => t.name.toLowerCase() === 'race')).toHaveLength(1);
    fsckClean();
    cliOk(dir.path, 'tag', 'delete', REPO, 'race');
  });
});

describe('tag list', () => {
  it('lists loose and packed tags, tags made by plain git (annotated and lightweight), sorted by name', () => {
    const head = headOf(dir.path, REPO);
    plainGit('tag', '-a', 'by-git', '-m', 'Tagged with git', head);
    plainGit('tag', 'light', head);
    const blob = spawnSyncGit(['hash-object', '-w', '--stdin'], 'not a commit').trim();
    plainGit('tag', 'on-a-blob', blob);
    plainGit('tag', '-a', 'tag-of-tag', '-m', 'Outer', 'by-git');
    const commitTime =
      new Date(Number(git(gitdir, 'log', '-1', '--format=%ct', head).trim()) * 1000).toISOString().slice(0, 19) + 'Z';

    const listed = tags();
    expect(listed.map((t) => t.name)).toEqual(['by-git', 'light', 'packed-one', 'tag-of-tag', 'v1.0']);
    expect(listed.every((t) => t.commitId === head && ISO.test(t.created))).toBe(true);
    expect(listed.find((t) => t.name === 'by-git')!.message).toBe('Tagged with git');
    expect(listed.find((t) => t.name === 'light')).toEqual({
      name: 'light',
      commitId: head,
      created: commitTime,
      message: '',
    });
    expect(listed.find((t) => t.name === 'tag-of-tag')!.message).toBe('Outer');
    expect(listed.find((t) => t.name === 'packed-one')!.message).toBe('');
    git(gitdir, 'tag', '-d', 'on-a-blob', 'tag-of-tag');
  });
});

describe('tag delete', () => {
  it('removes a loose tag; the tag object stays until git gc, as with git tag -d', () => {
    cliOk(dir.path, 'tag', 'create', REPO, 'short-lived');
    const tagObject = git(gitdir, 'rev-parse', 'refs/tags/short-lived').trim();
    const result = cli(dir.path, 'tag', 'delete', REPO, 'short-lived');
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: `cfghub: tag short-lived of ${REPO} deleted\n` });
    expect(git(gitdir, 'tag', '-l', 'short-lived')).toBe('');
    expect(existsSync(join(gitdir, 'refs/tags/short-lived.lock'))).toBe(false);
    expect(git(gitdir, 'cat-file', '-t', tagObject).trim()).toBe('tag');
    fsckClean();
  });

  it('removes a packed tag and its peel line, leaving the other packed refs', () => {
    cliOk(dir.path, 'tag', 'create', REPO, 'packed-two', '--comment', 'Packed');
    git(gitdir, 'pack-refs', '--all');
    const before = readFileSync(join(gitdir, 'packed-refs'), 'utf8');
    expect(before).toMatch(/ refs\/tags\/packed-two\n\^[0-9a-f]{40}\n/);

    cliOk(dir.path, 'tag', 'delete', REPO, 'PACKED-two'); // found without regard to case
    const after = readFileSync(join(gitdir, 'packed-refs'), 'utf8');
    const expected = before.replace(/[0-9a-f]{40} refs\/tags\/packed-two\n\^[0-9a-f]{40}\n/, '');
    expect(after).toBe(expected);
    expect(existsSync(join(gitdir, 'packed-refs.lock'))).toBe(false);
    expect(git(gitdir, 'tag', '-l', 'packed-two')).toBe('');
    expect(git(gitdir, 'tag', '-l', 'packed-one')).toBe('packed-one\n');
    expect(git(gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(headOf(dir.path, REPO));
    fsckClean();
  });

  it('removes a tag that is both packed and loose', () => {
    plainGit('tag', '-a', 'both', '-m', 'first');
    git(gitdir, 'pack-refs', '--all');
    plainGit('tag', '-f', '-a', 'both', '-m', 'second'); // now loose too, pointing elsewhere
    expect(existsSync(join(gitdir, 'refs/tags/both'))).toBe(true);
    expect(readFileSync(join(gitdir, 'packed-refs'), 'utf8')).toContain(' refs/tags/both\n');
    expect(tags().find((t) => t.name === 'both')!.message).toBe('second');

    cliOk(dir.path, 'tag', 'delete', REPO, 'both');
    expect(git(gitdir, 'tag', '-l', 'both')).toBe('');
    expect(readFileSync(join(gitdir, 'packed-refs'), 'utf8')).not.toContain('refs/tags/both');
    fsckClean();
  });

  it('of an unknown tag exits 1; of a bad name, 2', () => {
    const unknown = cli(dir.path, 'tag', 'delete', REPO, 'never-made');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`cfghub: repository ${REPO} has no tag never-made\n`);
    expect(cli(dir.path, 'tag', 'delete', REPO, '../../HEAD').code).toBe(2);
    expect(cli(dir.path, 'tag', 'delete', REPO, 'v1.lock').code).toBe(2);
  });

  it('waits for git to release the ref lock it holds', async () => {
    cliOk(dir.path, 'tag', 'create', REPO, 'locked-one');
    const lock = join(gitdir, 'refs/tags/locked-one.lock');
    writeFileSync(lock, '');
    const deletion = tracked(runCli('tag', 'delete', REPO, 'locked-one'));
    // While git holds the lock, the deletion keeps waiting (it gives up after about 5 s).
    await holdsFor(800, () => {
      expect(deletion.settled(), 'the deletion is still pending').toBe(false);
      expect(git(gitdir, 'tag', '-l', 'locked-one')).toBe('locked-one\n');
    });
    unlinkSync(lock);
    expect((await deletion.promise).code).toBe(0);
    expect(git(gitdir, 'tag', '-l', 'locked-one')).toBe('');
  });
});

describe('tags and pushes', () => {
  it('tags keep naming their commit while pushes move the head; a new tag names the new head', async () => {
    const tagged = headOf(dir.path, REPO);
    const server = await startTestServer(dir.path);
    try {
      for (const value of ['a', 'b']) {
        const answer = await pushTo(server.url, `/rest/push/${REPO}`, {
          changeComment: `set ${value}`,
          enableKeyCreation: true,
          data: [{ key: 'k', values: [{ context: '*', value }] }],
        });
        expect(answer.status).toBe(200);
      }
      await server.settle(REPO);
    } finally {
      await server.close();
    }
    const head = headOf(dir.path, REPO);
    expect(head).not.toBe(tagged);
    expect(tags().find((t) => t.name === 'v1.0')!.commitId).toBe(tagged);
    expect(git(gitdir, 'rev-parse', 'v1.0^{commit}').trim()).toBe(tagged);
    const record = JSON.parse(cliOk(dir.path, 'tag', 'create', REPO, 'v2.0', '--comment', 'After pushes'));
    expect(record.commitId).toBe(head);
    expect(git(gitdir, 'rev-parse', 'v2.0^{commit}').trim()).toBe(head);
    expect(git(gitdir, 'show', 'v1.0:repository.yaml')).toContain('Environment');
    fsckClean();
  });
});

function execGit(args: string[]): string {
  return spawnSyncGit(args, '', false);
}

/** Runs git (in the repository unless `inRepository` is false) with `input` on stdin; returns stdout. */
function spawnSyncGit(args: string[], input: string, inRepository = true): string {
  return execFileSync('git', inRepository ? ['--git-dir', gitdir, ...args] : args, {
    input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs the built cfghub command without blocking the test, so several can run at once. */
function runCli(...args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, '--repos', dir.path], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}
