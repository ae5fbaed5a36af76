/**
 * The object database of one bare repository. Reads go through isomorphic-git, which knows loose
 * objects and packs alike (also those native git writes), with one long-lived cache per
 * repository so packs are parsed once (git-engine-notes §4: 63 ms instead of 1,020 ms for 200
 * packed reads).
 *
 * Writes do not: isomorphic-git writes loose objects in place, without fsync. Each push is written
 * as one pack and its index instead, each file atomically and durably (temporary file, fsync,
 * rename, folder fsync): three fsyncs per push, where durable loose objects cost two per object.
 * `consolidatePacks` keeps the number of packs small.
 */
import git from 'isomorphic-git';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { fsyncFolder, readFs, renameIntoPlace, writeTemporary } from './durableFs.js';
import type { EncodedObject, ObjectType } from './gitObjects.js';
import { buildPack, type Pack } from './packWriter.js';

export interface StoredObject {
  readonly type: ObjectType;
  readonly content: Buffer;
}

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

export class ObjectStore {
  /** isomorphic-git's cache of parsed packs; replaced when the set of packs changes. */
  private cache: object = {};
  /** Packs this process wrote since the last consolidation. */
  packsWritten = 0;

  constructor(readonly gitdir: string) {}

  get packFolder(): string {
    return join(this.gitdir, 'objects', 'pack');
  }

  /**
   * An object by id. If a pack was replaced since the cache was filled (a consolidation, git gc),
   * the read is tried once more with a fresh cache.
   */
  async read(oid: string): Promise<StoredObject> {
    try {
      return await this.readOnce(oid);
    } catch {
      this.resetCache();
      return this.readOnce(oid);
    }
  }

  private async readOnce(oid: string): Promise<StoredObject> {
    let result: { format: string; type?: string; object: unknown };
    try {
      result = await git.readObject({ fs: readFs, gitdir: this.gitdir, oid, format: 'deflated', cache: this.cache });
    } catch (error) {
      if ((error as { code?: string }).code === 'NotFoundError') throw new ObjectNotFoundError(oid);
      throw error;
    }
    const bytes = Buffer.from(result.object as Uint8Array);
    switch (result.format) {
      case 'deflated':
        return unwrap(inflateSync(bytes));
      case 'wrapped':
        return unwrap(bytes);
      default: // packed objects come back inflated, with their type
        return { type: result.type as ObjectType, content: bytes };
    }
  }

  /**
   * Writes objects as one pack and its index so that they survive a crash once this resolves.
   * The index is renamed into place last, as readers find packs by their index.
   */
  async writeDurably(objects: readonly EncodedObject[]): Promise<void> {
    if (objects.length === 0) return;
    await this.writePackDurably(buildPack(objects));
    this.packsWritten++;
  }

  /** Writes a pack and its index, each atomically; returns the pack's name. */
  async writePackDurably(pack: Pack): Promise<string> {
    const folder = this.packFolder;
    if (!fs.existsSync(folder)) {
      await fs.promises.mkdir(folder, { recursive: true });
      await fsyncFolder(join(this.gitdir, 'objects'));
    }
    const base = join(folder, pack.name);
    const [packFile, indexFile] = await Promise.all([writeTemporary(`${base}.pack`, pack.pack), writeTemporary(`${base}.idx`, pack.index)]);
    await renameIntoPlace(packFile, `${base}.pack`);
    await renameIntoPlace(indexFile, `${base}.idx`);
    await fsyncFolder(folder);
    return pack.name;
  }

  /** Forget parsed packs, after the set of packs changed. */
  resetCache(): void {
    this.cache = {};
  }
}
