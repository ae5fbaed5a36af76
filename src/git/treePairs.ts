/**
 * The entries that differ between two trees, read from the trees' stored bytes.
 *
 * Why not parse both trees: the `keys` tree has one entry per shard (256 of them), and a commit
 * changes one to three. Parsing made three strings for each of the 256 entries of both sides, once
 * per commit of a history page: most of a page's time, in allocation and garbage collection. Here
 * the entries are compared where they lie, and only those that differ become TreeEntry objects.
 *
 * The result is exactly what parsing both trees and pairing their entries gives: entries are
 * paired by git's order (the bytes of the name, a folder's name compared as if it ended in `/`;
 * compareTreeEntries), so a file and a folder of the same name are two entries; a pair is listed
 * when its id or mode differs. Names with bytes past ASCII are compared by compareTreeEntries
 * itself, so even a name that is not valid UTF-8 orders as before. A malformed tree throws as
 * parseTree does.
 */
import { compareTreeEntries, TREE_MODE, type TreeEntry } from './gitObjects.js';

export type EntryPair = [TreeEntry | undefined, TreeEntry | undefined];

const SPACE = 0x20;
const SLASH = 0x2f;
const ID_BYTES = 20;
const TREE_MODE_BYTES = Buffer.from(TREE_MODE, 'latin1');

/** A position in a tree's bytes: the entry at `at`, its mode before `space`, its name up to `nul`, its id after. */
class Cursor {
  at = 0;
  space = 0;
  nul = 0;

  constructor(readonly tree: Buffer) {
    this.load();
  }

  get done(): boolean {
    return this.at >= this.tree.length;
  }

  advance(): void {
    this.moveTo(this.nul + 1 + ID_BYTES);
  }

  /** To the entry starting at `at` (an entry's start, or the end). */
  moveTo(at: number): void {
    this.at = at;
    this.load();
  }

  /** Finds the entry's space and NUL with loops, not `indexOf`: modes and names are a few bytes, and each native call cost more than the scan. */
  private load(): void {
    if (this.done) return;
    const tree = this.tree;
    let space = this.at;
    while (space < tree.length && tree[space] !== SPACE) space++;
    let nul = space;
    while (nul < tree.length && tree[nul] !== 0) nul++;
    if (nul + 1 + ID_BYTES > tree.length) throw new Error('malformed tree object');
    this.space = space;
    this.nul = nul;
  }

  isFolder(): boolean {
    if (this.space - this.at !== TREE_MODE_BYTES.length) return false;
    for (let i = 0; i < TREE_MODE_BYTES.length; i++) if (this.tree[this.at + i] !== TREE_MODE_BYTES[i]) return false;
    return true;
  }

  entry(): TreeEntry {
    return {
      mode: this.tree.toString('latin1', this.at, this.space),
      name: this.tree.toString('utf8', this.space + 1, this.nul),
      oid: this.tree.toString('hex', this.nul + 1, this.nul + 1 + ID_BYTES),
    };
  }

  /** The same bytes as the other cursor's entry (mode, name and id): the common case, settled without ordering. */
  sameEntry(other: Cursor): boolean {
    const length = this.nul - this.at;
    if (length !== other.nul - other.at) return false;
    for (let i = 0; i <= length + ID_BYTES; i++) if (this.tree[this.at + i] !== other.tree[other.at + i]) return false;
    return true;
  }

  /** Same mode and id as the other cursor's entry. */
  sameContent(other: Cursor): boolean {
    const modeLength = this.space - this.at;
    if (modeLength !== other.space - other.at) return false;
    for (let i = 0; i < modeLength; i++) if (this.tree[this.at + i] !== other.tree[other.at + i]) return false;
    for (let i = 1; i <= ID_BYTES; i++) if (this.tree[this.nul + i] !== other.tree[other.nul + i]) return false;
    return true;
  }
}

