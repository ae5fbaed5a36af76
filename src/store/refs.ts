/**
 * Reading and moving refs the way git itself does, so that cfghub, a second cfghub process and
 * plain `git` can write the same repository without losing a commit:
 * a `<ref>.lock` file created exclusively, a compare-and-swap against the commit the writer
 * started from, and a rename over the ref, then fsync of the ref's folder.
 * isomorphic-git's writeRef overwrites the ref in place, which loses commits under concurrency; it
 * is never used.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncFolder } from './durableFs.js';
import { faultPoint } from './faultPoints.js';

const OID = /^[0-9a-f]{40}$/;

/** The commit id a ref points at, or null when the ref does not exist. Follows `ref:` links. */
export function readRef(gitdir: string, name: string, depth = 0): string | null {
  let text: string;
  try {
    text = fs.readFileSync(join(gitdir, name), 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return readPackedRef(gitdir, name);
  }
  if (OID.test(text)) return text;
  if (text.startsWith('ref: ') && depth < 5) return readRef(gitdir, text.slice(5).trim(), depth + 1);
  throw new Error(`malformed ref ${name}`);
}

/** Every ref in `packed-refs` (git gc and git pack-refs move refs there), by full name. */
export function packedRefs(gitdir: string): Map<string, string> {
  const found = new Map<string, string>();
  let text: string;
  try {
    text = fs.readFileSync(join(gitdir, 'packed-refs'), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return found;
    throw error;
  }
  for (const line of text.split('\n')) {
    if (line.length <= 41 || line[40] !== ' ' || !OID.test(line.slice(0, 40))) continue; // comments, peel lines
    found.set(line.slice(41).replace(/\r$/, ''), line.slice(0, 40));
  }
  return found;
}

function readPackedRef(gitdir: string, name: string): string | null {
  return packedRefs(gitdir).get(name) ?? null;
}

/** Writers that find a ref locked or moved try again up to this many times, about 5 seconds in all. */
export const LOCK_ATTEMPTS = 50;

/** The wait before attempt `attempt + 1` at a busy ref: growing, capped at 100 ms, with jitter. */
export function lockRetryPause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(2 ** attempt, 100) * (0.5 + Math.random())));
}

/**
 * A `<ref>.lock` older than this was left by a process that died holding it (a writer holds one
 * for milliseconds), and is removed. `CFGHUB_STALE_LOCK_SECONDS` sets it, read once at load;
 * git itself never breaks a lock, so this must stay far above any writer's time under the lock.
 */
export const STALE_LOCK_MS = staleLockMs(process.env.CFGHUB_STALE_LOCK_SECONDS);

function staleLockMs(seconds: string | undefined): number {
  if (seconds === undefined || seconds === '') return 30_000;
  const value = Number(seconds);
  if (!Number.isFinite(value) || value <= 0) throw new Error('CFGHUB_STALE_LOCK_SECONDS must be a positive number of seconds');
  return value * 1000;
}

export interface StaleLockReport {
  /** `account/name` of the repository (never a path). */
  readonly repository: string;
  readonly ref: string;
  readonly ageSeconds: number;
}

const staleLockListeners = new Set<(report: StaleLockReport) => void>();

/** Calls `listener` each time this process removes a stale ref lock (the server logs a warning); returns the unsubscribe. */
export function onStaleLockRemoved(listener: (report: StaleLockReport) => void): () => void {
  staleLockListeners.add(listener);
  return () => staleLockListeners.delete(listener);
}

/**
 * Removes `lockPath` if it is older than STALE_LOCK_MS; true if it did. The lock is first renamed
 * aside, and removed only if what was moved is the very file found stale: a writer that replaced
 * it meanwhile gets its lock back. The aside name ends in `.lock`, which git's ref listing skips.
 */
async function removeIfStale(gitdir: string, name: string, lockPath: string): Promise<boolean> {
  const seen = await fs.promises.stat(lockPath).catch(() => undefined);
  const age = seen ? Date.now() - seen.mtimeMs : 0;
  if (!seen || age < STALE_LOCK_MS) return false;
  const aside = `${lockPath.slice(0, -'.lock'.length)}.stale-${process.pid}-${randomBytes(4).toString('hex')}.lock`;
  try {
    await fs.promises.rename(lockPath, aside);
  } catch {
    return false; // released or removed by another writer meanwhile
  }
  const moved = await fs.promises.stat(aside);
  if (moved.ino !== seen.ino || moved.dev !== seen.dev) {
    await fs.promises.link(aside, lockPath).catch(() => undefined);
    await fs.promises.unlink(aside).catch(() => undefined);
    return false;
  }
  await fs.promises.unlink(aside);
  const report = { repository: `${basename(dirname(gitdir))}/${basename(gitdir).replace(/\.git$/, '')}`, ref: name, ageSeconds: Math.round(age / 1000) };
  for (const listener of staleLockListeners) listener(report);
  return true;
}

export type RefUpdate =
  | { readonly ok: true }
  /** Another writer moved the ref since `expected` was read. */
  | { readonly ok: false; readonly why: 'moved'; readonly current: string | null }
  /** Another writer holds `<ref>.lock` right now. */
  | { readonly ok: false; readonly why: 'locked' };

/**
 * A ref's `<ref>.lock`, held: created exclusively and already holding the new commit id, fsynced.
 * Taking it can overlap with writing the commit's objects; `swap` then moves the ref.
 */
export class RefLock {
  private released = false;

  private constructor(
    private readonly gitdir: string,
    private readonly name: string,
  ) {}

  private get refPath(): string {
    return join(this.gitdir, this.name);
  }

  /**
   * Takes the lock for `name`, to move it to `next`; 'locked' if another writer holds it. A stale
   * lock (see STALE_LOCK_MS) is removed and the lock taken.
   */
  static async acquire(gitdir: string, name: string, next: string): Promise<RefLock | 'locked'> {
    const lock = new RefLock(gitdir, name);
    const lockPath = `${lock.refPath}.lock`;
    let handle: fs.promises.FileHandle | undefined;
    for (let tries = 0; !handle; tries++) {
      try {
        handle = await fs.promises.open(lockPath, 'wx', 0o644);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (tries > 0 || !(await removeIfStale(gitdir, name, lockPath))) return 'locked';
      }
    }
    try {
      await handle.writeFile(`${next}\n`);
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await lock.release();
      throw error;
    }
    await handle.close();
    return lock;
  }

  /**
   * Moves the ref to the locked value if it still points at `expected` (null: must not exist),
   * durably, fsyncing the folders `alsoSync` beside the ref's own; releases the lock either way. The ref is read only now that the lock is ours: from
   * here on, no cooperating writer can move it.
   */
  async swap(expected: string | null, alsoSync: readonly string[] = []): Promise<RefUpdate> {
    try {
      const current = readRef(this.gitdir, this.name);
      if (current !== expected) return { ok: false, why: 'moved', current };
      await fs.promises.rename(`${this.refPath}.lock`, this.refPath);
      this.released = true;
      faultPoint('ref-renamed');
      await Promise.all([dirname(this.refPath), ...alsoSync].map((folder) => fsyncFolder(folder)));
      return { ok: true };
    } finally {
      await this.release();
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await fs.promises.unlink(`${this.refPath}.lock`).catch(() => undefined);
  }
}
