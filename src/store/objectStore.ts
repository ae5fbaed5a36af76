/**
 * The object database of one bare repository.
 *
 * Reads: packs first (read directly by `PackFile`, each pack's index parsed once), then loose
 * objects, which plain git writes; when neither holds an object, the pack folder is listed again,
 * as another process may have added or replaced packs. (isomorphic-git read objects here before:
 * it lists the pack folder and inflates in JavaScript on every read, which made the first pull of
 * a 10,000-key repository after a restart take about 1 s instead of 0.3 s.)
 *
 * Writes: each push is written as one pack and its index, each file atomically and durably
 * (temporary file, fsync, rename, folder fsync): three fsyncs per push, where durable loose
 * objects cost two per object.
 * `consolidatePacks` keeps the number of packs small.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { fsyncFolder, renameIntoPlace, writeTemporary } from './durableFs.js';
import { faultPoint } from './faultPoints.js';
import type { EncodedObject, ObjectType } from './gitObjects.js';
import { PackFile, type StoredObject } from './packFile.js';
import { buildPack, type Pack } from './packWriter.js';

export type { StoredObject } from './packFile.js';

export class ObjectNotFoundError extends Error {
  readonly code = 'ObjectNotFound';
  constructor(readonly oid: string) {
    super(`object ${oid} is missing`);
  }
}

function unwrap(wrapped: Buffer): StoredObject {
  const space = wrapped.indexOf(0x20);
  const nul = wrapped.indexOf(0, space);
  return { type: wrapped.toString('latin1', 0, space) as ObjectType, content: wrapped.subarray(nul + 1) };
}

const PACK_INDEX = /^(pack-[0-9a-f]{40})\.idx$/;

export class ObjectStore {
  /** Open packs by name; undefined until the first read lists the pack folder. */
  private packs: Map<string, PackFile> | undefined;
  /** Packs this process wrote since the last consolidation. */
  packsWritten = 0;

  constructor(readonly gitdir: string) {}

  get packFolder(): string {
    return join(this.gitdir, 'objects', 'pack');
  }

  /** An object by id (40 hex digits). */
  async read(oid: string): Promise<StoredObject> {
    const id = Buffer.from(oid, 'hex');
    const found = this.fromPacks(id) ?? this.fromLoose(oid) ?? (this.rescanPacks(), this.fromPacks(id));
    if (!found) throw new ObjectNotFoundError(oid);
    return found;
  }

  /**
   * Up to `limit` ids of stored objects that start with `prefix` (lower-case hex, 2 to 40 digits),
   * from the packs (listed again first, as another process may have added some) and the loose
   * objects of the prefix's folder: what a short commit id names, as `git rev-parse` finds it.
   */
  idsWithPrefix(prefix: string, limit: number): string[] {
    this.rescanPacks();
    const found = new Set<string>();
    for (const pack of this.packs!.values()) {
      for (const id of pack.idsWithPrefix(prefix, limit)) found.add(id);
    }
    let loose: string[] = [];
    try {
      loose = fs.readdirSync(join(this.gitdir, 'objects', prefix.slice(0, 2)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const name of loose) {
      const id = prefix.slice(0, 2) + name;
      if (id.length === 40 && id.startsWith(prefix)) found.add(id);
    }
    return [...found].sort().slice(0, limit);
  }

  /**
   * Writes objects as one pack and its index so that they survive a crash once this resolves.
   * The index is renamed into place last, as readers find packs by their index.
   */
  async writeDurably(objects: readonly EncodedObject[]): Promise<void> {
    if (await this.writeUntilFolderSync(objects)) await fsyncFolder(this.packFolder);
  }

  /**
   * Writes objects as one pack and its index, each fsynced and renamed into place, all but the
   * fsync of the pack folder, which the caller owes before relying on them: the commit path does
   * it beside the ref folder's fsync (see GitRepository.commit). True if there was a pack to write.
   */
  async writeUntilFolderSync(objects: readonly EncodedObject[]): Promise<boolean> {
    if (objects.length === 0) return false;
    const pack = buildPack(objects);
    await this.placePack(pack);
    faultPoint('objects-synced');
    this.packs?.set(pack.name, PackFile.fromBuffers(pack.name, pack.pack, pack.index));
    this.packsWritten++;
    return true;
  }

  /** Writes a pack and its index, each atomically and durably; returns the pack's name. */
  async writePackDurably(pack: Pack): Promise<string> {
    await this.placePack(pack);
    await fsyncFolder(this.packFolder);
    return pack.name;
  }

  /** The pack and its index in place, each fsynced; their folder not yet. */
  private async placePack(pack: Pack): Promise<void> {
    const folder = this.packFolder;
    if (!fs.existsSync(folder)) {
      await fs.promises.mkdir(folder, { recursive: true });
      await fsyncFolder(join(this.gitdir, 'objects'));
    }
    const base = join(folder, pack.name);
    const [packFile, indexFile] = await Promise.all([writeTemporary(`${base}.pack`, pack.pack), writeTemporary(`${base}.idx`, pack.index)]);
    faultPoint('objects-written');
    await renameIntoPlace(packFile, `${base}.pack`);
    await renameIntoPlace(indexFile, `${base}.idx`);
  }

  /** Removals of merged packs still running (see consolidatePacks); a failure is kept, not thrown. */
  private removals: Promise<void> = Promise.resolve();
  removalProblem: unknown;

  removeLater(removal: Promise<void>): void {
    const done = removal.then(
      () => (this.removalProblem = undefined),
      (error: unknown) => (this.removalProblem = error),
    );
    this.removals = Promise.all([this.removals, done]).then(() => undefined);
  }

  /** Resolves when every removal started so far has ended. */
  settled(): Promise<void> {
    return this.removals;
  }

  /** Forget open packs, after the set of packs changed; the next read lists the folder again. */
  resetCache(): void {
    for (const pack of this.packs?.values() ?? []) pack.close();
    this.packs = undefined;
  }

  private fromPacks(id: Buffer): StoredObject | undefined {
    if (!this.packs) this.rescanPacks();
    for (const pack of this.packs!.values()) {
      const object = pack.read(id, this.readBase);
      if (object) return object;
    }
    return undefined;
  }

  /** The base of a REF_DELTA entry, which may live in another pack or loose. */
  private readonly readBase = (id: Buffer): StoredObject | undefined => {
    for (const pack of this.packs!.values()) if (pack.has(id)) return pack.read(id, this.readBase);
    return this.fromLoose(id.toString('hex'));
  };

  private fromLoose(oid: string): StoredObject | undefined {
    let deflated: Buffer;
    try {
      deflated = fs.readFileSync(join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return unwrap(inflateSync(deflated));
  }

  /** Opens packs that appeared since the last listing and closes those that are gone. */
  private rescanPacks(): void {
    const listed = new Set<string>();
    try {
      for (const file of fs.readdirSync(this.packFolder)) {
        const name = PACK_INDEX.exec(file)?.[1];
        if (name) listed.add(name);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const packs = this.packs ?? new Map<string, PackFile>();
    for (const [name, pack] of packs) {
      if (listed.has(name)) continue;
      pack.close();
      packs.delete(name);
    }
    for (const name of listed) {
      if (packs.has(name)) continue;
      try {
        packs.set(name, PackFile.open(join(this.packFolder, name), name));
      } catch (error) {
        // An index whose pack is gone (removed by another process between listing and opening).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    this.packs = packs;
  }
}
