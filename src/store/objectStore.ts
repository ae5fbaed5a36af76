/**
 * The object database of one bare repository, through isomorphic-git: loose objects and native
 * git's packs alike. One long-lived isomorphic-git cache per repository, so packs are parsed once
 * (git-engine-notes §4: 63 ms instead of 1,020 ms for 200 packed reads).
 */
import git from 'isomorphic-git';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { DurableWriteFs, fsyncFolder, readFs, renameIntoPlace, writeTemporary } from './durableFs.js';
import type { EncodedObject, ObjectType } from './gitObjects.js';
import { buildPack } from './packWriter.js';

/**
 * From this many objects a push is written as one pack instead of loose objects: three fsyncs
 * instead of up to two per object. Small pushes stay loose, so packs do not pile up one per push.
 */
export const PACK_FROM_OBJECTS = 16;

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
  /** isomorphic-git's cache of parsed packs; replaced after a repack (git-engine-notes §6). */
  private cache: object = {};

  constructor(readonly gitdir: string) {}

  async read(oid: string): Promise<StoredObject> {
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

  /** Writes objects so that they survive a crash once this resolves: loose, or as one pack. */
  async writeDurably(objects: readonly EncodedObject[]): Promise<void> {
    if (objects.length === 0) return;
    if (objects.length >= PACK_FROM_OBJECTS) await this.writePack(objects);
    else await this.writeLoose(objects);
  }

  /**
   * Loose objects, written by isomorphic-git, each atomically through the durable adapter
   * (temporary file, fsync, rename), all in parallel; then the folders they went into are fsynced.
   */
  private async writeLoose(objects: readonly EncodedObject[]): Promise<void> {
    await this.ensureLooseFolders();
    const fs = new DurableWriteFs();
    await Promise.all(
      objects.map((object) =>
        git.writeObject({ fs, gitdir: this.gitdir, type: object.type, object: object.deflated, format: 'deflated', oid: object.oid }),
      ),
    );
    await fs.sync();
  }

  private looseFoldersReady = false;

  /**
   * Creates the 256 folders `objects/00`…`objects/ff` once, with one fsync: otherwise the first
   * object into each folder pays for a mkdir, a retry and an extra fsync of `objects`.
   * (If `git prune` later removes empty ones, isomorphic-git creates them again as needed.)
   */
  private async ensureLooseFolders(): Promise<void> {
    if (this.looseFoldersReady) return;
    const objects = join(this.gitdir, 'objects');
    let created = false;
    for (let i = 0; i < 256; i++) {
      const folder = join(objects, i.toString(16).padStart(2, '0'));
      if (!fs.existsSync(folder)) {
        fs.mkdirSync(folder, { recursive: true });
        created = true;
      }
    }
    if (created) await fsyncFolder(objects);
    this.looseFoldersReady = true;
  }

  /**
   * One pack and its index, each written atomically; the index is renamed into place last, as
   * readers find packs by their index. Then the pack folder is fsynced.
   */
  private async writePack(objects: readonly EncodedObject[]): Promise<void> {
    const folder = join(this.gitdir, 'objects', 'pack');
    if (!fs.existsSync(folder)) {
      await fs.promises.mkdir(folder, { recursive: true });
      await fsyncFolder(join(this.gitdir, 'objects'));
    }
    const pack = buildPack(objects);
    const base = join(folder, pack.name);
    const [packFile, indexFile] = await Promise.all([writeTemporary(`${base}.pack`, pack.pack), writeTemporary(`${base}.idx`, pack.index)]);
    await renameIntoPlace(packFile, `${base}.pack`);
    await renameIntoPlace(indexFile, `${base}.idx`);
    await fsyncFolder(folder);
  }

  /** Forget parsed packs, after the set of packs changed (a repack). */
  resetCache(): void {
    this.cache = {};
  }
}
