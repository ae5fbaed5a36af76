/**
 * The entries of a pack as they are stored, read through its index (packIndex.ts, the one index
 * parser), to copy into another pack as they are: no inflating, no deflating. What the pack
 * merge (disk/objects/consolidatePacks.ts) feeds to the pack writer.
 */
import { PackIndex } from './packIndex.js';
import { runSteps, type PackEntry, type Steps } from './packWriter.js';

/** Offsets from here on need version 2's 64-bit table; packs cfghub writes stay below. */
const SMALL_OFFSET_LIMIT = 2 ** 31;

/** Entries listed or taken between two pauses: well under a millisecond's work. */
const ENTRIES_PER_STEP = 1_024;

/**
 * The entries of a pack, by its index, in pack order. Undefined when the pack holds deltas (their
 * bases are found by offset, which copying would change), offsets past 2 GiB, or a version 1
 * index (no CRC-32s to copy): such packs, which git writes, are left to git.
 */
export function readPackEntries(pack: Buffer, indexBytes: Buffer): PackEntry[] | undefined {
  return runSteps(readPackEntriesSteps(pack, indexBytes));
}

/**
 * readPackEntries as steps (src/lib/steps.ts): a pause is safe after each run of entries, so the
 * merge of a pack of 27,000 entries (8 MiB), 45 to 90 ms of one piece, is served in slices.
 */
export function* readPackEntriesSteps(pack: Buffer, indexBytes: Buffer): Steps<PackEntry[] | undefined> {
  const index = new PackIndex(indexBytes, pack.length);
  const listed: { oid: Buffer; crc: number; offset: number }[] = [];
  for (let i = 0; i < index.count; i++) {
    const offset = index.offsetAt(i);
    const crc = index.crcAt(i);
    if (offset >= SMALL_OFFSET_LIMIT || crc === undefined) return undefined;
    listed.push({ oid: index.idAt(i), crc, offset });
    if (i % ENTRIES_PER_STEP === ENTRIES_PER_STEP - 1) yield;
  }
  listed.sort((a, b) => a.offset - b.offset);
  yield;
  const entries: PackEntry[] = [];
  for (const { oid, crc, offset } of listed) {
    const type = (pack[offset] >> 4) & 7;
    if (type < 1 || type > 4) return undefined;
    entries.push({ oid, crc, bytes: pack.subarray(offset, index.endOf(offset)) });
    if (entries.length % ENTRIES_PER_STEP === 0) yield;
  }
  return entries;
}
