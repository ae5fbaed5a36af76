/**
 * An object store that keeps staged objects in memory and falls back to a repository on disk, so
 * that readSnapshot can re-read commits that stageCommit produced without writing them (fast
 * property tests), and helpers to put objects on disk quickly (no fsync) for large fixtures.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import type { EncodedObject, ObjectType } from '../../src/store/gitObjects.js';
import { ObjectNotFoundError, ObjectStore, type StoredObject } from '../../src/store/objectStore.js';

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
    throw new ObjectNotFoundError(oid);
  }

  /** Reads an object synchronously from memory only. */
  readSync(oid: string): StoredObject {
    const object = this.objects.get(oid);
    if (!object) throw new ObjectNotFoundError(oid);
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

/** The ids of the loose objects of a repository. */
export function looseObjectIds(gitdir: string): Set<string> {
  const ids = new Set<string>();
  const root = join(gitdir, 'objects');
  for (const folder of readdirSync(root)) {
    if (!/^[0-9a-f]{2}$/.test(folder)) continue;
    for (const file of readdirSync(join(root, folder))) if (/^[0-9a-f]{38}$/.test(file)) ids.add(folder + file);
  }
  return ids;
}

const PACK_TYPES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/**
 * Writes objects as one pack (git's pack format, version 2) and lets `git index-pack` index it:
 * much faster than thousands of loose files for large fixtures, and it makes the repository a
 * packed one, as after `git gc`.
 */
export function writePack(gitdir: string, objects: readonly EncodedObject[]): void {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(objects.length, 8);
  parts.push(header);
  for (const object of objects) {
    const { content } = unwrap(inflateSync(object.deflated));
    let size = content.length;
    const bytes: number[] = [(PACK_TYPES[object.type] << 4) | (size & 0x0f)];
    size >>= 4;
    while (size > 0) {
      bytes[bytes.length - 1] |= 0x80;
      bytes.push(size & 0x7f);
      size >>= 7;
    }
    parts.push(Buffer.from(bytes), deflateSync(content));
  }
  const body = Buffer.concat(parts);
  const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
  const packDir = join(gitdir, 'objects', 'pack');
  mkdirSync(packDir, { recursive: true });
  const temporary = join(packDir, 'tmp-fixture.pack');
  writeFileSync(temporary, pack);
  const name = createHash('sha1').update(body).digest('hex');
  const final = join(packDir, `pack-${name}.pack`);
  renameSync(temporary, final);
  execFileSync('git', ['--git-dir', gitdir, 'index-pack', final], { stdio: ['ignore', 'pipe', 'pipe'] });
}
