/**
 * Turns a push's changes into git objects on top of a snapshot: blobs for changed keys and files,
 * only the trees on the paths they change (the key's shard, `keys`, the root; the files trees when
 * a file changed), and the commit. Nothing is written here: the caller writes the objects durably
 * and then moves the ref.
 */
import { inStorageOrder } from '../domain/context.js';
import { runSteps, type Steps } from '../lib/steps.js';
import type { FileRecord, PushChanges } from '../domain/model.js';
import {
  BLOB_MODE,
  encodeObject,
  serializeCommit,
  SerializedTree,
  serializeTree,
  TREE_MODE,
  type EncodedObject,
  type Signature,
  type TreeEntry,
} from '../git/gitObjects.js';
import {
  contextFolderName,
  encodeFilePath,
  FILES_FOLDER,
  filesFolder,
  INACTIVE_FILES_FOLDER,
  KEYS_FOLDER,
  keyFileName,
  keyShard,
  SECURITY_GROUPS_FILE,
  serializeFileContent,
  serializeKey,
  serializeSecurityGroups,
  serializeSettings,
  SETTINGS_FILE,
} from './layout.js';
import { SCHEMAS_FILE, serializeSchemas } from './schemaLayout.js';
import { hasSchemas } from '../domain/schemas.js';
import {
  ACCESS_RULES_FILE,
  CONTEXT_GROUPS_FILE,
  contextGroupsInStoredOrder,
  ruleSetsInStoredOrder,
  serializeContextGroups,
  serializeRuleSets,
} from './accessLayout.js';
import { makeShard, Snapshot, type FileEntry, type KeyEntry, type Shard } from './snapshot.js';

export interface CommitInfo {
  readonly message: string;
  readonly author: Signature;
}

export interface StagedCommit {
  /** Objects to write, none of which the repository is known to hold already. */
  readonly objects: readonly EncodedObject[];
  /** Null when the push changes nothing: same tree as its parent. */
  readonly commitId: string | null;
  /** The snapshot of the new commit, once it is the head. */
  readonly snapshot: Snapshot;
}

export function stageCommit(base: Snapshot, changes: PushChanges, info: CommitInfo): StagedCommit {
  return runSteps(stageCommitSteps(base, changes, info));
}

/**
 * stageCommit as steps (src/lib/steps.ts): a pause is safe after each key document, shard,
 * file and folder serialized and hashed, so a push of 10,000 keys is staged in slices.
 */
export function* stageCommitSteps(base: Snapshot, changes: PushChanges, info: CommitInfo): Steps<StagedCommit> {
  const objects: EncodedObject[] = [];
  const shards = yield* stageKeys(base, changes, objects);
  const files = changes.files.size > 0 ? yield* stageFiles(base, changes, objects) : undefined;

  const root: TreeEntry[] = [...base.otherRootEntries];
  const documents = stageDocuments(base, changes, objects);
  root.push({ name: SETTINGS_FILE, mode: BLOB_MODE, oid: documents.settingsBlobId });
  if (documents.ruleSetsBlobId) root.push({ name: ACCESS_RULES_FILE, mode: BLOB_MODE, oid: documents.ruleSetsBlobId });
  if (documents.contextGroupsBlobId)
    root.push({ name: CONTEXT_GROUPS_FILE, mode: BLOB_MODE, oid: documents.contextGroupsBlobId });
  if (documents.schemasBlobId) root.push({ name: SCHEMAS_FILE, mode: BLOB_MODE, oid: documents.schemasBlobId });
  const securityGroups = changes.securityGroups ?? base.securityGroups;
  let securityGroupsBlobId = base.securityGroupsBlobId;
  if (changes.securityGroups) {
    const blob =
      securityGroups.length === 0
        ? undefined
        : encodeObject('blob', Buffer.from(serializeSecurityGroups(securityGroups)));
    if (blob && blob.oid !== base.securityGroupsBlobId) objects.push(blob);
    securityGroupsBlobId = blob?.oid;
  }
  if (securityGroupsBlobId) root.push({ name: SECURITY_GROUPS_FILE, mode: BLOB_MODE, oid: securityGroupsBlobId });
  let keysTreeId = base.keysTreeId;
  let keysTree = base.keysTree;
  if (shards !== base.shards) {
    keysTree = shards.size === 0 ? undefined : nextKeysTree(base, shards);
    if (keysTree && keysTree.object.oid !== base.keysTreeId) objects.push(keysTree.object);
    keysTreeId = keysTree?.object.oid;
  }
  if (keysTreeId) root.push({ name: KEYS_FOLDER, mode: TREE_MODE, oid: keysTreeId });
  const fileRootEntries = files?.rootEntries ?? base.fileRootEntries;
  root.push(...fileRootEntries);
  const rootTree = encodeObject('tree', serializeTree(root));

  const fileEntries = files?.entries ?? base.fileEntries;
  const fileTreeIds = files?.treeIds ?? base.fileTreeIds;
  if (rootTree.oid === base.treeId) {
    return { objects: [], commitId: null, snapshot: base };
  }
  objects.push(rootTree);
  const commit = encodeObject(
    'commit',
    serializeCommit({
      tree: rootTree.oid,
      parents: [base.commitId],
      author: info.author,
      committer: info.author,
      message: info.message,
    }),
  );
  objects.push(commit);
  const snapshot = new Snapshot({
    ...base,
    commitId: commit.oid,
    treeId: rootTree.oid,
    securityGroups,
    securityGroupsBlobId,
    ...documents,
    shards,
    keysTreeId,
    keysTree,
    fileEntries,
    fileRootEntries,
    fileTreeIds,
  });
  return { objects: dedupe(objects), commitId: commit.oid, snapshot };
}

