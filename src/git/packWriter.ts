/**
 * Writes a push's objects as one pack file and its index (git's pack format, version 2, no
 * deltas), so a large push costs three fsyncs (pack, index, folder) instead of two per object.
 * Git, isomorphic-git and a clone read these packs like any others.
 */
import { createHash } from 'node:crypto';
import type { EncodedObject, ObjectType } from './gitObjects.js';
import { compressObject } from './objectCompression.js';

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

function crc32(parts: readonly Buffer[]): number {
  let crc = -1;
  for (const part of parts) for (let i = 0; i < part.length; i++) crc = CRC_TABLE[(crc ^ part[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

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

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
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
  const bytes = Buffer.concat([entryHeader(object.type, object.content.length), compressObject(object.content)]);
  return { oid: Buffer.from(object.oid, 'hex'), bytes, crc: crc32([bytes]) };
}

export function buildPack(objects: readonly EncodedObject[]): Pack {
  return assemblePack(objects.map(packEntry));
}

/** A pack of the given entries, in that order, and its index. */
export function assemblePack(entries: readonly PackEntry[]): Pack {
  const parts: Buffer[] = [Buffer.from('PACK'), uint32(2), uint32(entries.length)];
  let offset = 12;
  const listed: { oid: Buffer; offset: number; crc: number }[] = [];
  for (const entry of entries) {
    listed.push({ oid: entry.oid, offset, crc: entry.crc });
    parts.push(entry.bytes);
    offset += entry.bytes.length;
  }
  if (offset >= 2 ** 31) throw new Error('packs written by cfghub are limited to 2 GiB');
  const packChecksum = createHash('sha1');
  for (const part of parts) packChecksum.update(part);
  const checksum = packChecksum.digest();
  parts.push(checksum);

  listed.sort((a, b) => Buffer.compare(a.oid, b.oid));
  const fanout = Buffer.alloc(256 * 4);
  for (let byte = 0, i = 0; byte < 256; byte++) {
    while (i < listed.length && listed[i].oid[0] <= byte) i++;
    fanout.writeUInt32BE(i, byte * 4);
  }
  const index = [
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    uint32(2),
    fanout,
    ...listed.map((e) => e.oid),
    ...listed.map((e) => uint32(e.crc)),
    ...listed.map((e) => uint32(e.offset)),
    checksum,
  ];
  const indexChecksum = createHash('sha1');
  for (const part of index) indexChecksum.update(part);
  index.push(indexChecksum.digest());
  return { name: `pack-${checksum.toString('hex')}`, pack: Buffer.concat(parts), index: Buffer.concat(index) };
}
