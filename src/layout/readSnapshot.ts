/**
 * Builds the snapshot of a commit from its trees, reusing every part that an earlier snapshot
 * already parsed (same tree id, same blob id), so reading the commit after a push, or after a
 * commit made with plain git, parses only what changed.
 */
import type { FileRecord, KeyRecord } from '../domain/model.js';
import { isTreeEntry, parseCommit, parseTree, type TreeEntry } from '../git/gitObjects.js';
import {
  decodeFilePath,
  FILES_FOLDER,
  INACTIVE_FILES_FOLDER,
  KEYS_FOLDER,
  keyPath,
  parseContextFolderName,
  parseFileContent,
  parseKey,
  parseSecurityGroups,
  parseSettings,
  SECURITY_GROUPS_FILE,
  SETTINGS_FILE,
} from './layout.js';
import { ACCESS_RULES_FILE, CONTEXT_GROUPS_FILE, parseContextGroups, parseRuleSets } from './accessLayout.js';
import { parseSchemas, SCHEMAS_FILE } from './schemaLayout.js';
import { NO_SCHEMAS } from '../domain/schemas.js';
import type { ObjectReader } from './objectReader.js';
import { TimeSlices } from '../lib/timeSlices.js';
import { fileEntryId, makeShard, Snapshot, type FileEntry, type KeyEntry, type Shard } from './snapshot.js';
import { LayoutError } from './errors.js';

const MANAGED = new Set([
  SETTINGS_FILE,
  SECURITY_GROUPS_FILE,
  ACCESS_RULES_FILE,
  CONTEXT_GROUPS_FILE,
  SCHEMAS_FILE,
  KEYS_FOLDER,
  FILES_FOLDER,
  INACTIVE_FILES_FOLDER,
]);

export async function readSnapshot(objects: ObjectReader, commitId: string, previous?: Snapshot): Promise<Snapshot> {
  return namingCommit(commitId, async () => {
    const reader = new SnapshotReader(objects, commitId);
    const { commit, root, byName, settingsEntry } = await readRoot(reader, commitId);
    const settings =
      previous?.settingsBlobId === settingsEntry.oid
        ? previous.settings
        : reader.parse(SETTINGS_FILE, parseSettings, await reader.object(settingsEntry.oid, 'blob'));
    // Parts parsed under another number of levels must be checked again.
    const reusable = previous?.settings.levels.length === settings.levels.length ? previous : undefined;
    const levels = settings.levels.length;

    const groupsEntry = byName.get(SECURITY_GROUPS_FILE);
    const securityGroups = await reader.optionalRecord(SECURITY_GROUPS_FILE, groupsEntry, parseSecurityGroups, [], {
      blobId: previous?.securityGroupsBlobId,
      value: previous?.securityGroups,
    });
    const rulesEntry = byName.get(ACCESS_RULES_FILE);
    const ruleSets = await reader.optionalRecord(ACCESS_RULES_FILE, rulesEntry, parseRuleSets, [], {
      blobId: previous?.ruleSetsBlobId,
      value: previous?.ruleSets,
    });
    const contextGroupsEntry = byName.get(CONTEXT_GROUPS_FILE);
    const contextGroups = await reader.optionalRecord(CONTEXT_GROUPS_FILE, contextGroupsEntry, parseContextGroups, [], {
      blobId: previous?.contextGroupsBlobId,
      value: previous?.contextGroups,
    });
    const schemasEntry = byName.get(SCHEMAS_FILE);
    const schemas = await reader.optionalRecord(SCHEMAS_FILE, schemasEntry, parseSchemas, NO_SCHEMAS, {
      blobId: previous?.schemasBlobId,
      value: previous?.schemas,
    });

    const shards = await reader.shards(byName.get(KEYS_FOLDER), levels, reusable);
    const { entries: fileEntries, treeIds } = await reader.files(
      [byName.get(FILES_FOLDER), byName.get(INACTIVE_FILES_FOLDER)],
      levels,
      reusable,
    );
    return new Snapshot({
      commitId,
      treeId: commit.tree,
      otherRootEntries: root.filter((entry) => !MANAGED.has(entry.name)),
      settings,
      settingsBlobId: settingsEntry.oid,
      securityGroups,
      securityGroupsBlobId: groupsEntry?.oid,
      ruleSets,
      ruleSetsBlobId: rulesEntry?.oid,
      contextGroups,
      contextGroupsBlobId: contextGroupsEntry?.oid,
      schemas,
      schemasBlobId: schemasEntry?.oid,
      shards,
      keysTreeId: byName.get(KEYS_FOLDER)?.oid,
      fileEntries,
      fileRootEntries: root.filter((entry) => entry.name === FILES_FOLDER || entry.name === INACTIVE_FILES_FOLDER),
      fileTreeIds: treeIds,
    });
  });
}

