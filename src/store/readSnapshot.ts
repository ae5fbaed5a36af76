/**
 * Builds the snapshot of a commit from its trees, reusing every part that an earlier snapshot
 * already parsed (same tree id, same blob id), so reading the commit after a push, or after a
 * commit made with plain git, parses only what changed.
 */
import type { FileRecord } from '../domain/model.js';
import { isTreeEntry, parseCommit, parseTree, type TreeEntry } from './gitObjects.js';
import {
  decodeFilePath,
  FILES_FOLDER,
  INACTIVE_FILES_FOLDER,
  KEYS_FOLDER,
  LayoutError,
  parseContextFolderName,
  parseKey,
  parseSettings,
  SETTINGS_FILE,
} from './layout.js';
import type { ObjectStore } from './objectStore.js';
import { fileEntryId, makeShard, Snapshot, type FileEntry, type KeyEntry, type Shard } from './snapshot.js';

const MANAGED = new Set([SETTINGS_FILE, KEYS_FOLDER, FILES_FOLDER, INACTIVE_FILES_FOLDER]);

export async function readSnapshot(objects: ObjectStore, commitId: string, previous?: Snapshot): Promise<Snapshot> {
  const reader = new SnapshotReader(objects, commitId);
  const commit = parseCommit(await reader.object(commitId, 'commit'));
  const root = parseTree(await reader.object(commit.tree, 'tree'));
  const byName = new Map(root.map((entry) => [entry.name, entry]));

  const settingsEntry = byName.get(SETTINGS_FILE);
  if (!settingsEntry || isTreeEntry(settingsEntry)) throw new LayoutError(`commit ${commitId.slice(0, 12)} has no ${SETTINGS_FILE}`);
  const settings =
    previous?.settingsBlobId === settingsEntry.oid
      ? previous.settings
      : reader.parse(SETTINGS_FILE, parseSettings, await reader.object(settingsEntry.oid, 'blob'));

  const shards = await reader.shards(byName.get(KEYS_FOLDER), previous);
  const { entries: fileEntries, treeIds } = await reader.files(
    [byName.get(FILES_FOLDER), byName.get(INACTIVE_FILES_FOLDER)],
    previous,
  );
  return new Snapshot({
    commitId,
    treeId: commit.tree,
    otherRootEntries: root.filter((entry) => !MANAGED.has(entry.name)),
    settings,
    settingsBlobId: settingsEntry.oid,
    shards,
    keysTreeId: byName.get(KEYS_FOLDER)?.oid,
    fileEntries,
    fileRootEntries: root.filter((entry) => entry.name === FILES_FOLDER || entry.name === INACTIVE_FILES_FOLDER),
    fileTreeIds: treeIds,
  });
}

class SnapshotReader {
  constructor(
    private readonly objects: ObjectStore,
    private readonly commitId: string,
  ) {}

  async object(oid: string, type: string): Promise<Buffer> {
    const object = await this.objects.read(oid);
    if (object.type !== type) throw new LayoutError(`object ${oid.slice(0, 12)} is a ${object.type}, expected a ${type}`);
    return object.content;
  }

  parse<T>(path: string, parser: (text: string, what: string) => T, content: Buffer): T {
    try {
      return parser(content.toString('utf8'), `${path} at commit ${this.commitId.slice(0, 12)}`);
    } catch (error) {
      if (error instanceof LayoutError) throw error;
      throw new LayoutError(`${path} at commit ${this.commitId.slice(0, 12)}: ${(error as Error).message}`);
    }
  }

  async shards(keysEntry: TreeEntry | undefined, previous?: Snapshot): Promise<Map<string, Shard>> {
    const shards = new Map<string, Shard>();
    if (!keysEntry) return shards;
    if (!isTreeEntry(keysEntry)) throw new LayoutError(`${KEYS_FOLDER} is not a folder at commit ${this.commitId.slice(0, 12)}`);
    for (const entry of parseTree(await this.object(keysEntry.oid, 'tree'))) {
      if (!isTreeEntry(entry)) throw new LayoutError(`${KEYS_FOLDER}/${entry.name} is not a folder at commit ${this.commitId.slice(0, 12)}`);
      const reused = previous?.shards.get(entry.name);
      shards.set(entry.name, reused?.treeId === entry.oid ? reused : await this.shard(entry, reused));
    }
    return shards;
  }

  private async shard(shardEntry: TreeEntry, previous?: Shard): Promise<Shard> {
    const previousByBlob = new Map<string, KeyEntry>();
    for (const entry of previous?.byId.values() ?? []) previousByBlob.set(entry.blobId, entry);
    const byId = new Map<string, KeyEntry>();
    for (const entry of parseTree(await this.object(shardEntry.oid, 'tree'))) {
      const path = `${KEYS_FOLDER}/${shardEntry.name}/${entry.name}`;
      if (isTreeEntry(entry)) throw new LayoutError(`${path} is a folder at commit ${this.commitId.slice(0, 12)}`);
      const record =
        previousByBlob.get(entry.oid)?.record ?? this.parse(path, parseKey, await this.object(entry.oid, 'blob'));
      byId.set(record.key.toLowerCase(), { fileName: entry.name, blobId: entry.oid, record });
    }
    return makeShard(shardEntry.oid, byId);
  }

  async files(
    [active, inactive]: (TreeEntry | undefined)[],
    previous?: Snapshot,
  ): Promise<{ entries: Map<string, FileEntry>; treeIds: Set<string> }> {
    const previousByBlob = new Map<string, FileEntry>();
    for (const entry of previous?.fileEntries.values() ?? []) previousByBlob.set(`${entry.blobId} ${entryKey(entry.record)}`, entry);
    const entries = new Map<string, FileEntry>();
    const treeIds = new Set<string>();
    const walk = async (oid: string, segments: string[], visit: (segments: string[], blob: TreeEntry) => Promise<void>) => {
      treeIds.add(oid);
      for (const entry of parseTree(await this.object(oid, 'tree'))) {
        if (isTreeEntry(entry)) await walk(entry.oid, [...segments, entry.name], visit);
        else await visit([...segments, entry.name], entry);
      }
    };
    for (const [folder, isActive] of [[active, true], [inactive, false]] as const) {
      if (!folder) continue;
      await walk(folder.oid, [], async ([contextFolder, ...pathSegments], blob) => {
        const where = `${folder.name}/${contextFolder}/${pathSegments.join('/')}`;
        if (pathSegments.length === 0) throw new LayoutError(`${where} is not inside a context folder at commit ${this.commitId.slice(0, 12)}`);
        const shape = { path: decodeFilePath(pathSegments), context: parseContextFolderName(contextFolder), active: isActive };
        const reused = previousByBlob.get(`${blob.oid} ${entryKey(shape)}`);
        const record: FileRecord = reused?.record ?? { ...shape, content: (await this.object(blob.oid, 'blob')).toString('utf8') };
        entries.set(fileEntryId(record), { blobId: blob.oid, record });
      });
    }
    return { entries, treeIds };
  }
}

function entryKey(record: Pick<FileRecord, 'path' | 'context' | 'active'>): string {
  return `${record.active} ${record.context.join(';')} ${record.path}`;
}
