/**
 * A cluster member's apply of a record its leader sent (the leader's push-journal entry: the pack
 * and index it wrote, and its ref's move from `old` to `new`), durably, before the member
 * acknowledges it: the pack and its index written and fsynced, then the ref moved by a
 * compare-and-swap against `old` under git's lock, the pack folder fsynced before the rename and
 * the ref's folder after it (RefLock.swap). The member's copy is then byte for byte the leader's
 * (the same pack name, the same commit ids).
 *
 * A ref already at `new` is the same record again ('already'); a ref anywhere else means the
 * member missed a record ('behind'): it does not acknowledge, and catches up by fetching.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { JournalEntry } from './journal/journalRecords.js';
import { ObjectStore } from './objects/objectStore.js';
import { readRef, RefLock } from './refs/refs.js';

export type ApplyOutcome =
  | { readonly kind: 'applied' }
  | { readonly kind: 'already' }
  | { readonly kind: 'behind'; readonly head: string | null }
  | { readonly kind: 'missing' };

const REPOSITORY = /^[^/\\.][^/\\]*\/[^/\\]+\.git$/;
const BRANCH = /^refs\/heads\/[A-Za-z0-9._-]+$/;
/** A lock held by this member's own reader or fetch is let go within this long. */
const LOCK_TRIES = 50;
const LOCK_PAUSE_MS = 20;

export async function applyReplicatedEntry(root: string, entry: JournalEntry): Promise<ApplyOutcome> {
  if (!REPOSITORY.test(entry.repository) || !BRANCH.test(entry.ref)) return { kind: 'missing' };
  const gitdir = join(root, entry.repository);
  if (!fs.lstatSync(gitdir, { throwIfNoEntry: false })?.isDirectory()) return { kind: 'missing' };
  const head = readRef(gitdir, entry.ref);
  if (head === entry.new) return { kind: 'already' };
  if (head !== entry.old) return { kind: 'behind', head };
  const store = new ObjectStore(gitdir);
  try {
    await store.writePackDurably({
      name: entry.packName,
      pack: Buffer.from(entry.pack),
      index: Buffer.from(entry.index),
    });
    for (let attempt = 0; ; attempt++) {
      const lock = await RefLock.acquire(gitdir, entry.ref, entry.new, true);
      if (lock === 'locked') {
        if (attempt >= LOCK_TRIES) return { kind: 'behind', head: readRef(gitdir, entry.ref) };
        await new Promise((resolve) => setTimeout(resolve, LOCK_PAUSE_MS));
        continue;
      }
      const update = await lock.swap(entry.old, [store.packFolder]);
      if (update.ok) return { kind: 'applied' };
      const now = readRef(gitdir, entry.ref);
      return now === entry.new ? { kind: 'already' } : { kind: 'behind', head: now };
    }
  } finally {
    store.resetCache();
  }
}
