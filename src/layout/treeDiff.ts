/**
 * What changed between two root trees, found top-down by tree ids: a folder whose id is the same
 * on both sides is skipped whole, so a commit that changed one key reads the root, `keys`, one
 * shard and two key documents, whatever the size of the repository. Only changed key documents are
 * parsed; file contents are left as blob ids for the caller to read if it needs them.
 *
 * Content that breaks the layout rules (a document that does not parse, a key in the wrong shard,
 * a file outside a context folder) is not thrown: it is reported in `problems`, each naming the
 * file and the commit, and the rest of the change is still reported.
 */
import { contextId, type Context } from '../domain/context.js';
import { fileId, type KeyRecord } from '../domain/model.js';
import { isRepositoryDamage } from '../domain/errors.js';
import { BLOB_MODE, isTreeEntry, serializeTree, TREE_MODE, type TreeEntry } from '../git/gitObjects.js';
import {
  decodeFilePath,
  FILES_FOLDER,
  INACTIVE_FILES_FOLDER,
  KEYS_FOLDER,
  keyShard,
  parseContextFolderName,
  parseKey,
  SECURITY_GROUPS_FILE,
  SETTINGS_FILE,
} from './layout.js';
import type { LRUCache } from 'lru-cache';
import { SCHEMAS_FILE } from './schemaLayout.js';
import { ACCESS_RULES_FILE, CONTEXT_GROUPS_FILE } from './accessLayout.js';
import type { ObjectReader, RepositoryReader } from './objectReader.js';
import type { RepositoryCaches, TreeOfSnapshot } from './repositoryCaches.js';
import type { Shard, Snapshot } from './snapshot.js';
import { changedEntries, type EntryPair } from '../git/treePairs.js';
import { TimeSlices } from '../lib/timeSlices.js';
import { sortSteps } from '../lib/sortSteps.js';
import { ownBytes } from '../lib/ownCopies.js';

export interface KeyChange {
  /** The key's id (lower-cased name). */
  readonly id: string;
  readonly before: KeyRecord | null;
  readonly after: KeyRecord | null;
}

export interface FileSide {
  readonly active: boolean;
  readonly blobId: string;
}

export interface FileChange {
  /** The file variant's id (path and context), as Snapshot.fileEntries keys it. */
  readonly id: string;
  readonly path: string;
  readonly context: Context;
  readonly before: FileSide | null;
  readonly after: FileSide | null;
}

export interface TreeChanges {
  readonly keys: readonly KeyChange[];
  readonly files: readonly FileChange[];
  /** Whether `repository.yaml` changed. */
  readonly settingsChanged: boolean;
  /** Root entries cfghub does not manage that were added, changed or removed. */
  readonly otherPaths: readonly string[];
  /** Layout problems met on the way, each naming the file and the commit. */
  readonly problems: readonly string[];
}

/** The two commits compared, to name them in problems; `before` is absent for a first commit. */
export interface DiffSide {
  readonly commitId: string;
  readonly treeId: string;
  /** The commit's snapshot, when one is built: its trees and key documents are then not read. */
  readonly snapshot?: Snapshot;
}

export interface DiffSides {
  readonly before?: DiffSide;
  readonly after: DiffSide;
}

const MANAGED = new Set([SETTINGS_FILE, KEYS_FOLDER, FILES_FOLDER, INACTIVE_FILES_FOLDER]);
const EMPTY_TREE = Buffer.alloc(0);

/**
 * The shards of key ids met, so that checking a key document's shard hashes its id once, not once
 * per commit that changed it (a SHA-1 call was a tenth of a history page). A pure function's
 * memory, not a repository's: cleared whole when it reaches its bound.
 */
const SHARDS = new Map<string, string>();
const SHARDS_KEPT = 20_000;

function shardOf(id: string): string {
  let shard = SHARDS.get(id);
  if (shard === undefined) {
    if (SHARDS.size >= SHARDS_KEPT) SHARDS.clear();
    SHARDS.set(id, (shard = keyShard(id)));
  }
  return shard;
}

