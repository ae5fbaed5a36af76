/**
 * A cluster member's apply of a record its leader sent (the leader's push-journal entry: the pack
 * and index it wrote, and its ref's move from `old` to `new`), durably, before the member
 * acknowledges it. It is made as the member's own commits are (repository.ts), in the
 * repository's writers' queue, so it never runs beside the member's pack merge, loose-object
 * repack or catch-up fetch of the same repository: the pack is placed kept (`.keep`, which `git
 * repack` and the merge leave alone) and fsynced while the ref's lock is taken, then the ref
 * moved by a compare-and-swap against `old` under the lock, the pack folder fsynced before the
 * rename and the ref's folder after it (RefLock.swap), and only then is the `.keep` let go. So the ref never names a commit
 * whose objects are not durably in place. The member's copy is byte for byte the leader's (the
 * same pack name, the same commit ids).
 *
 * A ref already at `new` is the same record again ('already'); a ref anywhere else means the
 * member missed a record ('behind'): it does not acknowledge, and catches up by fetching.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import type { JournalEntry } from './journal/journalRecords.js';
import { readRef, RefLock } from './refs/refs.js';
import type { GitRepository } from './repository.js';

export type ApplyOutcome =
  | { readonly kind: 'applied' }
  | { readonly kind: 'already' }
  | { readonly kind: 'behind'; readonly head: string | null }
  | { readonly kind: 'missing' };

const REPOSITORY = /^[^/\\.][^/\\]*\/[^/\\]+\.git$/;
const BRANCH = /^refs\/heads\/[A-Za-z0-9._-]+$/;
/** A lock held by this member's own reader or another process is let go within this long. */
const LOCK_TRIES = 50;
const LOCK_PAUSE_MS = 20;

/**
 * Where the repository a record names is under `root` (`account/name.git`), when it is a folder
 * there; undefined when the record names none a member could hold, or this member has no folder.
 */
export function recordLocation(
  root: string,
  entry: JournalEntry,
): { account: string; name: string; gitdir: string } | undefined {
  const named = recordRepository(entry);
  if (!named) return undefined;
  const gitdir = join(root, entry.repository);
  return fs.lstatSync(gitdir, { throwIfNoEntry: false })?.isDirectory() ? { ...named, gitdir } : undefined;
}

/** The account and name a record's repository path (`account/name.git`) gives, if it is one a member could hold. */
export function recordRepository(entry: JournalEntry): { account: string; name: string } | undefined {
  if (!REPOSITORY.test(entry.repository) || !BRANCH.test(entry.ref)) return undefined;
  const [account, folder] = entry.repository.split('/');
  return { account, name: folder.slice(0, -'.git'.length) };
}

/** Applies a record in the repository's writers' queue (see the top of this file). */
export function applyReplicatedEntry(repository: GitRepository, entry: JournalEntry): Promise<ApplyOutcome> {
  return repository.exclusive(() => applyInTurn(repository, entry));
}

/** Applies a record; call inside `repository.exclusive` (a catch-up fetch and its apply share one turn). */
export async function applyInTurn(repository: GitRepository, entry: JournalEntry): Promise<ApplyOutcome> {
  const gitdir = repository.gitdir;
  if (!BRANCH.test(entry.ref) || !fs.lstatSync(gitdir, { throwIfNoEntry: false })?.isDirectory())
    return { kind: 'missing' };
  const head = readRef(gitdir, entry.ref);
  if (head === entry.new) return { kind: 'already' };
  if (head !== entry.old) return { kind: 'behind', head };
  // With the server's push journal, as the leader's own commit: the pack and the lock written
  // without fsyncs, the record appended to this member's journal with one fdatasync under the
  // lock, then the rename; the files are fsynced by the journal's checkpoint, and a power cut
  // before that is undone by the replay at the next start (journalReplay.ts). Without one, each
  // file and folder fsynced in turn.
  const journal = await repository.journalFile();
  let placed: Awaited<ReturnType<typeof repository.objects.placeKept>> | undefined;
  let moved = false;
  try {
    // The pack placed and the ref's lock taken at once, as for the leader's own commit
    // (repository.ts): the lock holds the new commit id, which no reader looks at before the rename.
    const [placing, locking] = await Promise.allSettled([
      repository.objects.placeKept(
        { name: entry.packName, pack: Buffer.from(entry.pack), index: Buffer.from(entry.index) },
        journal === undefined,
      ),
      RefLock.acquire(gitdir, entry.ref, entry.new, journal === undefined),
    ]);
    if (placing.status === 'fulfilled') placed = placing.value;
    if (placing.status === 'rejected' || locking.status === 'rejected') {
      if (locking.status === 'fulfilled' && locking.value !== 'locked') await locking.value.release();
      throw placing.status === 'rejected' ? placing.reason : (locking as PromiseRejectedResult).reason;
    }
    let lock = locking.value;
    for (let attempt = 0; lock === 'locked'; attempt++) {
      if (attempt >= LOCK_TRIES) return { kind: 'behind', head: readRef(gitdir, entry.ref) };
      await new Promise((resolve) => setTimeout(resolve, LOCK_PAUSE_MS));
      lock = await RefLock.acquire(gitdir, entry.ref, entry.new, journal === undefined);
    }
    const update = journal
      ? await lock.swap(entry.old, ({ before, after }) => journal.append({ ...entry, before, after }))
      : await lock.swap(entry.old, [repository.objects.packFolder]);
    if (update.ok) {
      moved = true;
      const refFile = repository.refFile(entry.ref);
      update.ticket?.committed(
        [...repository.objects.packPaths(entry.packName), refFile],
        [repository.objects.packFolder, dirname(refFile)],
      );
      return { kind: 'applied' };
    }
    const now = readRef(gitdir, entry.ref);
    return now === entry.new ? { kind: 'already' } : { kind: 'behind', head: now };
  } finally {
    journal?.letGo();
    // As for a commit (repository.ts): a pack whose ref did not move stays kept, as the same
    // record applied again writes the very same pack; a later merge removes the `.keep` as a leftover.
    if (moved) {
      await placed?.keep.release();
      repository.movedInTurn();
    }
  }
}
