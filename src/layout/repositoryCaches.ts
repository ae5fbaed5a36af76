/**
 * Every in-memory cache of one repository, in one place: owned by its GitRepository (which the
 * registry keeps for the life of the process), so a newcomer finds them here and each has a
 * bound. Everything cached is keyed by an object or commit id, and git objects never change, so
 * no entry is ever stale; the bounds only cap memory. Least recently used entries go first
 * (lru-cache). The bounds and what they cost are listed in the README ("Memory").
 */
import { LRUCache } from 'lru-cache';
import type { ParsedCommit } from '../git/gitObjects.js';
import type { KeyRecord, RepoSettings } from '../domain/model.js';
import type { Snapshot } from './snapshot.js';

/** Snapshots kept besides the newest: enough for reads that started before a push. */
export const SNAPSHOTS_KEPT = 4;
/** Parsed commits, by the bytes of their messages and authors (history walks, time travel). */
export const COMMIT_BYTES_KEPT = 16 * 1024 * 1024;
/** Parsed trees and key documents each, for diffs and history (see treeDiff.ts). */
export const PARSED_OBJECTS_KEPT = 4096;
/** Settings read without a snapshot, by commit (the heads history was asked of lately). */
export const SETTINGS_KEPT = 16;
/** What tag objects come to (peeled tags). */
export const PEELED_TAGS_KEPT = 10_000;

/** A commit, tag or tree's worth of bookkeeping besides its text. */
const COMMIT_OVERHEAD = 200;

/**
 * A cache bounded by its number of entries, that allocates as it fills. lru-cache's own `max`
 * allocates its tables for `max` entries when the cache is made: for the caches below, about
 * 2.3 ms of every repository a new registry opens (42,000 slots), most of the first history
 * page of a new server. Counting each entry as 1 against `maxSize` keeps the same
 * bound without that.
 */
function byCount<V extends {}>(
  max: number,
  options: Omit<LRUCache.Options<string, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<string, V> {
  return new LRUCache<string, V>({ ...options, maxSize: max, sizeCalculation: () => 1 });
}

/** What a tag ref's object comes to; `peeled` null when it is not a commit. */
export interface PeeledTag {
  readonly peeled: { readonly commitId: string; readonly created: string; readonly message: string } | null;
}

/**
 * A cache a layer above the store keeps per repository (the service's commit summaries): named
 * once, as a module constant, so its bound is written where its values are made.
 */
export class CacheSlot<V extends {}> {
  constructor(
    readonly name: string,
    readonly max: number,
  ) {}
  /** Only for the type: a slot's cache holds values of type V. */
  declare private readonly value?: V;
}

/**
 * A tree of a built snapshot, made again from the snapshot when asked for; undefined once that
 * part of the snapshot is gone from memory (held weakly, so that an entry never keeps a snapshot
 * the snapshots cache let go: treeDiff.ts).
 */
export type TreeOfSnapshot = () => Buffer | undefined;

export class RepositoryCaches {
  /*
   * Each cache is made on first use: a new server's listing opens every repository of the folder
   * and most of them are never read further (their listing comes from a summary file), and making
   * seven caches for each of 1,000 repositories was a sixth of that listing's time and garbage.
   */
  #snapshots?: LRUCache<string, Promise<Snapshot>>;
  #commits?: LRUCache<string, ParsedCommit>;
  #peeledTags?: LRUCache<string, PeeledTag>;
  #trees?: LRUCache<string, Promise<Buffer>>;
  #keys?: LRUCache<string, Promise<KeyRecord>>;
  #treesOfSnapshots?: LRUCache<string, TreeOfSnapshot>;
  #settingsOfCommits?: LRUCache<string, RepoSettings>;
  #learnedSnapshots?: WeakSet<Snapshot>;

  /** Snapshots by commit id, as promises so concurrent reads share one build. */
  get snapshots(): LRUCache<string, Promise<Snapshot>> {
    return (this.#snapshots ??= byCount<Promise<Snapshot>>(SNAPSHOTS_KEPT, {
      // A snapshot replaced by the same commit's is set in `built` again by its maker.
      dispose: (_snapshot, commitId, reason) => {
        if (reason !== 'set') this.built.delete(commitId);
      },
    }));
  }
  /** The snapshots of `snapshots` that are built, for readers that must not wait or read. */
  readonly built = new Map<string, Snapshot>();
  get commits(): LRUCache<string, ParsedCommit> {
    return (this.#commits ??= new LRUCache<string, ParsedCommit>({
      maxSize: COMMIT_BYTES_KEPT,
      sizeCalculation: (commit) =>
        COMMIT_OVERHEAD + commit.message.length + commit.author.name.length + commit.author.email.length,
    }));
  }
  get peeledTags(): LRUCache<string, PeeledTag> {
    return (this.#peeledTags ??= byCount<PeeledTag>(PEELED_TAGS_KEPT));
  }
  /** Trees as stored (their bytes: treePairs.ts compares them where they lie). */
  get trees(): LRUCache<string, Promise<Buffer>> {
    return (this.#trees ??= byCount<Promise<Buffer>>(PARSED_OBJECTS_KEPT));
  }
  get keys(): LRUCache<string, Promise<KeyRecord>> {
    return (this.#keys ??= byCount<Promise<KeyRecord>>(PARSED_OBJECTS_KEPT));
  }
  /** Trees of built snapshots (the root, `keys`, each shard), made from the snapshot when asked for while it is in memory. */
  get treesOfSnapshots(): LRUCache<string, TreeOfSnapshot> {
    return (this.#treesOfSnapshots ??= byCount<TreeOfSnapshot>(PARSED_OBJECTS_KEPT));
  }
  /** Settings read alone (readSettings.ts), by commit id: what a history request's access check needs. */
  get settingsOfCommits(): LRUCache<string, RepoSettings> {
    return (this.#settingsOfCommits ??= byCount<RepoSettings>(SETTINGS_KEPT));
  }
  /** Snapshots whose trees were offered to `treesOfSnapshots` already (weak: gone with the snapshot). */
  get learnedSnapshots(): WeakSet<Snapshot> {
    return (this.#learnedSnapshots ??= new WeakSet<Snapshot>());
  }
  private readonly slots = new Map<CacheSlot<{}>, LRUCache<string, {}>>();

  /** The cache of a slot, made on first use. */
  slot<V extends {}>(slot: CacheSlot<V>): LRUCache<string, V> {
    let cache = this.slots.get(slot);
    if (!cache) this.slots.set(slot, (cache = byCount<{}>(slot.max)));
    return cache as unknown as LRUCache<string, V>;
  }
}