/** Settings, rule sets and context groups: the base's blobs, or new ones when the changes carry them. */
function stageDocuments(base: Snapshot, changes: PushChanges, objects: EncodedObject[]) {
  const blob = (text: string | undefined, current: string | undefined): string | undefined => {
    if (text === undefined) return undefined;
    const encoded = encodeObject('blob', Buffer.from(text));
    if (encoded.oid !== current) objects.push(encoded);
    return encoded.oid;
  };
  const settings = changes.settings ?? base.settings;
  // In the order a fresh read of the files gives, so the snapshot lists them alike.
  const ruleSets = changes.ruleSets ? ruleSetsInStoredOrder(changes.ruleSets) : base.ruleSets;
  const contextGroups = changes.contextGroups ? contextGroupsInStoredOrder(changes.contextGroups) : base.contextGroups;
  return {
    settings,
    settingsBlobId: changes.settings
      ? blob(serializeSettings(changes.settings), base.settingsBlobId)!
      : base.settingsBlobId,
    ruleSets,
    ruleSetsBlobId: changes.ruleSets
      ? blob(ruleSets.length ? serializeRuleSets(ruleSets) : undefined, base.ruleSetsBlobId)
      : base.ruleSetsBlobId,
    contextGroups,
    contextGroupsBlobId: changes.contextGroups
      ? blob(contextGroups.length ? serializeContextGroups(contextGroups) : undefined, base.contextGroupsBlobId)
      : base.contextGroupsBlobId,
    schemas: changes.schemas ?? base.schemas,
    schemasBlobId: changes.schemas
      ? blob(hasSchemas(changes.schemas) ? serializeSchemas(changes.schemas) : undefined, base.schemasBlobId)
      : base.schemasBlobId,
  };
}

/**
 * The `keys` tree of `shards`: when its folders are the base's, the base's serialized tree with the
 * changed shards' ids written over (SerializedTree); otherwise serialized afresh.
 */
function nextKeysTree(base: Snapshot, shards: ReadonlyMap<string, Shard>): SerializedTree {
  // The id check guards against a snapshot made by spreading another and changing its shards alone.
  if (base.keysTree && base.keysTree.object.oid === base.keysTreeId && shards.size === base.shards.size) {
    const changed: [string, string][] = [];
    for (const [name, shard] of shards) if (base.shards.get(name) !== shard) changed.push([name, shard.treeId]);
    const patched = base.keysTree.withIds(changed);
    if (patched) return patched;
  }
  return SerializedTree.of([...shards].map(([name, shard]) => ({ name, mode: TREE_MODE, oid: shard.treeId })));
}

function dedupe(objects: EncodedObject[]): EncodedObject[] {
  const seen = new Map<string, EncodedObject>();
  for (const object of objects) seen.set(object.oid, object);
  return [...seen.values()];
}

