/**
 * Replay of the push journals (pushJournal.ts) of processes that are gone: at a server's start,
 * before anything serves, and in a cluster's primary when a worker dies.
 *
 * A journal's records are durable; the files they describe (a commit's pack and index, the ref's
 * move) were written without fsyncs, so a power cut may have taken them. For each record, and for
 * every journal of a dead process together (the workers of a cluster each kept one):
 * - its pack and index are written back, durably, when the pack is missing or not whole and the
 *   commit cannot be read from the repository (a pack merge or `git repack` that took the pack
 *   wrote its objects into a pack of its own, fsynced);
 * - its ref is moved forward along the records' chain when the ref's file is exactly the one a
 *   record saw before its move (refStamp in refs.ts: inode, modification time, size): the move was
 *   lost. A ref written since by anyone (a later push, `git update-ref`, `git pack-refs`) has
 *   another file and is left alone, so a replay never undoes a change made after the push. A ref
 *   whose file is the very one a record's move made but whose bytes were lost is mended too.
 * Then every file the records name is fsynced (a process killed without a power cut left them in
 * the page cache only) and the journal deleted.
 *
 * A lock left on the ref by the dead process (its holder note names it, lockHolder.ts) is broken
 * at once; any other lock is waited for until it is stale (refs.ts).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { decodeHeader, decodeRecords, HEADER_BYTES, type JournalEntry } from './journalRecords.js';
import { CREATING_SUFFIX, JOURNAL_FOLDER, JOURNAL_SUFFIX } from './pushJournal.js';
import { fsyncIfThere } from '../durableFs.js';
import { holderKnownDead, noteHolderAlive } from '../refs/lockHolder.js';
import { LockFile, readRef, refStamp, removeIfStale, STALE_LOCK_MS } from '../refs/refs.js';
import { ObjectStore } from '../objects/objectStore.js';
import { LockBusyError, ObjectNotFoundError } from '../errors.js';
import { problemOf, repositoryNameOf } from '../storageFaults.js';

export interface JournalReplayFinding {
  /** `account/name` of the repository (never a path). */
  readonly repository: string;
  /** Records of dead processes' journals about it. */
  readonly records: number;
  /** Packs written back (their files were lost). */
  readonly packsRestored: number;
  /** Whether its ref was moved forward (a move was lost). */
  readonly refMoved: boolean;
  /** What could not be replayed (never a path). */
  readonly problem?: string;
}

const REPOSITORY = /^[^/\\.][^/\\]*\/[^/\\]+\.git$/;

interface DeadJournal {
  readonly path: string;
  readonly records: JournalEntry[];
}

/** The journals under `root` whose holder is gone, with their records. */
function deadJournals(root: string): DeadJournal[] {
  const folder = join(root, JOURNAL_FOLDER);
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return []; // never made (the server then commits without a journal)
    throw error;
  }
  const dead: DeadJournal[] = [];
  for (const name of names) {
    if (!name.endsWith(JOURNAL_SUFFIX) && !name.endsWith(CREATING_SUFFIX)) continue;
    const path = join(folder, name);
    let bytes: Buffer | undefined;
    let note: string | undefined;
    try {
      const fd = fs.openSync(path, 'r');
      try {
        // The header first: a live process's journal (a worker's, when another died) is not read whole.
        const header = Buffer.alloc(HEADER_BYTES);
        fs.readSync(fd, header, 0, HEADER_BYTES, 0);
        note = decodeHeader(header);
        if (note !== undefined && noteHolderAlive(note, fs.fstatSync(fd).ino)) continue;
        if (name.endsWith(JOURNAL_SUFFIX)) bytes = fs.readFileSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      continue; // deleted meanwhile by its own process or another replay
    }
    if (!bytes) {
      // A file being made never held a record; one whose header is not written yet may be being made right now.
      if (note !== undefined) fs.rmSync(path, { force: true });
      continue;
    }
    dead.push({ path, records: decodeRecords(bytes).map((record) => record.entry) });
  }
  return dead;
}

function sameBytes(path: string, expected: Uint8Array): boolean {
  try {
    const stat = fs.statSync(path);
    return stat.size === expected.length && fs.readFileSync(path).equals(expected);
  } catch {
    return false;
  }
}

async function commitReadable(store: ObjectStore, commitId: string): Promise<boolean> {
  try {
    await store.read(commitId);
    return true;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return false;
    throw error;
  }
}

/** Writes back the packs of `entries` that a power cut took; how many. */
async function restorePacks(store: ObjectStore, entries: readonly JournalEntry[]): Promise<number> {
  let restored = 0;
  for (const entry of entries) {
    const [packPath, indexPath] = store.packPaths(entry.packName);
    if (sameBytes(packPath, entry.pack) && sameBytes(indexPath, entry.index)) continue;
    if (!fs.existsSync(packPath) && (await commitReadable(store, entry.new))) continue; // merged or repacked
    await store.writePackDurably({
      name: entry.packName,
      pack: Buffer.from(entry.pack),
      index: Buffer.from(entry.index),
    });
    restored++;
  }
  return restored;
}

