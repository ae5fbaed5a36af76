/**
 * changedEntries (issue 22) compares two trees in their stored bytes; it must give exactly what
 * parsing both trees and pairing their entries in git's order gave before, for any trees: names
 * past ASCII and not valid UTF-8 included, a file and a folder of one name, a changed mode.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOB_MODE, compareTreeEntries, parseTree, serializeTree, TREE_MODE, type TreeEntry } from '../../src/git/gitObjects.js';
import { changedEntries, type EntryPair } from '../../src/git/treePairs.js';

/** The pairing as it was: both trees parsed, entries walked in git's order. */
function parsedPairs(before: Buffer, after: Buffer): EntryPair[] {
  const b = parseTree(before);
  const a = parseTree(after);
  const out: EntryPair[] = [];
  let i = 0;
  let j = 0;
  while (i < b.length || j < a.length) {
    const order = i === b.length ? 1 : j === a.length ? -1 : compareTreeEntries(b[i], a[j]);
    if (order < 0) out.push([b[i++], undefined]);
    else if (order > 0) out.push([undefined, a[j++]]);
    else {
      if (b[i].oid !== a[j].oid || b[i].mode !== a[j].mode) out.push([b[i], a[j]]);
      i++;
      j++;
    }
  }
  return out;
}

/** A tree's bytes from entries given with raw name bytes (which may not be valid UTF-8), in git's order. */
function rawTree(entries: { name: Buffer; mode: string; oid: string }[]): Buffer {
  const key = (e: { name: Buffer; mode: string }) => (e.mode === TREE_MODE ? Buffer.concat([e.name, Buffer.from('/')]) : e.name);
  const sorted = [...entries].sort((x, y) => Buffer.compare(key(x), key(y)));
  return Buffer.concat(sorted.flatMap((e) => [Buffer.from(`${e.mode} `), e.name, Buffer.from([0]), Buffer.from(e.oid, 'hex')]));
}

const oid = (n: number) => n.toString(16).padStart(40, '0');
const entry = (name: string, mode: string, n: number): TreeEntry => ({ name, mode, oid: oid(n) });

describe('changedEntries', () => {
  it('lists only the entries that differ, paired by name, as parsing both trees did', () => {
    const before = serializeTree([entry('a', BLOB_MODE, 1), entry('b', TREE_MODE, 2), entry('c', BLOB_MODE, 3), entry('e', BLOB_MODE, 5)]);
    const after = serializeTree([entry('a', BLOB_MODE, 1), entry('b', TREE_MODE, 9), entry('d', BLOB_MODE, 4), entry('e', '100755', 5)]);
    expect(changedEntries(before, after)).toEqual([
      [entry('b', TREE_MODE, 2), entry('b', TREE_MODE, 9)],
      [entry('c', BLOB_MODE, 3), undefined],
      [undefined, entry('d', BLOB_MODE, 4)],
      [entry('e', BLOB_MODE, 5), entry('e', '100755', 5)],
    ]);
    expect(changedEntries(before, before)).toEqual([]);
    expect(changedEntries(Buffer.alloc(0), before)).toEqual(parseTree(before).map((e) => [undefined, e]));
  });

  it('keeps a file and a folder of the same name apart, in git order (a folder sorts as if it ended in /)', () => {
    const before = serializeTree([entry('x', BLOB_MODE, 1), entry('x.y', BLOB_MODE, 2)]);
    const after = serializeTree([entry('x', TREE_MODE, 1), entry('x.y', BLOB_MODE, 2)]);
    expect(changedEntries(before, after)).toEqual(parsedPairs(before, after));
    expect(changedEntries(before, after)).toEqual([
      [entry('x', BLOB_MODE, 1), undefined],
      [undefined, entry('x', TREE_MODE, 1)],
    ]);
  });

  it('gives what parsing both trees gave, for any two trees (property)', () => {
    // Names as UTF-8 (ASCII or not), or any bytes at all (often not valid UTF-8).
    const nameBytes = fc.oneof(
      fc.constantFrom('a', 'b', 'a.b', 'a-b', 'ab', 'é', 'é.x', 'zz', '_', '00', '0a', 'ff').map((text) => Buffer.from(text, 'utf8')),
      fc.uint8Array({ minLength: 1, maxLength: 4 }).map((bytes) => Buffer.from(bytes)),
    );
    const anEntry = fc.record({
      name: nameBytes,
      mode: fc.constantFrom(BLOB_MODE, TREE_MODE, '100755'),
      oid: fc.integer({ min: 1, max: 4 }).map(oid),
    });
    const usable = (name: Buffer) => !name.includes(0) && !name.includes(0x20) && !name.includes(0x2f);
    const entries = fc.array(anEntry, { maxLength: 12 }).map((list) => {
      // One entry per name and kind, as in a real tree.
      const seen = new Set<string>();
      return list.filter((e) => {
        const id = `${e.name.toString('hex')}:${e.mode === TREE_MODE}`;
        if (!usable(e.name) || seen.has(id)) return false;
        seen.add(id);
        return true;
      });
    });
    fc.assert(
      fc.property(entries, entries, (before, after) => {
        const [b, a] = [rawTree(before), rawTree(after)];
        expect(changedEntries(b, a)).toEqual(parsedPairs(b, a));
      }),
      { numRuns: 2000 },
    );
  });

  it('throws on a malformed tree, as parseTree does', () => {
    const good = serializeTree([entry('a', BLOB_MODE, 1)]);
    expect(() => changedEntries(good, Buffer.from('100644 a\0short'))).toThrow('malformed tree object');
    expect(() => changedEntries(Buffer.from('no space or nul'), good)).toThrow('malformed tree object');
  });
});