function* stageKeys(base: Snapshot, changes: PushChanges, objects: EncodedObject[]): Steps<Map<string, Shard>> {
  if (changes.keys.size === 0) return base.shards as Map<string, Shard>;
  const touched = new Map<string, TouchedShard>();
  for (const [id, record] of changes.keys) {
    const name = keyShard(id);
    let shard = touched.get(name);
    if (!shard) {
      const before = base.shards.get(name);
      touched.set(
        name,
        (shard = { byId: new Map(before?.byId), changed: [], sameNames: true, valueCount: before?.valueCount ?? 0 }),
      );
    }
    const existing = shard.byId.get(id);
    shard.valueCount -= existing?.record.values.length ?? 0;
    if (!record) {
      if (shard.byId.delete(id)) shard.sameNames = false;
      continue;
    }
    const sorted = { ...record, values: inStorageOrder(record.values) };
    const blob = encodeObject('blob', Buffer.from(serializeKey(sorted)));
    if (blob.oid !== existing?.blobId) objects.push(blob);
    const fileName = existing?.fileName ?? keyFileName(id);
    if (!existing) shard.sameNames = false;
    shard.changed.push([fileName, blob.oid]);
    shard.byId.set(id, { fileName, blobId: blob.oid, record: sorted });
    shard.valueCount += sorted.values.length;
    yield;
  }
  const shards = new Map(base.shards);
  for (const [name, { byId, changed, sameNames, valueCount }] of touched) {
    if (byId.size === 0) {
      shards.delete(name);
      continue;
    }
    const before = base.shards.get(name);
    // Values changed, no key added or removed: the shard's tree is the one before with new ids (SerializedTree).
    const patched =
      sameNames && before?.tree && before.tree.object.oid === before.treeId ? before.tree.withIds(changed) : undefined;
    const tree =
      patched ??
      SerializedTree.of(
        [...byId.values()].map((entry) => ({ name: entry.fileName, mode: BLOB_MODE, oid: entry.blobId })),
      );
    if (tree.object.oid !== before?.treeId) objects.push(tree.object);
    // The count kept as the keys changed: counting every key of the shard again walked objects
    // spread over the old generation, about 0.6 ms of a 100-key push into 10,000 keys.
    shards.set(name, makeShard(tree.object.oid, byId, tree, valueCount));
    yield;
  }
  return shards;
}

interface TouchedShard {
  readonly byId: Map<string, KeyEntry>;
  readonly changed: [fileName: string, blobId: string][];
  sameNames: boolean;
  /** Values of the shard's keys as changed so far (Shard.valueCount). */
  valueCount: number;
}

/** A folder being assembled: blobs and subfolders by encoded name. */
interface FolderNode {
  readonly blobs: Map<string, string>;
  readonly folders: Map<string, FolderNode>;
}

const folderNode = (): FolderNode => ({ blobs: new Map(), folders: new Map() });

function* stageFiles(
  base: Snapshot,
  changes: PushChanges,
  objects: EncodedObject[],
): Steps<{ entries: Map<string, FileEntry>; treeIds: Set<string>; rootEntries: TreeEntry[] }> {
  const entries = new Map<string, FileEntry>(base.fileEntries);
  for (const [id, record] of changes.files) {
    if (!record) {
      entries.delete(id);
      continue;
    }
    const existing = base.fileEntries.get(id);
    const blob = encodeObject('blob', Buffer.from(serializeFileContent(record), 'utf8'));
    if (blob.oid !== existing?.blobId) objects.push(blob);
    entries.set(id, { blobId: blob.oid, record });
    yield;
  }
  const tops = new Map<string, FolderNode>([
    [FILES_FOLDER, folderNode()],
    [INACTIVE_FILES_FOLDER, folderNode()],
  ]);
  for (const { blobId, record } of entries.values()) {
    place(tops.get(filesFolder(record))!, record, blobId);
    yield;
  }

  const treeIds = new Set<string>();
  // Recursion as deep as a file path's folders (bounded by the path rules), not by input size.
  function* writeFolder(node: FolderNode): Steps<string> {
    const tree: TreeEntry[] = [];
    for (const [name, oid] of node.blobs) tree.push({ name, mode: BLOB_MODE, oid });
    for (const [name, child] of node.folders) tree.push({ name, mode: TREE_MODE, oid: yield* writeFolder(child) });
    const encoded = encodeObject('tree', serializeTree(tree));
    if (!base.fileTreeIds.has(encoded.oid)) objects.push(encoded);
    treeIds.add(encoded.oid);
    yield;
    return encoded.oid;
  }
  const rootEntries: TreeEntry[] = [];
  for (const [name, node] of tops) {
    if (node.folders.size > 0) rootEntries.push({ name, mode: TREE_MODE, oid: yield* writeFolder(node) });
  }
  return { entries, treeIds, rootEntries };
}

function place(top: FolderNode, record: FileRecord, blobId: string): void {
  const segments = [contextFolderName(record.context), ...encodeFilePath(record.path)];
  let node = top;
  for (const segment of segments.slice(0, -1)) {
    let next = node.folders.get(segment);
    if (!next) node.folders.set(segment, (next = folderNode()));
    node = next;
  }
  node.blobs.set(segments[segments.length - 1], blobId);
}
