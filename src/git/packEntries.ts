/**
 * The entries of a pack as they are stored, read through its index (packIndex.ts, the one index
 * parser), to copy into another pack as they are: no inflating, no deflating. What the pack
 * merge (disk/consolidatePacks.ts) feeds to the pack writer.
 */
import { PackIndex } from './packIndex.js';
import type { PackEntry } from './packWriter.js';

/** Offsets from here on need version 2's 64-bit table; packs cfghub writes stay below. */
const SMALL_OFFSET_LIMIT = 2 ** 31;

/**
 * The entries of a pack, by its index, in pack order. Undefined when the pack holds deltas (their
 * bases are found by offset, which copying would change), offsets past 2 GiB, or a version 1
 * index (no CRC-32s to copy): such packs, which git writes, are left to git.
 */
export function readPackEntries(pack: Buffer, indexBytes: Buffer): PackEntry[] | undefined {
  const index = new PackIndex(indexBytes, pack.length);
  const listed: { oid: Buffer; crc: number; offset: number }[] = [];
  for (let i = 0; i < index.count; i++) {
    const offset = index.offsetAt(i);
    const crc = index.crcAt(i);
    if (offset >= SMALL_OFFSET_LIMIT || crc === undefined) return undefined;
    listed.push({ oid: index.idAt(i), crc, offset });
  }
  listed.sort((a, b) => a.offset - b.offset);
  const entries: PackEntry[] = [];
  for (const { oid, crc, offset } of listed) {
    const type = (pack[offset] >> 4) & 7;
    if (type < 1 || type > 4) return undefined;
    entries.push({ oid, crc, bytes: pack.subarray(offset, index.endOf(offset)) });
  }
  return entries;
}