/**
 * A tree of a built snapshot (its root, its `keys` tree or a shard), made again from that part of
 * the snapshot when asked for (serializeTree puts the entries in git's order), and undefined once
 * the part is gone from memory: the tree is then read from the store. The part is held weakly.
 * Held by a closure, each of the 4,096 entries a repository keeps kept its whole snapshot (the
 * closures made for one snapshot share one scope): with 16 clients pushing into two
 * repositories, over a thousand snapshots per repository where the snapshots cache keeps 5, the
 * server's memory growing by 70 MiB in 30 s. Made here, the closure holds the weak reference
 * and `entriesOf` only, never the part itself.
 */
function treeOfPart<P extends object>(part: P, entriesOf: (part: P) => TreeEntry[]): TreeOfSnapshot {
  const weak = new WeakRef(part);
  return () => {
    const held = weak.deref();
    return held && serializeTree(entriesOf(held));
  };
}

function rootEntries(snapshot: Snapshot): TreeEntry[] {
  return [
    ...snapshot.otherRootEntries,
    { name: SETTINGS_FILE, mode: BLOB_MODE, oid: snapshot.settingsBlobId },
    ...(snapshot.securityGroupsBlobId
      ? [{ name: SECURITY_GROUPS_FILE, mode: BLOB_MODE, oid: snapshot.securityGroupsBlobId }]
      : []),
    ...(snapshot.ruleSetsBlobId ? [{ name: ACCESS_RULES_FILE, mode: BLOB_MODE, oid: snapshot.ruleSetsBlobId }] : []),
    ...(snapshot.contextGroupsBlobId
      ? [{ name: CONTEXT_GROUPS_FILE, mode: BLOB_MODE, oid: snapshot.contextGroupsBlobId }]
      : []),
    ...(snapshot.schemasBlobId ? [{ name: SCHEMAS_FILE, mode: BLOB_MODE, oid: snapshot.schemasBlobId }] : []),
    ...(snapshot.keysTreeId ? [{ name: KEYS_FOLDER, mode: TREE_MODE, oid: snapshot.keysTreeId }] : []),
    ...snapshot.fileRootEntries,
  ];
}

function keysEntries(snapshot: Snapshot): TreeEntry[] {
  return [...snapshot.shards].map(([name, shard]) => ({ name, mode: TREE_MODE, oid: shard.treeId }));
}

/**
 * Trees (their stored bytes: see treePairs.ts) and parsed key documents by object id, kept in the
 * repository's caches (repositoryCaches.ts, bounded there). Walking history newest first, the
 * "before" side of one commit is the "after" side of an older one, so each tree and each key
 * version is read once rather than twice. Promises are kept, so concurrent diffs share a read.
 */
class ParsedObjects {
  private readonly trees: RepositoryCaches['trees'];
  private readonly keys: RepositoryCaches['keys'];
  /** Trees of built snapshots (the root, `keys`, each shard), made from the snapshot when asked for. */
  private readonly fromSnapshots: RepositoryCaches['treesOfSnapshots'];
  private readonly learned: WeakSet<Snapshot>;

  constructor(
    private readonly objects: ObjectReader,
    caches: RepositoryCaches,
  ) {
    this.trees = caches.trees;
    this.keys = caches.keys;
    this.fromSnapshots = caches.treesOfSnapshots;
    this.learned = caches.learnedSnapshots;
  }

  /**
   * Lets the trees and key documents of a built snapshot (the head's, one just pushed) be taken
   * from it rather than read, while it is in memory. Shards are shared between snapshots, so each
   * is added once.
   */
  learn(snapshot: Snapshot): void {
    if (this.learned.has(snapshot)) return;
    this.learned.add(snapshot);
    this.offer(snapshot.treeId, snapshot, rootEntries);
    if (snapshot.keysTreeId) this.offer(snapshot.keysTreeId, snapshot, keysEntries);
    for (const shard of snapshot.shards.values()) this.offer(shard.treeId, shard, this.shardEntries);
  }

  /** A shard's entries; its key documents are known from then on without being read. */
  private readonly shardEntries = (shard: Shard): TreeEntry[] =>
    [...shard.byId.values()].map((entry) => {
      if (!this.keys.has(entry.blobId)) this.keys.set(entry.blobId, Promise.resolve(entry.record));
      return { name: entry.fileName, mode: BLOB_MODE, oid: entry.blobId };
    });

  private offer<P extends object>(oid: string, part: P, entriesOf: (part: P) => TreeEntry[]): void {
    if (this.trees.has(oid) || this.fromSnapshots.has(oid)) return;
    this.fromSnapshots.set(oid, treeOfPart(part, entriesOf));
  }

