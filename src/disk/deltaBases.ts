/**
 * Delta bases of every open pack, kept for the whole process within one budget of bytes, least
 * recently used dropped first (git's core.deltaBaseCacheLimit keeps up to 96 MiB the same way).
 *
 * Why it matters (issue 22): `git repack` and `git gc` store most versions of an object as a delta
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

/** The bytes of bases kept, in all. */
export const DELTA_BASE_BYTES = 16 * 1024 * 1024;
/** A kept base's bookkeeping besides its bytes. */
const OVERHEAD = 100;

const bases = new LRUCache<string, StoredObject>({
  maxSize: DELTA_BASE_BYTES,
  sizeCalculation: (base) => base.content.length + OVERHEAD,
});

let nextPack = 0;

/** The bases of one open pack, by entry offset. */
export class PackBases {
  private readonly prefix = `${(nextPack++).toString(36)}:`;

  get(offset: number): StoredObject | undefined {
    return bases.get(this.prefix + offset);
  }

  set(offset: number, base: StoredObject): void {
    bases.set(this.prefix + offset, base);
  }

  /** Drops this pack's bases (when it is closed: packs are closed only when git removed them). */
  clear(): void {
    for (const key of [...bases.keys()]) if (key.startsWith(this.prefix)) bases.delete(key);
  }
}
