/**
 * Reading and moving refs the way git itself does, so that cfghub, a second cfghub process and
 * plain `git` can write the same repository without losing a commit:
 * a `<ref>.lock` file created exclusively, a compare-and-swap against the commit the writer
 * started from, and a rename over the ref, then fsync of the ref's folder.
 * isomorphic-git's writeRef overwrites the ref in place and is never used (git-engine-notes §6).
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncFolder } from './durableFs.js';

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

  /** Takes the lock for `name`, to move it to `next`; 'locked' if another writer holds it. */
  static async acquire(gitdir: string, name: string, next: string): Promise<RefLock | 'locked'> {
    const lock = new RefLock(gitdir, name);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(`${lock.refPath}.lock`, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'locked';
      throw error;
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
   * durably; releases the lock either way. The ref is read only now that the lock is ours: from
   * here on, no cooperating writer can move it.
   */
  async swap(expected: string | null): Promise<RefUpdate> {
    try {
      const current = readRef(this.gitdir, this.name);
      if (current !== expected) return { ok: false, why: 'moved', current };
      await fs.promises.rename(`${this.refPath}.lock`, this.refPath);
      this.released = true;
      await fsyncFolder(dirname(this.refPath));
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
