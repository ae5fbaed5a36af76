/**
 * One pack (`objects/pack/pack-*.pack` with its `.idx`), read directly: the entry's bytes are
 * inflated with Node's zlib and delta entries resolved against their bases. Much cheaper than
 * isomorphic-git's reader, which lists the pack folder and inflates in JavaScript on every read
 * (the first pull after a restart reads every object of a repository).
 *
 * Small packs are read into memory whole at open. Larger ones, up to IN_MEMORY_LIMIT, are read in
 * windows of 64 KiB as entries need them, each window kept once read: the first history page of a
 * new server reads about 400 KiB of a repacked 6.5 MiB pack, where reading it whole took
 * milliseconds. Larger packs still are read entry by entry. Windowed and entry-by-entry
 * packs keep their file open, so a pack removed by a merge or `git repack` stays readable until
 * closed (and a pack named again by another repack cannot be mixed up with it). What a pack holds
 * (`heldBytes`, and each window as it is read) counts against the process's budget for open
 * packs, past which the object store closes the packs of the repository read least recently
 * (heldPacks.ts).
 */
import * as fs from 'node:fs';
import { applyDelta } from '../../git/delta.js';
import type { ObjectType } from '../../git/gitObjects.js';
import { PackIndex } from '../../git/packIndex.js';
import { inflateObject } from '../../git/objectCompression.js';
import { PackBases } from './deltaBases.js';
import { PackFormatError } from '../../git/errors.js';
import { ownBytes } from '../../lib/ownCopies.js';

export interface StoredObject {
  readonly type: ObjectType;
  readonly content: Buffer;
}

/** Packs up to this size are kept in memory (whole or by windows); cfghub's own per-push packs are far smaller. */
const IN_MEMORY_LIMIT = 32 * 1024 * 1024;
/** Packs up to this size are read whole when opened: a few milliseconds at most, and no file kept open. */
const WHOLE_LIMIT = 4 * 1024 * 1024;
/** The size of the windows larger packs are read in. */
const WINDOW = 64 * 1024;
/** The most bytes an entry's header takes: type and size (up to 10 bytes), then a base offset (10) or id (20). */
const HEADER_MAX = 32;
const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

/** Reads an object of another pack or a loose one: the base of a REF_DELTA entry. */
export type BaseReader = (oid: Buffer) => StoredObject | undefined;

/** How a pack is read: whole (in memory), by windows kept in memory, or entry by entry from its file. */
export interface PackReading {
  /** Packs up to this size are read whole at open. */
  readonly wholeUpTo: number;
  /** Packs up to this size (and over `wholeUpTo`) are read by windows; larger ones entry by entry. */
  readonly windowsUpTo: number;
  readonly window: number;
}

export const DEFAULT_READING: PackReading = { wholeUpTo: WHOLE_LIMIT, windowsUpTo: IN_MEMORY_LIMIT, window: WINDOW };

/** Told the bytes a pack holds in memory beyond what it held when opened (a window read): heldPacks.ts. */
export type HoldingGrew = (bytes: number) => void;
const unheeded: HoldingGrew = () => undefined;

/** How an opened pack's bytes are read (by its size), and whom a window read is told to. */
export interface PackOpening {
  readonly reading?: PackReading;
  readonly grew?: HoldingGrew;
}

/**
 * At least the bytes zlib's deflate makes of `size` bytes (its deflateBound: size + size/4096 +
 * size/16384 + 13, and 6 for the zlib header and checksum; framed as stored blocks, 5 bytes per
 * 64 KiB and 6): how much of a windowed pack an entry's stream is first read as. A longer stream
 * (valid, though no zlib would write it) is then read to the entry's exact end (inflateEntry).
 */
function streamBound(size: number): number {
  return size + Math.ceil(size / 1024) + 64;
}

/** How a pack's bytes are held: whole in memory, by windows kept in memory, or read entry by entry. */
export type Holding = 'whole' | 'windows' | 'entries';

interface PackBytes {
  readonly length: number;
  readonly holding: Holding;
  /**
   * The pack's bytes from `start`: at least up to `end` (or the pack's checksum, if before),
   * perhaps further. An entry's zlib stream ends by itself (what follows is ignored).
   */
  from(start: number, end: number): Buffer;
  /** The bytes held in memory: the whole pack, the windows read so far, or none. */
  held(): number;
  close(): void;
}