/** Every LayoutError raised while reading a commit names that commit. */
async function namingCommit<T>(commitId: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof LayoutError) error.commit ??= commitId;
    throw error;
  }
}

async function readRoot(reader: SnapshotReader, commitId: string) {
  const commit = parseCommit(await reader.object(commitId, 'commit'));
  const root = parseTree(await reader.object(commit.tree, 'tree'));
  const byName = new Map(root.map((entry) => [entry.name, entry]));
  const settingsEntry = byName.get(SETTINGS_FILE);
  if (!settingsEntry || isTreeEntry(settingsEntry)) throw reader.problem(SETTINGS_FILE, 'is missing');
  return { commit, root, byName, settingsEntry };
}

const SHARD_NAME = /^[0-9a-f]{2}$/;

class SnapshotReader {
  /**
   * Reading and parsing every object of a commit is all synchronous work (packs are in memory or
   * read with pread): a cold 10,000-key snapshot took 240-550 ms in one piece. It yields between
   * objects every few milliseconds instead, so other requests are served meanwhile.
   */
  private readonly slices = new TimeSlices();

  constructor(
    private readonly objects: ObjectReader,
    private readonly commitId: string,
  ) {}

  /** `<file> <what is wrong> at commit <id>`, as a LayoutError naming both. */
  problem(file: string, what: string): LayoutError {
    return new LayoutError(`${file} ${what} at commit ${this.commitId.slice(0, 12)}`, file, this.commitId);
  }

  async object(oid: string, type: string, file?: string): Promise<Buffer> {
    await this.slices.pause();
    const object = await this.objects.read(oid);
    if (object.type !== type) {
      const message = `object ${oid.slice(0, 12)} is a ${object.type}, expected a ${type}`;
      throw file ? this.problem(file, `is a ${object.type} object, expected a ${type}`) : new LayoutError(message);
    }
    return object.content;
  }

  parse<T>(path: string, parser: (text: string, what: string) => T, content: Buffer): T {
    try {
      return parser(content.toString('utf8'), `${path} at commit ${this.commitId.slice(0, 12)}`);
    } catch (error) {
      const message =
        error instanceof LayoutError
          ? error.message
          : `${path} at commit ${this.commitId.slice(0, 12)}: ${(error as Error).message}`;
      throw new LayoutError(message, path, this.commitId);
    }
  }

  /**
   * A record file at the root that may be missing (`missing` then): the earlier snapshot's value
   * when the blob is the same one, else parsed.
   */
  async optionalRecord<T>(
    file: string,
    entry: TreeEntry | undefined,
    parser: (text: string, what: string) => T,
    missing: T,
    earlier: { readonly blobId: string | undefined; readonly value: T | undefined },
  ): Promise<T> {
    if (!entry) return missing;
    if (isTreeEntry(entry)) throw this.problem(file, 'is a folder');
    if (earlier.value !== undefined && earlier.blobId === entry.oid) return earlier.value;
    return this.parse(file, parser, await this.object(entry.oid, 'blob', file));
  }

  async shards(keysEntry: TreeEntry | undefined, levels: number, previous?: Snapshot): Promise<Map<string, Shard>> {
    const shards = new Map<string, Shard>();
    if (!keysEntry) return shards;
    if (!isTreeEntry(keysEntry)) throw this.problem(KEYS_FOLDER, 'is not a folder');
    for (const entry of parseTree(await this.object(keysEntry.oid, 'tree', KEYS_FOLDER))) {
      const path = `${KEYS_FOLDER}/${entry.name}`;
      if (!isTreeEntry(entry)) throw this.problem(path, 'is not in a shard folder (keys/<two hex digits>/<key>.yaml)');
      if (!SHARD_NAME.test(entry.name)) throw this.problem(path, 'is not a shard folder (two lower-case hex digits)');
      const reused = previous?.shards.get(entry.name);
      shards.set(entry.name, reused?.treeId === entry.oid ? reused : await this.shard(entry, levels, reused));
    }
    return shards;
  }

