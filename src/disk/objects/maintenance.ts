/**
 * When a repository's packs are merged and its loose objects packed: scheduled between writers
 * (through the repository's writer queue), never inside a push's answer. What it does is in
 * consolidatePacks.ts and looseObjects.ts; this file only decides when, and keeps the last failure.
 */
import { consolidatePacks, PACKS_BEFORE_MERGE } from './consolidatePacks.js';
import { looseObjectSample, packLooseObjects, samplePerLimit } from './looseObjects.js';
import type { ObjectStore } from './objectStore.js';

/** Runs work after every earlier writer of the repository in this process, before the next. */
export type WriterQueue = <T>(work: () => Promise<T>) => Promise<T>;

export class Maintenance {
  private repackQueued = false;
  /** Loose objects in the sampled folder after the last repack. */
  private looseBaseline = 0;
  private repackProblem: unknown;
  private mergeProblem: unknown;

  constructor(
    private readonly objects: ObjectStore,
    private readonly gitdir: string,
    private readonly exclusive: WriterQueue,
    /** Loose objects (as `git gc --auto` estimates them) above which the repository is repacked; undefined: never. */
    private readonly looseObjectLimit: number | undefined,
  ) {}

  /** After a push's commit: merges small packs once enough of them were written. */
  afterCommit(): void {
    if (this.objects.packsWritten >= PACKS_BEFORE_MERGE) this.scheduleMerge();
  }

  /**
   * Merges small packs after the current writer, before the next one, without holding up the
   * push that triggered it. A failure leaves the packs as they were, which is always safe; it is
   * kept for `problem` and tried again after the next pushes.
   */
  private scheduleMerge(): void {
    this.objects.packsWritten = 0;
    this.exclusive(() => consolidatePacks(this.objects)).then(
      () => (this.mergeProblem = undefined),
      (error: unknown) => (this.mergeProblem = error),
    );
  }

  /**
   * After a new head was seen (it may come from a plain-git writer, who leaves loose objects):
   * repacks the repository after the current writer, before the next one, when plain-git writers
   * left more loose objects than the limit since the last repack (objects it cannot pack, being
   * unreachable, are not counted again: the sample left behind is the new baseline).
   */
  afterNewHead(): void {
    const limit = this.looseObjectLimit;
    if (limit === undefined || this.repackQueued) return;
    if (looseObjectSample(this.gitdir) <= this.looseBaseline + samplePerLimit(limit)) return;
    this.repackQueued = true;
    this.exclusive(async () => {
      try {
        await packLooseObjects(this.gitdir);
      } finally {
        this.looseBaseline = looseObjectSample(this.gitdir);
        this.objects.resetCache();
      }
    })
      .then(
        () => (this.repackProblem = undefined),
        (error: unknown) => (this.repackProblem = error),
      )
      .finally(() => (this.repackQueued = false));
  }

  /** Why the last pack consolidation, the removal of the packs it merged, or the last repack failed, if one did. */
  get problem(): unknown {
    return this.mergeProblem ?? this.repackProblem ?? this.objects.removalProblem;
  }
}