function inMemory(whole: Buffer): PackBytes {
  const end = whole.length - 20; // the trailing checksum
  return {
    length: whole.length,
    holding: 'whole',
    from: (start) => whole.subarray(start, end),
    held: () => whole.length,
    close: () => undefined,
  };
}

function readRange(handle: number, start: number, end: number): Buffer {
  const part = Buffer.allocUnsafe(end - start);
  const read = fs.readSync(handle, part, 0, part.length, start);
  return read === part.length ? part : part.subarray(0, read);
}

/** Windows of `window` bytes, read when first needed and kept; a range across windows is read as it is. */
function byWindows(handle: number, length: number, window: number, grew: HoldingGrew): PackBytes {
  const windows = new Map<number, Buffer>();
  let held = 0;
  const last = length - 20;
  return {
    length,
    holding: 'windows',
    from(start, end) {
      end = Math.min(end, last);
      const number = Math.floor(start / window);
      const first = number * window;
      if (end > first + window) return readRange(handle, start, end);
      let bytes = windows.get(number);
      if (!bytes) {
        windows.set(number, (bytes = readRange(handle, first, Math.min(first + window, last))));
        held += bytes.length;
        grew(bytes.length);
      }
      return bytes.subarray(start - first);
    },
    held: () => held,
    close: () => fs.closeSync(handle),
  };
}

function entryByEntry(handle: number, length: number): PackBytes {
  return {
    length,
    holding: 'entries',
    from: (start, end) => readRange(handle, start, Math.min(end, length - 20)),
    held: () => 0,
    close: () => fs.closeSync(handle),
  };
}

function openBytes(path: string, reading: PackReading, grew: HoldingGrew): PackBytes {
  const handle = fs.openSync(path, 'r');
  let length: number;
  try {
    length = fs.fstatSync(handle).size;
    if (length > reading.windowsUpTo) return entryByEntry(handle, length);
    if (length > reading.wholeUpTo) return byWindows(handle, length, reading.window, grew);
  } catch (error) {
    fs.closeSync(handle);
    throw error;
  }
  // Not from Node's shared pool: a small pack kept open would keep a whole 8 KiB slab (ownCopies.ts).
  const whole = Buffer.allocUnsafeSlow(length);
  try {
    fs.readSync(handle, whole, 0, length, 0);
  } finally {
    fs.closeSync(handle);
  }
  return inMemory(whole);
}

export class PackFile {
  /** Delta bases, kept within the process's budget (deltaBases.ts). */
  private readonly bases = new PackBases();

  private constructor(
    readonly name: string,
    private readonly index: PackIndex,
    private readonly bytes: PackBytes,
    /** The size of the windows `bytes` are read by, when they are. */
    private readonly window = WINDOW,
  ) {}

  /** A pack this process has just written, read from the bytes it wrote. */
  static fromBuffers(name: string, pack: Buffer, index: Buffer): PackFile {
    // Kept while the pack is open: a small push's pack and index are views into Node's pool (ownCopies.ts).
    return new PackFile(name, new PackIndex(ownBytes(index), pack.length), inMemory(ownBytes(pack)));
  }

  /**
   * A pack this process has just written to `<base>.pack`: kept from the bytes it wrote when it is
   * small enough to be read whole, else read from its file as a pack of its size found on disk
   * is (by windows, or entry by entry). Kept whole whatever its size, each repository's largest
   * merged pack stayed in memory until the next merge took it: with 16 clients pushing into two
   * repositories, the server's buffers grew with the history, to 445 MiB after 400 s.
   */
  static written(base: string, name: string, pack: Buffer, index: Buffer, opening: PackOpening = {}): PackFile {
    if (pack.length <= (opening.reading ?? DEFAULT_READING).wholeUpTo) return PackFile.fromBuffers(name, pack, index);
    return PackFile.withIndex(base, name, index, opening);
  }

  /** `<base>.pack`, read as a pack of its size found on disk is, with its index given (the bytes just written). */
  static withIndex(
    base: string,
    name: string,
    index: Buffer,
    { reading = DEFAULT_READING, grew = unheeded }: PackOpening = {},
  ): PackFile {
    const bytes = openBytes(`${base}.pack`, reading, grew);
    try {
      return new PackFile(name, new PackIndex(ownBytes(index), bytes.length), bytes, reading.window);
    } catch (error) {
      bytes.close();
      throw error;
    }
  }

