/**
 * The bytes of open packs held in memory (packs read whole, the windows of larger ones, and every
 * open pack's index), for the whole process within one budget, as git bounds the packs it maps
 * (core.packedGitLimit). When opening a pack or reading a window takes the total over the budget,
 * the packs of the repository read least recently are closed, then the next, until it fits: their
 * next read lists the pack folder and opens them again, as a new server's first read does (a pack
 * of 400 KiB: well under a millisecond). The repository being read is never the one closed.
 *
 * Why: a pack under 4 MiB is read whole when opened and was kept for the repository's
 * life. Once a repository's snapshot is built, its pulls never read the pack again, yet each of
 * the 100 repositories of the bench's `memory` scenario kept its 450 KiB: 45 MB per process, and
 * as much again in each worker of `serve --workers N`; a server of 1,000 such repositories would
 * have kept 450 MB.
 *
 * One holder per repository's object store (objectStore.ts); all reads are synchronous, so a
 * holder closed by another repository's read is never in the middle of one of its own.
 */

/** The server's budget: each worker of `serve --workers N` has its share (setHeldPacksBudget). */
export const HELD_PACKS_BYTES = 32 * 1024 * 1024;

let budget = HELD_PACKS_BYTES;
let total = 0;
let clock = 0;
const holders = new Set<PackHolder>();

/** This process's budget: `HELD_PACKS_BYTES` divided among the server's worker processes. */
export function setHeldPacksBudget(workers = 1): void {
  budget = Math.floor(HELD_PACKS_BYTES / Math.max(1, workers));
}

/** This process's budget, in bytes. */
export function heldPacksBudget(): number {
  return budget;
}

/** What the packs of every holder hold now, in bytes (metrics and tests). */
export function heldPackBytes(): number {
  return total;
}

/** For tests: a budget of `bytes` until the function returned is called, which puts the old one back. */
export function useHeldPacksBudget(bytes: number): () => void {
  const before = budget;
  budget = bytes;
  return () => {
    budget = before;
  };
}

/** The packs one object store holds open. `close` closes them all (ObjectStore.resetCache), which calls `releaseAll`. */
export class PackHolder {
  private bytes = 0;
  private lastUse = 0;

  constructor(private readonly close: () => void) {}

  /** What its packs hold in memory now, in bytes. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Its packs were read: the last to be closed. */
  used(): void {
    this.lastUse = ++clock;
  }

  /** Its packs hold `bytes` more (a pack opened, a window read); packs of others closed if over budget. */
  hold(bytes: number): void {
    if (bytes <= 0) return;
    holders.add(this);
    this.bytes += bytes;
    total += bytes;
    this.used();
    while (total > budget) {
      let oldest: PackHolder | undefined;
      for (const holder of holders)
        if (holder !== this && (!oldest || holder.lastUse < oldest.lastUse)) oldest = holder;
      if (!oldest) return; // this store alone is over budget: its packs stay while it reads
      oldest.close();
      oldest.releaseAll(); // in case `close` held nothing it counted
    }
  }

  /** Some of its packs were closed (gone from the folder, merged). */
  release(bytes: number): void {
    const released = Math.min(bytes, this.bytes);
    this.bytes -= released;
    total -= released;
    if (this.bytes === 0) holders.delete(this);
  }

  /** All its packs were closed. */
  releaseAll(): void {
    this.release(this.bytes);
  }
}