  /** A tree's stored bytes, in memory of their own: kept, a view into a larger buffer would keep it whole (ownCopies.ts). */
  tree(oid: string): Promise<Buffer> {
    return this.remember(this.trees, oid, async () => {
      const known = this.fromSnapshots.get(oid)?.();
      if (known) return ownBytes(known);
      const object = await this.objects.read(oid);
      if (object.type !== 'tree') throw new Error(`object ${oid.slice(0, 12)} is a ${object.type}, not a tree`);
      return ownBytes(object.content);
    });
  }

  /** A key document; a LayoutError naming `where` when it does not parse. Failures are not kept. */
  key(oid: string, where: string): Promise<KeyRecord> {
    return this.remember(this.keys, oid, async () =>
      parseKey((await this.objects.read(oid)).content.toString('utf8'), where),
    );
  }

  private remember<T extends {}>(cache: LRUCache<string, Promise<T>>, oid: string, load: () => Promise<T>): Promise<T> {
    let pending = cache.get(oid);
    if (!pending) {
      const loading = load();
      pending = loading;
      cache.set(oid, loading);
      loading.catch(() => {
        if (cache.peek(oid) === loading) cache.delete(oid);
      });
    }
    return pending;
  }
}

/**
 * `slices` gives the event loop a turn every slice of time: a commit that adds or changes tens of
 * thousands of keys reads and parses each of them (their reads need no thread pool, so nothing
 * else would yield).
 */
export async function diffTrees(
  repository: RepositoryReader,
  sides: DiffSides,
  slices = new TimeSlices(),
): Promise<TreeChanges> {
  const cache = new ParsedObjects(repository.objects, repository.caches);
  for (const side of [sides.before, sides.after]) if (side?.snapshot) cache.learn(side.snapshot);
  return new TreeDiff(cache, sides, slices).run();
}

class TreeDiff {
  private readonly keys: KeyChange[] = [];
  private readonly files = new Map<
    string,
    { path: string; context: Context; before: FileSide | null; after: FileSide | null }
  >();
  private readonly problems: string[] = [];
  private readonly otherPaths: string[] = [];
  private settingsChanged = false;

  constructor(
    private readonly objects: ParsedObjects,
    private readonly sides: DiffSides,
    private readonly slices: TimeSlices,
  ) {}

  private at(side: 'before' | 'after'): string {
    return `commit ${this.sides[side]!.commitId.slice(0, 12)}`;
  }

  async run(): Promise<TreeChanges> {
    for (const [b, a] of await this.changed(this.sides.before?.treeId, this.sides.after.treeId)) {
      const name = (b ?? a)!.name;
      if (name === SETTINGS_FILE) this.settingsChanged = true;
      else if (name === KEYS_FOLDER) await this.diffKeys(b, a);
      else if (name === FILES_FOLDER || name === INACTIVE_FILES_FOLDER) await this.diffFiles(name, b, a);
      if (!MANAGED.has(name)) this.otherPaths.push(name);
    }
    // Sorted in steps too: a commit may change every key of a repository (100,000 keys sorted by a
    // comparator in one call held the event loop for most of 72 ms).
    const keys = await this.slices.run(sortSteps(this.keys, (x, y) => x.id < y.id));
    const unsorted = [...this.files].map(([id, change]) => ({ id, ...change }));
    const files = await this.slices.run(
      sortSteps(unsorted, (x, y) => x.path < y.path || (x.path === y.path && x.id < y.id)),
    );
    return { keys, files, settingsChanged: this.settingsChanged, otherPaths: this.otherPaths, problems: this.problems };
  }

  /**
   * The entries that differ between two trees, paired by name (and kind: a file and a folder of
   * the same name are two entries), in one pass over both: git keeps a tree's entries sorted.
   */
  private async changed(before: string | undefined, after: string | undefined): Promise<EntryPair[]> {
    if (before === after) return [];
    const b = before === undefined ? EMPTY_TREE : await this.objects.tree(before);
    const a = after === undefined ? EMPTY_TREE : await this.objects.tree(after);
    return changedEntries(b, a);
  }

