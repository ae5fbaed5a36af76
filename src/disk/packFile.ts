/**
 * One pack (`objects/pack/pack-*.pack` with its `.idx`), read directly: the entry's bytes are
 * inflated with Node's zlib and delta entries resolved against their bases. Much cheaper than
 * isomorphic-git's reader, which lists the pack folder and inflates in JavaScript on every read
 * (the first pull after a restart reads every object of a repository).
 *
 * Small packs are read into memory whole; larger ones are read entry by entry through a file
 * handle kept open, so a pack removed by a merge or `git repack` stays readable until closed.
 */
import * as fs from 'node:fs';
import { applyDelta } from '../git/delta.js';
import type { ObjectType } from '../git/gitObjects.js';
import { PackIndex } from '../git/packIndex.js';
import { inflateObject } from '../git/objectCompression.js';
import { PackBases } from './deltaBases.js';
import { PackFormatError } from '../git/errors.js';

export interface StoredObject {
  readonly type: ObjectType;
  readonly content: Buffer;
}

/** Packs up to this size are kept in memory; cfghub's own per-push packs are far smaller. */
const IN_MEMORY_LIMIT = 32 * 1024 * 1024;
const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

/** Reads an object of another pack or a loose one: the base of a REF_DELTA entry. */
export type BaseReader = (oid: Buffer) => StoredObject | undefined;

interface PackBytes {
  readonly length: number;
  /** The whole pack is in memory: a slice may run past an entry's end at no cost. */
  readonly inMemory: boolean;
  slice(start: number, end: number): Buffer;
  close(): void;
}

function inMemory(whole: Buffer): PackBytes {
  return { length: whole.length, inMemory: true, slice: (start, end) => whole.subarray(start, end), close: () => undefined };
}

function openBytes(path: string, inMemoryLimit: number): PackBytes {
  const handle = fs.openSync(path, 'r');
  const length = fs.fstatSync(handle).size;
  if (length <= inMemoryLimit) {
    const whole = Buffer.allocUnsafe(length);
    try {
      fs.readSync(handle, whole, 0, length, 0);
    } finally {
      fs.closeSync(handle);
    }
    return inMemory(whole);
  }
  return {
    length,
    inMemory: false,
    slice(start, end) {
      const part = Buffer.allocUnsafe(end - start);
      fs.readSync(handle, part, 0, part.length, start);
      return part;
    },
    close: () => fs.closeSync(handle),
  };
}

export class PackFile {
  /** Delta bases, kept within the process's budget (deltaBases.ts). */
  private readonly bases = new PackBases();

  private constructor(
    readonly name: string,
    private readonly index: PackIndex,
    private readonly bytes: PackBytes,
  ) {}

  /** A pack this process has just written, read from the bytes it wrote. */
  static fromBuffers(name: string, pack: Buffer, index: Buffer): PackFile {
    return new PackFile(name, new PackIndex(index, pack.length), inMemory(pack));
  }

  /**
   * Opens `<base>.pack` and `<base>.idx`; throws when either is missing or malformed. Packs up to
   * `inMemoryLimit` bytes are read whole; larger ones entry by entry.
   */
  static open(base: string, name: string, inMemoryLimit = IN_MEMORY_LIMIT): PackFile {
    const bytes = openBytes(`${base}.pack`, inMemoryLimit);
    try {
      return new PackFile(name, new PackIndex(fs.readFileSync(`${base}.idx`), bytes.length), bytes);
    } catch (error) {
      bytes.close();
      throw error;
    }
  }

  has(oid: Buffer): boolean {
    return this.index.find(oid) !== undefined;
  }

  /** Up to `limit` ids of objects this pack holds that start with `prefix` (lower-case hex). */
  idsWithPrefix(prefix: string, limit: number): string[] {
    return this.index.idsWithPrefix(prefix, limit);
  }

  /** The object, or undefined when this pack does not hold it. */
  read(oid: Buffer, readBase: BaseReader): StoredObject | undefined {
    const offset = this.index.find(oid);
    return offset === undefined ? undefined : this.readAt(offset, readBase);
  }

  close(): void {
    this.bytes.close();
    this.bases.clear();
  }

  private readAt(offset: number, readBase: BaseReader): StoredObject {
    // An entry's zlib stream ends by itself (what follows is ignored): from memory it is sliced to
    // the pack's end, which spares finding the next entry; from disk only its own bytes are read.
    const entry = this.bytes.slice(offset, this.bytes.inMemory ? this.bytes.length - 20 : this.index.endOf(offset));
    let byte = entry[0];
    const kind = (byte >> 4) & 7;
    // The inflated size (of the object, or of the delta), to size zlib's output (objectCompression.ts).
    let size = byte & 0x0f;
    let position = 1;
    for (let shift = 4; byte & 0x80; shift += 7) {
      byte = entry[position++];
      size += (byte & 0x7f) * 2 ** shift;
    }
    if (TYPES[kind]) return { type: TYPES[kind], content: inflateObject(entry.subarray(position), size) };

    let base: StoredObject | undefined;
    if (kind === OFS_DELTA) {
      byte = entry[position++];
      let distance = byte & 0x7f;
      while (byte & 0x80) {
        byte = entry[position++];
        distance = (distance + 1) * 128 + (byte & 0x7f);
      }
      base = this.baseAt(offset - distance, readBase);
    } else if (kind === REF_DELTA) {
      const baseId = entry.subarray(position, position + 20);
      position += 20;
      const baseOffset = this.index.find(baseId);
      base = baseOffset === undefined ? readBase(baseId) : this.baseAt(baseOffset, readBase);
      if (!base) throw new PackFormatError(`${this.name}: the delta base ${baseId.toString('hex')} is missing`);
    } else {
      throw new PackFormatError(`${this.name}: entry at ${offset} has the unknown type ${kind}`);
    }
    return { type: base.type, content: applyDelta(base.content, inflateObject(entry.subarray(position), size)) };
  }

  private baseAt(offset: number, readBase: BaseReader): StoredObject {
    const cached = this.bases.get(offset);
    if (cached) return cached;
    const base = this.readAt(offset, readBase);
    this.bases.set(offset, base);
    return base;
  }
}
