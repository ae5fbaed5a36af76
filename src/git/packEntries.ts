/**
 * The entries of a pack as they are stored, read through its index (packIndex.ts, the one index
 * parser), to copy into another pack as they are: no inflating, no deflating. The pack merge
 * (disk/objects/consolidatePacks.ts) copies them from file to file.
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

/** An entry of a pack as its index lists it: its id and CRC-32, and where its stored bytes lie. */
export interface ListedEntry {
  readonly oid: Buffer;
  readonly crc: number;
  readonly offset: number;
  readonly end: number;
}

/**
 * The entries a pack's index lists, in pack order; undefined for offsets past 2 GiB or a version 1
 * index (no CRC-32s to copy). Whether an entry is a delta is told by its first byte
 * (`isWholeObject`), which only the pack holds.
 */
export function* listPackEntriesSteps(index: PackIndex): Steps<ListedEntry[] | undefined> {
  const listed: { oid: Buffer; crc: number; offset: number; end: number }[] = [];
  for (let i = 0; i < index.count; i++) {
    const offset = index.offsetAt(i);
    const crc = index.crcAt(i);
    if (offset >= SMALL_OFFSET_LIMIT || crc === undefined) return undefined;
    listed.push({ oid: index.idAt(i), crc, offset, end: 0 });
    if (i % ENTRIES_PER_STEP === ENTRIES_PER_STEP - 1) yield;
  }
  listed.sort((a, b) => a.offset - b.offset);
  yield;
  for (const entry of listed) entry.end = index.endOf(entry.offset);
  return listed;
}

/** Whether a stored entry whose first byte is `first` holds a whole object (a commit, tree, blob or tag), not a delta. */
export function isWholeObject(first: number): boolean {
  const type = (first >> 4) & 7;
  return type >= 1 && type <= 4;
}

/**
 * readPackEntries as steps (src/lib/steps.ts): a pause is safe after each run of entries, so the
 * entries of a pack of 27,000 entries (8 MiB), 45 to 90 ms of one piece, are listed in slices.
 */
export function* readPackEntriesSteps(pack: Buffer, indexBytes: Buffer): Steps<PackEntry[] | undefined> {
  const listed = yield* listPackEntriesSteps(new PackIndex(indexBytes, pack.length));
  if (!listed) return undefined;
  const entries: PackEntry[] = [];
  for (const { oid, crc, offset, end } of listed) {
    if (!isWholeObject(pack[offset])) return undefined;
    entries.push({ oid, crc, bytes: pack.subarray(offset, end) });
    if (entries.length % ENTRIES_PER_STEP === 0) yield;
  }
  return entries;
}
