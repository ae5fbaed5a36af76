/**
 * A pack index (`objects/pack/pack-*.idx`), version 2 (git's format since 2008) or version 1 (the
 * older one, still readable by git): finds an object's offset in its pack by binary search within
 * the index's fan-out bucket, and where each entry's stored bytes end (the next entry's offset),
 * so an entry can be inflated from exactly its own bytes.
 */
import { PackIndexFormatError } from './errors.js';

const V2_MAGIC = 0xff744f63;
const FANOUT = 256 * 4;

/** Where the parts of an index live: the fan-out table, the object ids, their offsets. */
interface Layout {
  readonly fanout: number;
  /** Position of object id `i`: `ids + i * idStride`. */
  readonly ids: number;
  readonly idStride: number;
  /** Position of the 32-bit offset of object `i`: `offsets + i * offsetStride`. */
  readonly offsets: number;
  readonly offsetStride: number;
  /** Version 2 only: the table of 64-bit offsets past 2 GiB. */
  readonly largeOffsets?: number;
}

/**
 * The number of objects an index lists, from its first 1,032 bytes (header and fan-out table)
 * alone: what the pack merge sorts packs by, without reading whole indexes.
 */
export function indexedObjectCount(start: Buffer): number {
  const v2 = start.length >= 8 && start.readUInt32BE(0) === V2_MAGIC;
  const fanout = v2 ? 8 : 0;
  if (start.length < fanout + FANOUT) throw new PackIndexFormatError('pack index is cut short');
  return start.readUInt32BE(fanout + FANOUT - 4);
}

/**
 * The order of the id at `at` in `index` against `oid` (negative: it sorts first), byte by byte
 * in JavaScript: `Buffer.compare` with offsets checks its arguments in a native call each time,
 * which made a binary search of a 40,000-object index about a microsecond per step (a
 * history page looks up about 1,000 objects). Ids differ within the first bytes nearly always.
 */
function compareId(index: Buffer, at: number, oid: Buffer): number {
  for (let i = 0; i < 20; i++) {
    const difference = index[at + i] - oid[i];
    if (difference !== 0) return difference;
  }
  return 0;
}

function layoutOf(index: Buffer): { layout: Layout; count: number } {
  if (index.length >= 8 && index.readUInt32BE(0) === V2_MAGIC) {
    if (index.readUInt32BE(4) !== 2)
      throw new PackIndexFormatError(`pack index version ${index.readUInt32BE(4)} is unknown`);
    const fanout = 8;
    const count = index.readUInt32BE(fanout + FANOUT - 4);
    const ids = fanout + FANOUT;
    if (index.length < ids + count * 28 + 40) throw new PackIndexFormatError('pack index is cut short');
    return {
      count,
      layout: { fanout, ids, idStride: 20, offsets: ids + count * 24, offsetStride: 4, largeOffsets: ids + count * 28 },
    };
  }
  // Version 1: the fan-out table, then (offset, id) pairs.
  if (index.length < FANOUT + 40) throw new PackIndexFormatError('pack index is cut short');
  const count = index.readUInt32BE(FANOUT - 4);
  if (index.length < FANOUT + count * 24 + 40) throw new PackIndexFormatError('pack index is cut short');
  return { count, layout: { fanout: 0, ids: FANOUT + 4, idStride: 24, offsets: FANOUT, offsetStride: 24 } };
}

export class PackIndex {
  readonly count: number;
  private readonly layout: Layout;
  /**
   * Entry offsets in pack order, to find where an entry ends; sorted at the first `endOf`, since
   * packs read from memory never ask (sorting the offsets of a pack of 50,000 objects took a
   * first read of history several milliseconds).
   */
  private sorted: Float64Array | undefined;

  /** `packLength` is the size of the pack file the index describes. */
  constructor(
    private readonly index: Buffer,
    private readonly packLength: number,
  ) {
    ({ layout: this.layout, count: this.count } = layoutOf(index));
  }

  /** The index's bytes (what it holds in memory). */
  get byteLength(): number {
    return this.index.length;
  }

  private get sortedOffsets(): Float64Array {
    if (!this.sorted) {
      const offsets = new Float64Array(this.count + 1);
      for (let i = 0; i < this.count; i++) offsets[i] = this.offsetAt(i);
      offsets[this.count] = this.packLength - 20; // the pack's trailing checksum
      this.sorted = offsets.sort();
    }
    return this.sorted;
  }

  /** The offset of an object in the pack, or undefined when this pack does not hold it. */
  find(oid: Buffer): number | undefined {
    const { fanout, ids, idStride } = this.layout;
    if (oid.length !== 20) return undefined; // not an id: no object has it
    const first = oid[0];
    let low = first === 0 ? 0 : this.index.readUInt32BE(fanout + (first - 1) * 4);
    let high = this.index.readUInt32BE(fanout + first * 4);
    while (low < high) {
      const middle = (low + high) >>> 1;
      const order = compareId(this.index, ids + middle * idStride, oid);
      if (order === 0) return this.offsetAt(middle);
      if (order < 0) low = middle + 1;
      else high = middle;
    }
    return undefined;
  }

  /**
   * Up to `limit` object ids (hex) that start with `prefix` (lower-case hex, at least 2 digits),
   * in order: a binary search to the first candidate within the fan-out bucket, then a walk.
   */
  idsWithPrefix(prefix: string, limit: number): string[] {
    const { fanout, ids, idStride } = this.layout;
    const first = parseInt(prefix.slice(0, 2), 16);
    const start = Buffer.from(prefix.padEnd(40, '0').slice(0, 40), 'hex');
    let low = first === 0 ? 0 : this.index.readUInt32BE(fanout + (first - 1) * 4);
    let high = this.index.readUInt32BE(fanout + first * 4);
    const end = high;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const at = ids + middle * idStride;
      if (this.index.compare(start, 0, 20, at, at + 20) < 0)
        low = middle + 1; // the entry sorts before the prefix
      else high = middle;
    }
    const found: string[] = [];
    for (let i = low; i < end && found.length < limit; i++) {
      const id = this.index.toString('hex', ids + i * idStride, ids + i * idStride + 20);
      if (!id.startsWith(prefix)) break;
      found.push(id);
    }
    return found;
  }

  /** The id of the `position`-th object in id order. */
  idAt(position: number): Buffer {
    const at = this.layout.ids + position * this.layout.idStride;
    return this.index.subarray(at, at + 20);
  }

  /** The CRC-32 of the `position`-th object's stored bytes; undefined in a version 1 index, which has none. */
  crcAt(position: number): number | undefined {
    if (this.layout.largeOffsets === undefined) return undefined;
    return this.index.readUInt32BE(this.layout.ids + this.count * 20 + position * 4);
  }

  /** Where the entry starting at `offset` ends: the next entry's start, or the pack's checksum. */
  endOf(offset: number): number {
    let low = 0;
    let high = this.sortedOffsets.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sortedOffsets[middle] <= offset) low = middle + 1;
      else high = middle;
    }
    return this.sortedOffsets[low];
  }

  /** The offset in the pack of the `position`-th object in id order. */
  offsetAt(position: number): number {
    const { offsets, offsetStride, largeOffsets } = this.layout;
    const small = this.index.readUInt32BE(offsets + position * offsetStride);
    if (largeOffsets === undefined || !(small & 0x80000000)) return small;
    // Version 2 keeps offsets past 2 GiB in a table of 64-bit offsets after the small ones.
    const large = largeOffsets + (small & 0x7fffffff) * 8;
    return this.index.readUInt32BE(large) * 2 ** 32 + this.index.readUInt32BE(large + 4);
  }
}
