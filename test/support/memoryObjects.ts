/**
 * An object store that keeps staged objects in memory and falls back to a repository on disk, so
 * that readSnapshot can re-read commits that stageCommit produced without writing them (fast
 * property tests), and helpers to put objects on disk quickly (no fsync) for large fixtures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import type { EncodedObject, ObjectType } from '../../src/git/gitObjects.js';
import { ObjectStore, type StoredObject } from '../../src/disk/objects/objectStore.js';
import { buildPack } from '../../src/git/packWriter.js';
import { ObjectNotFoundError } from '../../src/disk/errors.js';

function unwrap(wrapped: Buffer): StoredObject {
  const space = wrapped.indexOf(0x20);
  const nul = wrapped.indexOf(0, space);
  return { type: wrapped.toString('latin1', 0, space) as ObjectType, content: wrapped.subarray(nul + 1) };
}

export class MemoryObjects {
  private readonly objects = new Map<string, EncodedObject>();

  constructor(private readonly fallback?: ObjectStore) {}

  add(objects: Iterable<EncodedObject>): void {
    for (const object of objects) this.objects.set(object.oid, object);
  }

  has(oid: string): boolean {
    return this.objects.has(oid);
  }

  async read(oid: string): Promise<StoredObject> {
    const object = this.objects.get(oid);
    if (object) return unwrap(inflateSync(object.deflated));
    if (this.fallback) return this.fallback.read(oid);
    throw new ObjectNotFoundError('memory/test', oid);
  }

  /** Reads an object synchronously from memory only. */
  readSync(oid: string): StoredObject {
    const object = this.objects.get(oid);
    if (!object) throw new ObjectNotFoundError('memory/test', oid);
    return unwrap(inflateSync(object.deflated));
  }

  /** This store where readSnapshot expects an ObjectStore (it only calls `read`). */
  asObjectStore(): ObjectStore {
    return this as unknown as ObjectStore;
  }
}

/** Writes loose objects without fsync: for test fixtures only. */
export function writeLooseFast(gitdir: string, objects: Iterable<EncodedObject>): void {
  for (const object of objects) {
    const folder = join(gitdir, 'objects', object.oid.slice(0, 2));
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, object.oid.slice(2)), object.deflated);
  }
}

/** Writes objects as one pack with cfghub's pack writer, as after `git gc`: fast for large fixtures. */
export function writePack(gitdir: string, objects: readonly EncodedObject[]): void {
  const pack = buildPack(objects);
  const packDir = join(gitdir, 'objects', 'pack');
  mkdirSync(packDir, { recursive: true });
  writeFileSync(join(packDir, `${pack.name}.pack`), pack.pack);
  writeFileSync(join(packDir, `${pack.name}.idx`), pack.index);
}