/** Byte `i` of an entry's sort key (its name, then `/` for a folder); -1 past its end. */
function keyByte(cursor: Cursor, folder: boolean, i: number): number {
  const at = cursor.space + 1 + i;
  if (at < cursor.nul) return cursor.tree[at];
  return at === cursor.nul && folder ? SLASH : -1;
}

/** git's order of the two entries (as compareTreeEntries). */
function compare(x: Cursor, y: Cursor): number {
  const xFolder = x.isFolder();
  const yFolder = y.isFolder();
  for (let i = 0; ; i++) {
    const a = keyByte(x, xFolder, i);
    const b = keyByte(y, yFolder, i);
    if (a >= 0x80 || b >= 0x80) return compareTreeEntries(x.entry(), y.entry());
    if (a !== b) return a < b ? -1 : 1;
    if (a === -1) return 0;
  }
}

/** Below this many bytes left on either side, entries are compared one by one without looking for a common run. */
const RUN_FROM = 512;

/** How many bytes `x` from `xAt` and `y` from `yAt` have in common, by native comparisons (memcmp) of halving lengths. */
function commonLength(x: Buffer, xAt: number, y: Buffer, yAt: number): number {
  let high = Math.min(x.length - xAt, y.length - yAt);
  if (x.compare(y, yAt, yAt + high, xAt, xAt + high) === 0) return high;
  let low = 0; // the first `low` bytes are the same, the first `high` are not
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    if (x.compare(y, yAt, yAt + middle, xAt, xAt + middle) === 0) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * Moves both cursors (each at an entry's start) past the entries that are the same bytes on both
 * sides from there: a run found by native comparisons, then walked entry by entry on one side
 * only, two string searches each. Why: a commit changes one to three of the 256
 * entries of the `keys` tree, and comparing the others byte by byte in JavaScript was most of
 * the work of the first history page of a new server, before the compiler optimized the loops.
 * An entry that would not parse (no space, no NUL, no whole id) ends the run, so the entry by
 * entry comparison meets it and throws as before.
 */
function skipCommonRun(b: Cursor, a: Cursor): void {
  if (b.done || a.done || b.tree.length - b.at < RUN_FROM || a.tree.length - a.at < RUN_FROM) return;
  // The run as a one-byte string: V8's own string search, where Buffer's indexOf goes through
  // JavaScript checks on every call (slow before they are compiled, on a new server).
  const run = b.tree.toString('latin1', b.at, b.at + commonLength(b.tree, b.at, a.tree, a.at));
  let skipped = 0;
  for (;;) {
    const space = run.indexOf(' ', skipped);
    const nul = space < 0 ? -1 : run.indexOf('\0', space);
    if (nul < 0 || nul + 1 + ID_BYTES > run.length) break;
    skipped = nul + 1 + ID_BYTES;
  }
  if (skipped === 0) return;
  const at = b.at + skipped;
  a.moveTo(a.at + (at - b.at));
  b.moveTo(at);
}

/**
 * The entries that differ between two trees (their stored bytes), paired by name and kind, in
 * git's order: [before, after], either absent when the other side has no such entry.
 */
export function changedEntries(before: Buffer, after: Buffer): EntryPair[] {
  const out: EntryPair[] = [];
  const b = new Cursor(before);
  const a = new Cursor(after);
  skipCommonRun(b, a);
  while (!b.done || !a.done) {
    if (!b.done && !a.done && b.sameEntry(a)) {
      b.advance();
      a.advance();
      continue;
    }
    const order = b.done ? 1 : a.done ? -1 : compare(b, a);
    if (order < 0) {
      out.push([b.entry(), undefined]);
      b.advance();
    } else if (order > 0) {
      out.push([undefined, a.entry()]);
      a.advance();
    } else {
      if (!b.sameContent(a)) out.push([b.entry(), a.entry()]);
      b.advance();
      a.advance();
    }
    skipCommonRun(b, a);
  }
  return out;
}
