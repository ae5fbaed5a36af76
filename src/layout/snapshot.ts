/**
 * An immutable, parsed view of a repository at one commit. Cached by commit id, so it can never
 * go stale: a new commit is a new snapshot. Snapshots share unchanged parts (shards, parsed keys)
 * with the snapshot they were derived from.
 */
import { contextId } from '../domain/context.js';
import {
  fileId,
  type FileRecord,
  type KeyRecord,
  type RepoSettings,
  type RepositoryState,
  type SecurityGroup,
} from '../domain/model.js';
import type { RuleSet } from '../domain/accessRules.js';
import type { SchemaDocument } from '../domain/schemas.js';
import { groupIndexOf, type ContextGroup, type GroupIndex } from '../domain/contextGroups.js';
import type { SerializedTree, TreeEntry } from '../git/gitObjects.js';
import { keyShard } from './layout.js';
import { sortSteps } from '../lib/sortSteps.js';
import type { Steps } from '../lib/steps.js';

export interface KeyEntry {
  /** The blob's name in its shard tree. */
  readonly fileName: string;
  readonly blobId: string;
  readonly record: KeyRecord;
}

/** One folder `keys/<xx>`: the keys whose lower-cased name hashes to xx. */
export interface Shard {
  readonly treeId: string;
  readonly byId: ReadonlyMap<string, KeyEntry>;
  readonly valueCount: number;
  /** The shard's tree serialized, when it was staged: the next commit that changes only its keys' values patches it (stageCommit.ts). */
  readonly tree?: SerializedTree;
}

export interface FileEntry {
  readonly blobId: string;
  readonly record: FileRecord;
}

/** A shard; `valueCount` when the caller kept it (staging does), else counted from its keys. */
export function makeShard(
  treeId: string,
  byId: ReadonlyMap<string, KeyEntry>,
  tree?: SerializedTree,
  valueCount = countValues(byId),
): Shard {
  return { treeId, byId, valueCount, tree };
}

function countValues(byId: ReadonlyMap<string, KeyEntry>): number {
  let count = 0;
  for (const entry of byId.values()) count += entry.record.values.length;
  return count;
}

export interface SnapshotParts {
  readonly commitId: string;
  readonly treeId: string;
  /** Root tree entries other than the ones cfghub manages, kept as they are. */
  readonly otherRootEntries: readonly TreeEntry[];
  readonly settings: RepoSettings;
  readonly settingsBlobId: string;
  readonly securityGroups: readonly SecurityGroup[];
  /** The blob `security-groups.yaml`, absent when the repository has no groups. */
  readonly securityGroupsBlobId: string | undefined;
  /** Access rule sets (`access-rules.yaml`, absent when there are none). */
  readonly ruleSets: readonly RuleSet[];
  readonly ruleSetsBlobId: string | undefined;
  /** Context groups (`context-groups.yaml`, absent when there are none). */
  readonly contextGroups: readonly ContextGroup[];
  readonly contextGroupsBlobId: string | undefined;
  /** Schemas (`schemas.yaml`, absent when there are none). */
  readonly schemas: SchemaDocument;
  readonly schemasBlobId: string | undefined;
  readonly shards: ReadonlyMap<string, Shard>;
  /** The tree `keys`, absent when there are no keys. */
  readonly keysTreeId: string | undefined;
  /** The tree `keys` serialized, when this snapshot was staged: the next commit's `keys` tree is made from it (stageCommit.ts). */
  readonly keysTree?: SerializedTree;
  readonly fileEntries: ReadonlyMap<string, FileEntry>;
  /** The root entries `files` and `inactive-files`, when present. */
  readonly fileRootEntries: readonly TreeEntry[];
  /** Ids of every tree under files/ and inactive-files/, so unchanged ones are not written again. */
  readonly fileTreeIds: ReadonlySet<string>;
}

// The class gets every field of its parts (declaration merging), set by Object.assign.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface Snapshot extends SnapshotParts {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Snapshot implements RepositoryState {
  readonly keyCount: number;
  readonly valueCount: number;

  constructor(parts: SnapshotParts) {
    Object.assign(this, parts);
    this.groupIndex = undefined; // parts spread from another snapshot may carry its index
    this.sortedKeys = undefined; // and its sorted keys
    let keys = 0;
    let values = 0;
    for (const shard of this.shards.values()) {
      keys += shard.byId.size;
      values += shard.valueCount;
    }
    this.keyCount = keys;
    this.valueCount = values;
  }

  private groupIndex: GroupIndex | undefined;
  private sortedKeys: readonly KeyRecord[] | undefined;

  /** The context groups in force: empty when the repository has them off. */
  groups(): GroupIndex {
    return (this.groupIndex ??= groupIndexOf(this.settings, this.contextGroups));
  }

  key(id: string): KeyRecord | undefined {
    return this.shards.get(keyShard(id))?.byId.get(id)?.record;
  }

  *keys(): Iterable<KeyRecord> {
    for (const shard of this.shards.values()) for (const entry of shard.byId.values()) yield entry.record;
  }

  /**
   * The keys by name without regard to case (the order of a pull's and an export's answers), as
   * steps: sorted once per snapshot, by id (the lower-cased name, unique), in steps
   * (sortSteps.ts). Sorted for every new answer by a comparator that lower-cased both names, 40,000
   * keys were 35 to 50 ms of one piece of the event loop.
   */
  *keysByName(): Steps<readonly KeyRecord[]> {
    if (!this.sortedKeys) {
      const entries: [string, KeyRecord][] = [];
      for (const shard of this.shards.values()) for (const [id, entry] of shard.byId) entries.push([id, entry.record]);
      const sorted = yield* sortSteps(entries, (a, b) => a[0] < b[0]);
      this.sortedKeys ??= sorted.map((entry) => entry[1]);
    }
    return this.sortedKeys;
  }

  file(id: string): FileRecord | undefined {
    return this.fileEntries.get(id)?.record;
  }

  *files(): Iterable<FileRecord> {
    for (const entry of this.fileEntries.values()) yield entry.record;
  }
}

export function fileEntryId(record: FileRecord): string {
  return fileId(record.path, contextId(record.context));
}