  /** How this pack's bytes are held: whole in memory, by windows kept once read, or entry by entry. */
  get holding(): Holding {
    return this.bytes.holding;
  }

  /**
   * Opens `<base>.pack` and `<base>.idx`; throws when either is missing or malformed. How the
   * pack is read depends on its size (`reading`: whole, by windows or entry by entry).
   */
  static open(base: string, name: string, opening: PackOpening = {}): PackFile {
    return PackFile.withIndex(base, name, fs.readFileSync(`${base}.idx`), opening);
  }

  /** The bytes this pack holds in memory: its index, and the pack whole or the windows read so far (heldPacks.ts). */
  get heldBytes(): number {
    return this.index.byteLength + this.bytes.held();
  }

  has(oid: Buffer): boolean {
    return this.index.find(oid) !== undefined;
  }

  /** Up to `limit` ids of objects this pack holds that start with `prefix` (lower-case hex). */
  idsWithPrefix(prefix: string, limit: number): string[] {
    return this.index.idsWithPrefix(prefix, limit);
  }

  /**
   * The object, or undefined when this pack does not hold it. A tree read is kept as a delta base
   * too: walking history newest first, each older version of a tree (the `keys` tree, a shard) is
   * most often stored as a delta of the newer one just read (with this, and reads that
   * find an object kept as a base, a history page of a repacked repository inflated 534 pack
   * entries, not 761).
   */
  read(oid: Buffer, readBase: BaseReader): StoredObject | undefined {
    const offset = this.index.find(oid);
    if (offset === undefined) return undefined;
    const kept = this.bases.get(offset);
    if (kept) return kept;
    const object = this.readAt(offset, readBase);
    if (object.type === 'tree') this.bases.set(offset, object);
    return object;
  }

  close(): void {
    this.bytes.close();
    this.bases.clear();
  }

  private readAt(offset: number, readBase: BaseReader): StoredObject {
    // Held whole, an entry is sliced to the pack's end, which spares finding the next entry; read
    // entry by entry, exactly its own bytes; by windows, its header first (see inflateEntry).
    const entry = this.bytes.from(
      offset,
      this.bytes.holding === 'entries' ? this.index.endOf(offset) : offset + HEADER_MAX,
    );
    let byte = entry[0];
    const kind = (byte >> 4) & 7;
    // The inflated size (of the object, or of the delta), to size zlib's output (objectCompression.ts).
    let size = byte & 0x0f;
    let position = 1;
    for (let shift = 4; byte & 0x80; shift += 7) {
      byte = entry[position++];
      size += (byte & 0x7f) * 2 ** shift;
    }
    if (TYPES[kind]) return { type: TYPES[kind], content: this.inflateEntry(offset, entry, position, size) };

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
    return { type: base.type, content: applyDelta(base.content, this.inflateEntry(offset, entry, position, size)) };
  }

  /**
   * The data of the entry at `offset`, whose stream starts at `entry[position]`. From a pack read
   * by windows, the stream is taken as the most bytes zlib makes of `size` bytes (streamBound),
   * which nearly always lies in the window of the entry's start; a stream longer still (valid, if
   * no zlib would write it) fails to inflate from those, and is inflated again from the entry's
   * exact bytes, up to the next entry, as is an entry larger than a window.
   */
  private inflateEntry(offset: number, entry: Buffer, position: number, size: number): Buffer {
    if (this.bytes.holding !== 'windows') return inflateObject(entry.subarray(position), size);
    const wanted = position + streamBound(size);
    if (wanted <= this.window) {
      const bounded = entry.length >= wanted ? entry : this.bytes.from(offset, offset + wanted);
      try {
        return inflateObject(bounded.subarray(position), size);
      } catch (error) {
        if (offset + bounded.length >= this.index.endOf(offset)) throw error; // it had all its bytes: damaged
      }
    }
    const end = this.index.endOf(offset);
    return inflateObject(this.bytes.from(offset, end).subarray(position, end - offset), size);
  }

  private baseAt(offset: number, readBase: BaseReader): StoredObject {
    const cached = this.bases.get(offset);
    if (cached) return cached;
    const base = this.readAt(offset, readBase);
    this.bases.set(offset, base);
    return base;
  }
}