/**
 * Where the ref should be: followed from its file along the records' chain (each record whose
 * `before` is the file's stamp), or undefined when no move of the chain was lost.
 */
function lostHead(gitdir: string, entries: readonly JournalEntry[]): { target: string; stamp: string } | undefined {
  const stamp = refStamp(gitdir, entries[0].ref);
  let value: string | null | undefined;
  try {
    value = readRef(gitdir, entries[0].ref);
  } catch {
    value = undefined; // the file a move made, its bytes lost: found by its stamp below
  }
  let at = stamp;
  let target: string | undefined;
  if (value === undefined) {
    const made = entries.find((entry) => entry.after === stamp);
    if (!made) return undefined;
    target = made.new;
  }
  // By the stamp each record saw before its move: following the chain costs one look-up a step.
  const byBefore = new Map<string, JournalEntry[]>();
  for (const entry of entries) byBefore.set(entry.before, [...(byBefore.get(entry.before) ?? []), entry]);
  const used = new Set<JournalEntry>();
  for (;;) {
    const next = byBefore.get(at)?.find((entry) => !used.has(entry) && entry.old === (target ?? value));
    if (!next) break;
    used.add(next);
    target = next.new;
    at = next.after;
  }
  return target === undefined || target === value ? undefined : { target, stamp };
}

/** Moves the ref to `target` if its file still has `stamp`; durably. False if someone wrote it meanwhile. */
async function moveRef(gitdir: string, ref: string, target: string, stamp: string): Promise<boolean> {
  const lockPath = join(gitdir, `${ref}.lock`);
  const deadline = Date.now() + STALE_LOCK_MS + 2_000;
  for (;;) {
    const lock = await LockFile.acquire(gitdir, ref);
    if (lock !== 'locked') {
      try {
        if (refStamp(gitdir, ref) !== stamp) return false;
        await lock.write(`${target}\n`);
        await lock.commit();
        return true;
      } finally {
        await lock.release();
      }
    }
    const held = fs.statSync(lockPath, { throwIfNoEntry: false });
    if (held && holderKnownDead(lockPath, held.ino)) {
      await removeIfStale(lockPath, ref, repositoryNameOf(gitdir), 0);
      continue;
    }
    if (Date.now() > deadline) throw new LockBusyError(`its ref ${ref}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function replayRepository(
  gitdir: string,
  entries: readonly JournalEntry[],
): Promise<Omit<JournalReplayFinding, 'repository' | 'records'>> {
  const store = new ObjectStore(gitdir);
  const packsRestored = await restorePacks(store, entries);
  let refMoved = false;
  for (const ref of new Set(entries.map((entry) => entry.ref))) {
    const chain = entries.filter((entry) => entry.ref === ref);
    const lost = lostHead(gitdir, chain);
    if (lost) refMoved = (await moveRef(gitdir, ref, lost.target, lost.stamp)) || refMoved;
    await fsyncIfThere(join(gitdir, ref));
  }
  const files = entries.flatMap((entry) => store.packPaths(entry.packName));
  await Promise.all(files.map(fsyncIfThere));
  await Promise.all([store.packFolder, join(gitdir, 'refs', 'heads')].map(fsyncIfThere));
  return { packsRestored, refMoved };
}

/**
 * Replays and deletes the journals of processes that are gone (see the top of this file); one
 * finding per repository they name. A journal with a record that could not be replayed stays, for
 * the next start.
 */
export async function replayJournals(root: string): Promise<JournalReplayFinding[]> {
  const journals = deadJournals(root);
  if (journals.length === 0) return [];
  const byRepository = new Map<string, JournalEntry[]>();
  for (const journal of journals) {
    for (const entry of journal.records) {
      const list = byRepository.get(entry.repository) ?? [];
      list.push(entry);
      byRepository.set(entry.repository, list);
    }
  }
  const findings: JournalReplayFinding[] = [];
  let failed = false;
  for (const [relative, entries] of byRepository) {
    const gitdir = join(root, relative);
    const repository = repositoryNameOf(gitdir);
    if (!REPOSITORY.test(relative) || !fs.lstatSync(gitdir, { throwIfNoEntry: false })?.isDirectory()) {
      findings.push({
        repository,
        records: entries.length,
        packsRestored: 0,
        refMoved: false,
        problem: 'the repository is gone',
      });
      continue;
    }
    try {
      findings.push({ repository, records: entries.length, ...(await replayRepository(gitdir, entries)) });
    } catch (error) {
      failed = true;
      findings.push({
        repository,
        records: entries.length,
        packsRestored: 0,
        refMoved: false,
        problem: `not replayed: ${error instanceof LockBusyError ? error.message : problemOf(error)}`,
      });
    }
  }
  if (!failed) {
    for (const journal of journals) fs.rmSync(journal.path, { force: true });
    await fsyncIfThere(join(root, JOURNAL_FOLDER));
  }
  return findings;
}
