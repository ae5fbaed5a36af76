/**
 * The one lock primitive (LockFile in src/disk/refs/refs.ts) on real files: exclusive, a fresh lock
 * never broken, a stale one removed and reported, the new content in place only on commit; and
 * its users beyond refs: the token files and `packed-refs`, each clearing a lock left by a dead
 * process instead of waiting on it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockFile, onStaleLockRemoved, STALE_LOCK_MS, type StaleLockReport } from '../../../src/disk/refs/refs.js';
import { holderNote, holderPath } from '../../../src/disk/refs/lockHolder.js';
import { TokenStore } from '../../../src/disk/records/tokenStore.js';
import { AdminTokenStore } from '../../../src/disk/records/adminTokenStore.js';
import { LockBusyError } from '../../../src/disk/errors.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { deleteTag } from '../../../src/disk/records/tags.js';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function folder(): string {
  root = mkdtempSync(join(tmpdir(), 'cfghub-lockfile-'));
  return root;
}

/** Makes a file look left behind by a process that died `ms` ago. */
function age(path: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  utimesSync(path, then, then);
}

function reports(): { seen: StaleLockReport[]; stop: () => void } {
  const seen: StaleLockReport[] = [];
  const stop = onStaleLockRemoved((report) => seen.push(report));
  return { seen, stop };
}

describe('LockFile', () => {
  it('is exclusive, and puts the new content in place only on commit', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'data'), 'old');
    const lock = await LockFile.acquire(dir, 'data');
    expect(lock).not.toBe('locked');
    expect(await LockFile.acquire(dir, 'data')).toBe('locked');
    if (lock === 'locked') return;
    await lock.write('new');
    expect(readFileSync(join(dir, 'data'), 'utf8')).toBe('old');
    await lock.commit();
    expect(readFileSync(join(dir, 'data'), 'utf8')).toBe('new');
    expect(existsSync(join(dir, 'data.lock'))).toBe(false);
  });

  it('leaves the file as it was when released without a commit', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'data'), 'old');
    const lock = await LockFile.acquire(dir, 'data');
    if (lock === 'locked') throw new Error('locked');
    await lock.write('new');
    await lock.release();
    expect(readFileSync(join(dir, 'data'), 'utf8')).toBe('old');
    expect(existsSync(join(dir, 'data.lock'))).toBe(false);
  });

  it('never breaks a fresh lock of another writer', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'data.lock'), 'theirs');
    expect(await LockFile.acquire(dir, 'data', { staleMs: 60_000 })).toBe('locked');
    expect(readFileSync(join(dir, 'data.lock'), 'utf8')).toBe('theirs');
  });

  it('never takes away a lock whose cfghub holder is alive, however old; a note naming another file does not count', async () => {
    const dir = folder();
    const lockPath = join(dir, 'data.lock');
    writeFileSync(lockPath, 'held');
    age(lockPath, 60_000);
    writeFileSync(holderPath(lockPath), holderNote(statSync(lockPath).ino)); // this (live) process holds it
    expect(await LockFile.acquire(dir, 'data', { staleMs: 1_000, owner: 'the test' })).toBe('locked');
    expect(readFileSync(lockPath, 'utf8')).toBe('held');
    writeFileSync(holderPath(lockPath), holderNote(statSync(lockPath).ino + 1)); // a note of an earlier lock file
    const lock = await LockFile.acquire(dir, 'data', { staleMs: 1_000, owner: 'the test' });
    expect(lock).not.toBe('locked');
    if (lock !== 'locked') await lock.release();
  });

  it('keeps a holder note beside the lock while held, and removes it before the lock goes', async () => {
    const dir = folder();
    const lock = await LockFile.acquire(dir, 'data', { staleMs: 1_000 });
    if (lock === 'locked') throw new Error('locked');
    await lock.write('new');
    const lockPath = join(dir, 'data.lock');
    expect(readFileSync(holderPath(lockPath), 'utf8')).toBe(holderNote(statSync(lockPath).ino));
    age(lockPath, 60_000); // held by this process: never stale to it either
    expect(await LockFile.acquire(dir, 'data', { staleMs: 1_000 })).toBe('locked');
    // The note goes while the lock is still ours: once the lock is renamed, a note there may be
    // another writer's, who took the lock since.
    const rename = fs.promises.rename;
    let noteAtRename: boolean | undefined;
    const spy = vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (from === lockPath) noteAtRename = existsSync(holderPath(lockPath));
      return rename(from, to);
    });
    try {
      await lock.commit();
    } finally {
      spy.mockRestore();
    }
    expect(noteAtRename).toBe(false);
    expect(readFileSync(join(dir, 'data'), 'utf8')).toBe('new');
    expect(existsSync(lockPath)).toBe(false);
    expect(existsSync(holderPath(lockPath))).toBe(false);
  });

  it('removes a stale lock, reports it by owner (no path), and takes the lock', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'data.lock'), 'dead');
    age(join(dir, 'data.lock'), 2_000);
    const { seen, stop } = reports();
    try {
      const lock = await LockFile.acquire(dir, 'data', { staleMs: 1_000, owner: 'the test' });
      expect(lock).not.toBe('locked');
      expect(seen).toEqual([{ repository: 'the test', ref: 'data', ageSeconds: 2 }]);
      if (lock !== 'locked') await lock.release();
    } finally {
      stop();
    }
  });
});

