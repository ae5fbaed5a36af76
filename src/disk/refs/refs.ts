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
import { dirname, join } from 'node:path';
import { closeQuietly, fsyncFolder, syncFd, writeAll } from '../durableFs.js';
import { closeFile, createExclusive, unlinkFile, writeSmallFile } from '../fileCalls.js';
import { ageOnFsClock } from './fsClock.js';
import { holderAlive, holderNote, holderPath } from './lockHolder.js';
import { repositoryNameOf } from '../storageFaults.js';
import { faultPoint } from '../faultPoints.js';
import type { JournalTicket } from '../journal/pushJournal.js';

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

/** The ref folders of branches and tags. */
export const BRANCH_AND_TAG_FOLDERS = ['refs/heads', 'refs/tags'] as const;

/**
 * Every branch and tag (`refs/heads/…`, `refs/tags/…`; or the refs of the folders given) with the
 * object it names, by full name, sorted: loose refs (in nested folders too) over packed ones, as
 * git reads them. Symbolic refs are left out (a bare repository's only one is HEAD, outside them).
 */
export function branchesAndTags(
  gitdir: string,
  folders: readonly string[] = BRANCH_AND_TAG_FOLDERS,
): Array<[string, string]> {
  const found = new Map<string, string>();
  for (const [name, oid] of packedRefs(gitdir))
    if (folders.some((folder) => name.startsWith(`${folder}/`))) found.set(name, oid);
  const walk = (folder: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(join(gitdir, folder), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const name = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(name);
      else if (entry.isFile() && !entry.name.endsWith('.lock')) {
        let text: string;
        try {
          text = fs.readFileSync(join(gitdir, name), 'utf8').trim();
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // deleted meanwhile
          throw error;
        }
        if (OID.test(text)) found.set(name, text);
      }
    }
  };
  for (const folder of folders) walk(folder);
  return [...found].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function readPackedRef(gitdir: string, name: string): string | null {
  return packedRefs(gitdir).get(name) ?? null;
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
  if (!Number.isFinite(value) || value <= 0)
    throw new Error('CFGHUB_STALE_LOCK_SECONDS must be a positive number of seconds');
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

/** Locks this process holds now: never judged stale by this process, however long it holds them. */
const heldHere = new Set<string>();

/**
 * Removes `lockPath` if it is stale; its age if it did. Stale means older than `staleMs` on the
 * file system's clock (its mtime against that of a probe file written beside it, see fsClock.ts),
 * never on the process clock, which may be far off; a lock held by this process, or by a live
 * cfghub process whose holder note (lockHolder.ts) names that very lock file, is never stale,
 * however old. The lock is first renamed aside, and removed only if what was moved is the very
 * file found stale: a writer that replaced it meanwhile gets its lock back. The aside name ends in
 * `.lock`, which git's ref listing skips.
 */
export async function removeStaleLock(
  lockPath: string,
  staleMs = STALE_LOCK_MS,
): Promise<{ ageMs: number } | undefined> {
  if (heldHere.has(lockPath)) return undefined;
  const seen = await fs.promises.stat(lockPath).catch(() => undefined);
  if (!seen) return undefined;
  if (holderAlive(lockPath, seen.ino)) return undefined; // a live cfghub process holds it, however long
  const age = await ageOnFsClock(dirname(lockPath), seen).catch(() => 0);
  if (age < staleMs) return undefined;
  const aside = `${lockPath.slice(0, -'.lock'.length)}.stale-${process.pid}-${randomBytes(4).toString('hex')}.lock`;
  try {
    await fs.promises.rename(lockPath, aside);
  } catch {
    return undefined; // released or removed by another writer meanwhile
  }
  const moved = await fs.promises.stat(aside);
  if (moved.ino !== seen.ino || moved.dev !== seen.dev) {
    await fs.promises.link(aside, lockPath).catch(() => undefined);
    await fs.promises.unlink(aside).catch(() => undefined);
    return undefined;
  }
  await fs.promises.unlink(aside);
  await fs.promises.unlink(holderPath(lockPath)).catch(() => undefined);
  return { ageMs: age };
}

/** Removes a stale lock (see removeStaleLock) and reports it to the listeners (`name`: the locked file's, relative to its repository); true if it did. */
export async function removeIfStale(
  lockPath: string,
  name: string,
  owner: string,
  staleMs = STALE_LOCK_MS,
): Promise<boolean> {
  const removed = await removeStaleLock(lockPath, staleMs);
  if (!removed) return false;
  const report = { repository: owner, ref: name, ageSeconds: Math.round(removed.ageMs / 1000) };
  for (const listener of staleLockListeners) listener(report);
  return true;
}

export interface LockFileOptions {
  /** Age after which a left lock is removed (see removeStaleLock); STALE_LOCK_MS by default. */
  readonly staleMs?: number;
  /** Who the file belongs to, for the stale-lock report (never a path); the repository of `folder` by default. */
  readonly owner?: string;
  readonly mode?: number;
}

/**
 * The one lock primitive, git's: `<file>.lock` created exclusively, written with the file's next
 * content and fsynced, then renamed over the file (or removed to give up). Beside the lock, a
 * holder note (lockHolder.ts) says which live process holds it, so no other cfghub process takes
 * it away however long it is held. A lock left by a dead process is removed once stale on the file
 * system's clock, renamed aside first and checked by inode (removeStaleLock), so two writers never
 * both break it and none removes another's fresh lock. Used for refs (RefLock), `packed-refs`
 * (tags.ts), git's `multi-pack-index` (multiPackIndex.ts) and the token files (lockedFileUpdate.ts).
 */
export class LockFile {
  private released = false;

  private constructor(
    /** The locked file, `<folder>/<name>`. */
    readonly path: string,
    /** The lock file, open from its exclusive creation until written. */
    private fd: number | undefined,
    /** The holder note, written (not fsynced: after a crash its holder is gone anyway), or why not. */
    private readonly noted: Promise<void>,
  ) {}

  private get lockPath(): string {
    return `${this.path}.lock`;
  }

  /**
   * Takes the lock of `<folder>/<name>`; 'locked' if another writer holds it. A stale lock is removed and the lock taken.
   * Its file calls but the fsync are small file calls (fileCalls.ts: at once while one write is in flight).
   */
  static async acquire(folder: string, name: string, options: LockFileOptions = {}): Promise<LockFile | 'locked'> {
    const path = join(folder, name);
    const lockPath = `${path}.lock`;
    for (let tries = 0; ; tries++) {
      let fd: number;
      try {
        fd = await createExclusive(lockPath, options.mode ?? 0o644);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = options.owner ?? repositoryNameOf(folder);
        if (tries > 0 || !(await removeIfStale(lockPath, name, owner, options.staleMs))) return 'locked';
        continue;
      }
      heldHere.add(lockPath);
      // A failure to write the note is raised by write(), which releases the lock.
      let noted: Promise<void>;
      try {
        await writeSmallFile(holderPath(lockPath), holderNote(fs.fstatSync(fd).ino));
        noted = Promise.resolve();
      } catch (error) {
        noted = Promise.reject(error);
        noted.catch(() => undefined);
      }
      return new LockFile(path, fd, noted);
    }
  }

  /**
   * Writes the file's next content into the lock, and the holder note; on failure the lock is
   * released. Fsynced unless `durable` is false: a journaled push (pushJournal.ts) makes it durable
   * by the journal's record instead.
   */
  async write(content: string | Uint8Array, durable = true): Promise<void> {
    const fd = this.fd;
    if (fd === undefined) throw new Error(`the lock of ${this.path} was written already`);
    this.fd = undefined;
    try {
      await this.noted;
      await writeAll(fd, content);
      if (durable) await syncFd(fd);
    } catch (error) {
      closeQuietly(fd);
      await this.release();
      throw error;
    }
    await closeFile(fd);
  }

  /** Renames the lock over the file: the new content is in place (its folder not yet fsynced). */
  async rename(): Promise<void> {
    this.closeHandle();
    await this.dropNote();
    // Always in the thread pool, unlike the lock's other small calls: replacing a file took
    // milliseconds under other processes' writes on the benchmark machine, and made synchronous it
    // gained nothing (README, "Writes").
    await fs.promises.rename(this.lockPath, this.path);
    this.released = true;
    heldHere.delete(this.lockPath);
  }

  /** Renames the lock over the file and fsyncs its folder (and `alsoSync`). */
  async commit(alsoSync: readonly string[] = []): Promise<void> {
    await this.rename();
    await Promise.all([dirname(this.path), ...alsoSync].map((folder) => fsyncFolder(folder)));
  }

  /** Gives the lock up without changing the file (nothing once renamed). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.closeHandle();
    await this.dropNote();
    try {
      await unlinkFile(this.lockPath);
    } catch {
      // removed already (as stale, by another writer): nothing of ours is left
    }
    heldHere.delete(this.lockPath);
  }

  /**
   * Removes the holder note while the lock is still ours: once the lock is gone, the note may be
   * another writer's, who took the lock since.
   */
  private async dropNote(): Promise<void> {
    try {
      await unlinkFile(holderPath(this.lockPath));
    } catch {
      // never written, or removed already
    }
  }

  private closeHandle(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) closeQuietly(fd);
  }
}

/** Makes a ref's move durable by a journal record (RefLock.swap), given the ref file's identity before and after the move. */
export type JournalHook = (stamps: { readonly before: string; readonly after: string }) => Promise<JournalTicket>;

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
  private constructor(
    private readonly gitdir: string,
    private readonly name: string,
    private readonly file: LockFile,
  ) {}

  private get refPath(): string {
    return this.file.path;
  }

  /**
   * Takes the lock for `name`, to move it to `next`; 'locked' if another writer holds it. A stale
   * lock (see STALE_LOCK_MS) is removed and the lock taken. `durable: false` for a journaled
   * commit (swap with the push journal): the lock's content is not fsynced.
   */
  static async acquire(gitdir: string, name: string, next: string, durable = true): Promise<RefLock | 'locked'> {
    const file = await LockFile.acquire(gitdir, name);
    if (file === 'locked') return 'locked';
    await file.write(`${next}\n`, durable);
    return new RefLock(gitdir, name, file);
  }

  /**
   * Moves the ref to the locked value if it still points at `expected` (null: must not exist),
   * durably; releases the lock either way. The ref is read only now that the lock is ours: from
   * here on, no cooperating writer can move it. `durably` says how the move is made durable:
   * - the folders to fsync before the rename (those of the objects the new value names), then the
   *   ref's own after it (the lock's content was fsynced when it was written);
   * - or the push journal (pushJournal.ts): once the ref is found at `expected`, the hook is given
   *   the ref file's identity before and after the move (refStamp) and resolves when the journal's
   *   record is durable; only then is the lock renamed over the ref, with no fsync, so a reader
   *   never sees a commit that a power cut could take back. A rename that fails after the record
   *   is durable voids the record (the hook's ticket).
   */
  async swap(
    expected: string | null,
    durably: readonly string[] | JournalHook = [],
  ): Promise<RefUpdate & { ticket?: JournalTicket }> {
    try {
      const current = readRef(this.gitdir, this.name);
      if (current !== expected) return { ok: false, why: 'moved', current };
      if (typeof durably === 'function') {
        const ticket = await durably({
          before: refStamp(this.gitdir, this.name),
          after: fileStamp('loose', fs.statSync(`${this.refPath}.lock`, { bigint: true })),
        });
        faultPoint('journaled');
        try {
          await this.file.rename();
        } catch (error) {
          ticket.abandon();
          throw error;
        }
        faultPoint('ref-renamed');
        return { ok: true, ticket };
      }
      // The folders holding what the commit needs (its pack's) first: a file system that keeps no
      // order between renames (ext4 without its journal) could otherwise keep the ref's new entry
      // through a power cut and lose the pack's, leaving the ref naming objects that are gone.
      await Promise.all(durably.map((folder) => fsyncFolder(folder)));
      await this.file.rename();
      faultPoint('ref-renamed');
      await fsyncFolder(dirname(this.refPath));
      return { ok: true };
    } finally {
      await this.release();
    }
  }

  release(): Promise<void> {
    return this.file.release();
  }
}

function fileStamp(kind: string, stat: fs.BigIntStats): string {
  return `${kind} ${stat.ino} ${stat.mtimeNs} ${stat.size}`;
}

/**
 * The identity of the file a ref is read from now: its loose file (inode, modification time in
 * nanoseconds, size), or `packed-refs` where there is none, or `none`. Every move of a ref writes a
 * new file (a lock renamed over it, or a new `packed-refs`), so a ref whose stamp is the one seen
 * before a journaled move was not written since: replaying the move (journalReplay.ts) then
 * restores what a power cut took, and never undoes a later writer's change.
 */
export function refStamp(gitdir: string, name: string): string {
  const loose = fs.statSync(join(gitdir, name), { bigint: true, throwIfNoEntry: false });
  if (loose) return fileStamp('loose', loose);
  const packed = fs.statSync(join(gitdir, 'packed-refs'), { bigint: true, throwIfNoEntry: false });
  return packed ? fileStamp('packed', packed) : 'none';
}

/** Whether a loose ref or a folder of refs is at `name` (`refs/cfghub/rewound/<stamp>`) in a bare repository. */
export function looseRefExists(gitdir: string, name: string): boolean {
  return fs.existsSync(join(gitdir, name));
}