  private async shard(shardEntry: TreeEntry, levels: number, previous?: Shard): Promise<Shard> {
    const previousByBlob = new Map<string, KeyEntry>();
    for (const entry of previous?.byId.values() ?? []) previousByBlob.set(entry.blobId, entry);
    const byId = new Map<string, KeyEntry>();
    for (const entry of parseTree(await this.object(shardEntry.oid, 'tree', `${KEYS_FOLDER}/${shardEntry.name}`))) {
      const path = `${KEYS_FOLDER}/${shardEntry.name}/${entry.name}`;
      if (isTreeEntry(entry)) throw this.problem(path, 'is a folder, where the layout has key files only');
      const reused = previousByBlob.get(entry.oid);
      // A part reused from the previous snapshot under the same name was checked when first read.
      const record = reused?.fileName === entry.name ? reused.record : await this.checkedKey(path, entry.oid, levels);
      byId.set(record.key.toLowerCase(), { fileName: entry.name, blobId: entry.oid, record });
    }
    return makeShard(shardEntry.oid, byId);
  }

  private async checkedKey(path: string, blobId: string, levels: number): Promise<KeyRecord> {
    const record = this.parse(path, parseKey, await this.object(blobId, 'blob', path));
    const where = keyPath(record.key);
    if (where !== path) throw this.problem(path, `holds key ${JSON.stringify(record.key)}, whose file is ${where}`);
    const bad = record.values.find((value) => value.context.length !== levels);
    if (bad)
      throw this.problem(
        path,
        `has a value for context ${JSON.stringify(bad.context.join(';'))}, which does not have ${levels} items as the repository's levels do`,
      );
    return record;
  }

  async files(
    [active, inactive]: (TreeEntry | undefined)[],
    levels: number,
    previous?: Snapshot,
  ): Promise<{ entries: Map<string, FileEntry>; treeIds: Set<string> }> {
    const previousByBlob = new Map<string, FileEntry>();
    for (const entry of previous?.fileEntries.values() ?? [])
      previousByBlob.set(`${entry.blobId} ${entryKey(entry.record)}`, entry);
    const entries = new Map<string, FileEntry>();
    const treeIds = new Set<string>();
    const walk = async (
      oid: string,
      segments: string[],
      visit: (segments: string[], blob: TreeEntry) => Promise<void>,
    ) => {
      treeIds.add(oid);
      for (const entry of parseTree(await this.object(oid, 'tree', segments.join('/')))) {
        if (isTreeEntry(entry)) await walk(entry.oid, [...segments, entry.name], visit);
        else await visit([...segments, entry.name], entry);
      }
    };
    for (const [folder, isActive] of [
      [active, true],
      [inactive, false],
    ] as const) {
      if (!folder) continue;
      if (!isTreeEntry(folder)) throw this.problem(folder.name, 'is not a folder');
      await walk(folder.oid, [folder.name], async ([, contextFolder, ...pathSegments], blob) => {
        const where = [folder.name, contextFolder, ...pathSegments].join('/');
        if (pathSegments.length === 0) throw this.problem(where, 'is not inside a context folder');
        const context = parseContextFolderName(contextFolder);
        if (context.length !== levels)
          throw this.problem(
            where,
            `is in context folder ${contextFolder}, which does not have ${levels} items as the repository's levels do`,
          );
        const shape = { path: decodeFilePath(pathSegments), context, active: isActive };
        const reused = previousByBlob.get(`${blob.oid} ${entryKey(shape)}`);
        const record: FileRecord = reused?.record ?? {
          ...shape,
          ...this.parse(where, parseFileContent, await this.object(blob.oid, 'blob', where)),
        };
        entries.set(fileEntryId(record), { blobId: blob.oid, record });
      });
    }
    return { entries, treeIds };
  }
}

function entryKey(record: Pick<FileRecord, 'path' | 'context' | 'active'>): string {
  return `${record.active} ${record.context.join(';')} ${record.path}`;
}