describe('users of the lock', () => {
  it('the token store clears a token-file lock left by a dead process', async () => {
    const dir = folder();
    mkdirSync(join(dir, '.cfghub'));
    writeFileSync(join(dir, '.cfghub', 'tokens.json.lock'), '');
    age(join(dir, '.cfghub', 'tokens.json.lock'), 11_000);
    const store = new TokenStore(dir);
    try {
      expect(await store.update((records) => ({ records, result: 'done' }))).toBe('done');
      expect(JSON.parse(readFileSync(join(dir, '.cfghub', 'tokens.json'), 'utf8'))).toEqual({ tokens: [] });
      expect(existsSync(join(dir, '.cfghub', 'tokens.json.lock'))).toBe(false);
    } finally {
      store.close();
    }
  });

  it('the admin token store clears a lock left by a dead process, and keeps a fresh one (busy, then a clear error)', async () => {
    const dir = folder();
    mkdirSync(join(dir, '.cfghub'));
    const lock = join(dir, '.cfghub', 'admin-tokens.json.lock');
    writeFileSync(lock, '');
    age(lock, 11_000);
    const store = new AdminTokenStore(dir);
    expect(await store.update((records) => ({ records, result: 'done' }))).toBe('done');
    expect(JSON.parse(readFileSync(join(dir, '.cfghub', 'admin-tokens.json'), 'utf8'))).toEqual({ adminTokens: [] });
    expect(existsSync(lock)).toBe(false);
    // A fresh lock of another writer is never broken: the update gives up with LockBusyError.
    writeFileSync(lock, '');
    await expect(store.update((records) => ({ records, result: 'never' }))).rejects.toBeInstanceOf(LockBusyError);
    expect(existsSync(lock)).toBe(true);
  });

  it('deleting a packed tag clears a packed-refs.lock left by a dead process', async () => {
    const dir = folder();
    const registry = new RepositoryRegistry(dir);
    try {
      const repository = await createRepository(registry, { account: 'acme', name: 'app', levels: ['Environment'] });
      const git = (...args: string[]) =>
        execFileSync('git', ['--git-dir', repository.gitdir, ...args], { encoding: 'utf8' });
      git('tag', 'packed', repository.head());
      git('pack-refs', '--all');
      writeFileSync(join(repository.gitdir, 'packed-refs.lock'), '');
      age(join(repository.gitdir, 'packed-refs.lock'), STALE_LOCK_MS + 1_000);
      expect(await deleteTag(repository, 'packed')).toEqual({ ok: true, name: 'packed' });
      expect(git('tag', '-l')).toBe('');
      expect(existsSync(join(repository.gitdir, 'packed-refs.lock'))).toBe(false);
    } finally {
      registry.close();
    }
  });
});
