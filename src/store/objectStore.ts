/**
 * The object database of one bare repository, through isomorphic-git: loose objects and native
 * git's packs alike. One long-lived isomorphic-git cache per repository, so packs are parsed once
 * (git-engine-notes §4: 63 ms instead of 1,020 ms for 200 packed reads).
 */
import git from 'isomorphic-git';
import { inflateSync } from 'node:zlib';
import { DurableWriteFs, readFs } from './durableFs.js';
import type { EncodedObject, ObjectType } from './gitObjects.js';

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

  /**
   * Writes objects as loose objects, each atomically (temporary file, fsync, rename), all in
   * parallel, then fsyncs the folders they went into. When this resolves they survive a crash.
   */
  async writeDurably(objects: readonly EncodedObject[]): Promise<void> {
    if (objects.length === 0) return;
    const fs = new DurableWriteFs();
    await Promise.all(
      objects.map((object) =>
        git.writeObject({ fs, gitdir: this.gitdir, type: object.type, object: object.deflated, format: 'deflated', oid: object.oid }),
      ),
    );
    await fs.sync();
  }

  /** Forget parsed packs, after the set of packs changed (a repack). */
  resetCache(): void {
    this.cache = {};
  }
}
