/**
 * Writes a push's objects as one pack file and its index (git's pack format, version 2, no
 * deltas), so a large push costs three fsyncs (pack, index, folder) instead of two per object.
 * Git, isomorphic-git and a clone read these packs like any others.
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { EncodedObject, ObjectType } from './gitObjects.js';
import { compressObject } from './objectCompression.js';

/**
 * Work in steps, the shape of src/lib/steps.ts (src/git imports only itself): the generator
 * yields where a pause is safe, and the server drives it in time slices.
 */
export type Steps<T> = Generator<void, T, void>;

export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** CRC-32 in JavaScript, a byte at a time: where zlib's own (`zlib.crc32`, Node 20.15 and later) is missing. */
export function crc32Bytes(bytes: Uint8Array): number {
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/**
 * The CRC-32 a pack index keeps for each entry. zlib's native one is about ten times faster: a
 * 100-key push into 10,000 keys packs some 270 KB (its shard trees), whose CRC in JavaScript took
 * about 0.6 ms of the push.
 */
const crc32: (bytes: Uint8Array) => number =
  typeof zlib.crc32 === 'function' ? (bytes) => zlib.crc32(bytes) : crc32Bytes;

/** The variable-length header of a pack entry: type and inflated size. */
function entryHeader(type: ObjectType, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (TYPE_CODE[type] << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

export interface Pack {
  /** `pack-<checksum>`, the base name of both files. */
  readonly name: string;
  readonly pack: Buffer;
  readonly index: Buffer;
}

/** One entry of a pack as stored: its header and compressed data, and the CRC-32 of both. */
export interface PackEntry {
  readonly oid: Buffer;
  readonly bytes: Buffer;
  readonly crc: number;
}

export function packEntry(object: EncodedObject): PackEntry {
  const bytes = compressObject(object.content, entryHeader(object.type, object.content.length));
  return { oid: Buffer.from(object.oid, 'hex'), bytes, crc: crc32(bytes) };
}

export function buildPack(objects: readonly EncodedObject[]): Pack {
  return runSteps(buildPackSteps(objects));
}

/**
 * buildPack as steps (src/lib/steps.ts): a pause is safe after each object framed and each
 * run of entries hashed, so the 60,000 objects of the largest allowed push are packed in slices.
 */
export function* buildPackSteps(objects: readonly EncodedObject[]): Steps<Pack> {
  const entries: PackEntry[] = [];
  for (const object of objects) {
    entries.push(packEntry(object));
    yield;
  }
  return yield* assemblePackSteps(entries);
}

/** A pack of the given entries, in that order, and its index. */
export function assemblePack(entries: readonly PackEntry[]): Pack {
  return runSteps(assemblePackSteps(entries));
}

/** The 12 bytes a version 2 pack of `count` entries starts with. */
export function packHeader(count: number): Buffer {
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(count, 8);
  return header;
}

/** Where a version 2 index's object ids begin: after its magic, version and fan-out table. */
const INDEX_HEADER = 8 + 256 * 4;

/** Bytes copied or hashed between two pauses: a fraction of a millisecond's work. */
const BYTES_PER_STEP = 256 * 1024;

/**
 * assemblePack as steps. The pack is written into one buffer of its final size and hashed in runs
 * of BYTES_PER_STEP, and the index likewise: no list of a part per entry to concatenate (tens of
 * thousands of small buffers, which cost a large push 100 ms in one piece).
 */
export function* assemblePackSteps(entries: readonly PackEntry[]): Steps<Pack> {
  let size = 12 + 20;
  for (const entry of entries) size += entry.bytes.length;
  if (size - 20 >= 2 ** 31) throw new Error('packs written by cfghub are limited to 2 GiB');
  const pack = Buffer.allocUnsafe(size);
  packHeader(entries.length).copy(pack, 0);
  const listed: IndexedEntry[] = [];
  let offset = 12;
  let sincePause = 0;
  for (const entry of entries) {
    listed.push({ oid: entry.oid, offset, crc: entry.crc });
    entry.bytes.copy(pack, offset);
    offset += entry.bytes.length;
    sincePause += entry.bytes.length + 64;
    if (sincePause >= BYTES_PER_STEP) {
      sincePause = 0;
      yield;
    }
  }
  const checksum = yield* sha1InSteps(pack.subarray(0, offset));
  checksum.copy(pack, offset);
  const index = yield* packIndexSteps(listed, checksum);
  return { name: `pack-${checksum.toString('hex')}`, pack, index };
}

/** Where an entry lies in a pack being written, as its index lists it. */
export interface IndexedEntry {
  readonly oid: Buffer;
  readonly offset: number;
  readonly crc: number;
}

/** The version 2 index of a pack whose entries are `entries` and whose checksum is `checksum` (the order of `entries` is free). */
export function* packIndexSteps(entries: readonly IndexedEntry[], checksum: Buffer): Steps<Buffer> {
  // The oid's first four bytes as a number: sorting by it calls Buffer.compare only on ties.
  const listed = entries.map((entry) => ({ ...entry, head: entry.oid.readUInt32BE(0) }));
  listed.sort((a, b) => a.head - b.head || Buffer.compare(a.oid, b.oid));
  yield;
  const count = listed.length;
  const index = Buffer.alloc(INDEX_HEADER + count * 28 + 40);
  index.writeUInt32BE(0xff744f63, 0);
  index.writeUInt32BE(2, 4);
  for (let byte = 0, i = 0; byte < 256; byte++) {
    while (i < count && listed[i].oid[0] <= byte) i++;
    index.writeUInt32BE(i, 8 + byte * 4);
  }
  for (let i = 0; i < count; i++) {
    const entry = listed[i];
    entry.oid.copy(index, INDEX_HEADER + 20 * i);
    index.writeUInt32BE(entry.crc, INDEX_HEADER + 20 * count + 4 * i);
    index.writeUInt32BE(entry.offset, INDEX_HEADER + 24 * count + 4 * i);
    if (i % 4096 === 4095) yield;
  }
  const end = INDEX_HEADER + count * 28;
  checksum.copy(index, end);
  (yield* sha1InSteps(index.subarray(0, end + 20))).copy(index, end + 20);
  return index;
}

function* sha1InSteps(bytes: Buffer): Steps<Buffer> {
  const hash = createHash('sha1');
  for (let at = 0; at < bytes.length; at += BYTES_PER_STEP) {
    hash.update(bytes.subarray(at, Math.min(bytes.length, at + BYTES_PER_STEP)));
    yield;
  }
  return hash.digest();
}
