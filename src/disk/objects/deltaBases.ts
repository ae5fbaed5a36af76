/**
 * Delta bases of every open pack, kept for the whole process within one budget of bytes, least
 * recently used dropped first (git's core.deltaBaseCacheLimit keeps up to 96 MiB the same way).
 *
 * Why it matters: `git repack` and `git gc` store most versions of an object as a delta
 * of another, in chains up to git's default depth of 50. Walking history back, each version of
 * the `keys` tree (about 8 KiB for 1,000 keys) is the base of the one before it, so a page of 50
 * commits needs a few hundred bases at hand. With 128 bases kept per pack, as before, a page
 * resolved about four objects for each one it read; with this budget, about 1.3.
 *
 * One budget for all packs, not one per pack: a server with many repacked repositories keeps no
 * more than this. Entries are keyed by the pack instance, so a pack opened again (after a repack)
 * never sees another's; a closed pack's entries are dropped with it.
 */
import { LRUCache } from 'lru-cache';
import type { StoredObject } from './packFile.js';
import { ownBytes } from '../../lib/ownCopies.js';

/** The bytes of bases kept, in all. */
export const DELTA_BASE_BYTES = 16 * 1024 * 1024;
/** A kept base's bookkeeping besides its bytes. */
const OVERHEAD = 100;

/**
 * The keys each open pack has in `bases`, by the pack's prefix, so that closing a pack deletes its
 * own entries rather than looking through everyone's (a server stopping closes the packs of every
 * repository it opened). An entry pushed out of `bases` leaves its pack's set too.
 */
const keysOfPacks = new Map<string, Set<string>>();

const bases = new LRUCache<string, StoredObject>({
  maxSize: DELTA_BASE_BYTES,
  sizeCalculation: (base) => base.content.length + OVERHEAD,
  dispose: (_base, key, reason) => {
    if (reason === 'set') return; // replaced by the same key's new value
    const prefix = key.slice(0, key.indexOf(':') + 1);
    const keys = keysOfPacks.get(prefix);
    if (keys?.delete(key) && keys.size === 0) keysOfPacks.delete(prefix);
  },
});

let nextPack = 0;

/** The bases of one open pack, by entry offset. */
export class PackBases {
  private readonly prefix = `${(nextPack++).toString(36)}:`;

  get(offset: number): StoredObject | undefined {
    return bases.get(this.prefix + offset);
  }

  set(offset: number, base: StoredObject): void {
    const key = this.prefix + offset;
    let keys = keysOfPacks.get(this.prefix);
    if (!keys) keysOfPacks.set(this.prefix, (keys = new Set()));
    keys.add(key);
    // Kept for long: not a view into a larger buffer, which it would keep whole (ownCopies.ts).
    bases.set(key, { type: base.type, content: ownBytes(base.content) });
  }

  /** Drops this pack's bases (when it is closed: git removed it, or its repository is closed). */
  clear(): void {
    const keys = keysOfPacks.get(this.prefix);
    keysOfPacks.delete(this.prefix);
    for (const key of keys ?? []) bases.delete(key);
  }
}