  /** The entry if it is a folder; a problem (and nothing) if it is a file where a folder belongs. */
  private folder(entry: TreeEntry | undefined, path: string, side: 'before' | 'after'): string | undefined {
    if (!entry) return undefined;
    if (isTreeEntry(entry)) return entry.oid;
    this.problems.push(`${path} is a file where a folder belongs, at ${this.at(side)}`);
    return undefined;
  }

  private async diffKeys(before: TreeEntry | undefined, after: TreeEntry | undefined): Promise<void> {
    const shards = await this.changed(
      this.folder(before, KEYS_FOLDER, 'before'),
      this.folder(after, KEYS_FOLDER, 'after'),
    );
    for (const [bs, as] of shards) {
      const shard = (bs ?? as)!.name;
      const path = `${KEYS_FOLDER}/${shard}`;
      for (const [bk, ak] of await this.changed(this.folder(bs, path, 'before'), this.folder(as, path, 'after'))) {
        const keyPath = `${path}/${(bk ?? ak)!.name}`;
        const beforeKey = await this.key(bk, keyPath, shard, 'before');
        const afterKey = await this.key(ak, keyPath, shard, 'after');
        if (beforeKey !== undefined && afterKey !== undefined) {
          const id = (afterKey ?? beforeKey)!.key.toLowerCase();
          this.keys.push({ id, before: beforeKey, after: afterKey });
        } // else reported as a problem
        const paused = this.slices.pause(); // undefined within a slice: no turn of the microtask queue per key
        if (paused) await paused;
      }
    }
  }

  /** The key document at an entry; null when absent, undefined when it breaks the layout (reported). */
  private async key(
    entry: TreeEntry | undefined,
    path: string,
    shard: string,
    side: 'before' | 'after',
  ): Promise<KeyRecord | null | undefined> {
    if (!entry) return null;
    const where = `${path} at ${this.at(side)}`;
    if (isTreeEntry(entry)) {
      this.problems.push(`${where}: a folder where a key document belongs`);
      return undefined;
    }
    try {
      // Parsed once per blob: the same document at another path is checked below all the same.
      const record = await this.objects.key(entry.oid, where);
      const expected = shardOf(record.key.toLowerCase());
      if (expected !== shard) {
        this.problems.push(`${where}: key ${record.key} belongs in ${KEYS_FOLDER}/${expected}`);
        return undefined;
      }
      return record;
    } catch (error) {
      if (isRepositoryDamage(error)) throw error;
      this.problems.push(
        (error as Error).message.startsWith(path) ? (error as Error).message : `${where}: ${(error as Error).message}`,
      );
      return undefined;
    }
  }

  private async diffFiles(top: string, before: TreeEntry | undefined, after: TreeEntry | undefined): Promise<void> {
    const active = top === FILES_FOLDER;
    const visit = (side: 'before' | 'after', segments: string[], blob: TreeEntry) => {
      const [contextFolder, ...pathSegments] = segments;
      if (pathSegments.length === 0) {
        this.problems.push(`${top}/${contextFolder} is not inside a context folder, at ${this.at(side)}`);
        return;
      }
      const path = decodeFilePath(pathSegments);
      const context = parseContextFolderName(contextFolder);
      const id = fileId(path, contextId(context));
      let change = this.files.get(id);
      if (!change) this.files.set(id, (change = { path, context, before: null, after: null }));
      change[side] = { active, blobId: blob.oid };
    };
    await this.walk(this.folder(before, top, 'before'), this.folder(after, top, 'after'), [], visit);
  }

  /** Visits every blob that differs between two folders, on the side it is found. */
  private async walk(
    before: string | undefined,
    after: string | undefined,
    segments: string[],
    visit: (side: 'before' | 'after', segments: string[], blob: TreeEntry) => void,
  ): Promise<void> {
    for (const [be, ae] of await this.changed(before, after)) {
      const path = [...segments, (be ?? ae)!.name];
      const folderOf = (entry: TreeEntry | undefined) => (entry && isTreeEntry(entry) ? entry.oid : undefined);
      if (folderOf(be) !== undefined || folderOf(ae) !== undefined)
        await this.walk(folderOf(be), folderOf(ae), path, visit);
      if (be && !isTreeEntry(be)) visit('before', path, be);
      if (ae && !isTreeEntry(ae)) visit('after', path, ae);
      const paused = this.slices.pause();
      if (paused) await paused;
    }
  }
}
