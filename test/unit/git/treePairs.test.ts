/**
 * changedEntries compares two trees in their stored bytes; it must give exactly what
 * parsing both trees and pairing their entries in git's order gave before, for any trees: names
 * past ASCII and not valid UTF-8 included, a file and a folder of one name, a changed mode.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BLOB_MODE,
  compareTreeEntries,
  parseTree,
  serializeTree,
  TREE_MODE,
  type TreeEntry,
} from '../../../src/git/gitObjects.js';
import { changedEntries, type EntryPair } from '../../../src/git/treePairs.js';

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
  const key = (e: { name: Buffer; mode: string }) =>
    e.mode === TREE_MODE ? Buffer.concat([e.name, Buffer.from('/')]) : e.name;
  const sorted = [...entries].sort((x, y) => Buffer.compare(key(x), key(y)));
  return Buffer.concat(
    sorted.flatMap((e) => [Buffer.from(`${e.mode} `), e.name, Buffer.from([0]), Buffer.from(e.oid, 'hex')]),
  );
}

const oid = (n: number) => n.toString(16).padStart(40, '0');
const entry = (name: string, mode: string, n: number): TreeEntry => ({ name, mode, oid: oid(n) });

describe('changedEntries', () => {
  it('lists only the entries that differ, paired by name, as parsing both trees did', () => {
    const before = serializeTree([
      entry('a', BLOB_MODE, 1),
      entry('b', TREE_MODE, 2),
      entry('c', BLOB_MODE, 3),
      entry('e', BLOB_MODE, 5),
    ]);
    const after = serializeTree([
      entry('a', BLOB_MODE, 1),
      entry('b', TREE_MODE, 9),
      entry('d', BLOB_MODE, 4),
      entry('e', '100755', 5),
    ]);
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
      fc
        .constantFrom('a', 'b', 'a.b', 'a-b', 'ab', 'é', 'é.x', 'zz', '_', '00', '0a', 'ff')
        .map((text) => Buffer.from(text, 'utf8')),
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

  it('gives what parsing both trees gave for large trees that differ in a few entries, as commits make them (property)', () => {
    // Trees past the size from which common runs are skipped (treePairs.ts), with ids full of
    // zero and space bytes, and a few entries removed, added or changed between the two.
    const anId = fc.oneof(
      fc.integer({ min: 0, max: 0x2020 }).map(oid),
      fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => Buffer.from(bytes).toString('hex')),
    );
    const anEntry = fc.record({
      name: fc
        .oneof(
          fc.stringMatching(/^[0-9a-f]{2}$/),
          fc.stringMatching(/^[a-z0-9._-]{1,12}$/),
          fc.constantFrom('é', 'a b', 'x\u00ff'),
        )
        .map((text) => Buffer.from(text, 'utf8')),
      mode: fc.constantFrom(BLOB_MODE, TREE_MODE, '100755'),
      oid: anId,
    });
    const unique = (list: { name: Buffer; mode: string; oid: string }[]) => {
      const seen = new Set<string>();
      return list.filter((e) => {
        const id = `${e.name.toString('hex')}:${e.mode === TREE_MODE}`;
        if (e.name.includes(0x20) || seen.has(id)) return false;
        seen.add(id);
        return true;
      });
    };
    const edits = fc.array(
      fc.record({ at: fc.nat(), kind: fc.constantFrom('remove', 'add', 'id', 'mode'), entry: anEntry }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(fc.array(anEntry, { minLength: 20, maxLength: 80 }), edits, (list, changes) => {
        const before = unique(list);
        const after = [...before];
        for (const change of changes) {
          const at = change.at % Math.max(1, after.length);
          if (change.kind === 'remove') after.splice(at, 1);
          else if (change.kind === 'add') after.push(change.entry);
          else if (after[at])
            after[at] =
              change.kind === 'id'
                ? { ...after[at], oid: change.entry.oid }
                : { ...after[at], mode: after[at].mode === BLOB_MODE ? '100755' : BLOB_MODE };
        }
        const [b, a] = [rawTree(before), rawTree(unique(after))];
        expect(changedEntries(b, a)).toEqual(parsedPairs(b, a));
        expect(changedEntries(a, b)).toEqual(parsedPairs(a, b));
        expect(changedEntries(b, b)).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });

  it('throws on a cut-short last entry after a long run both trees have in common', () => {
    const entries = Array.from({ length: 40 }, (_, i) => entry(`k${String(i).padStart(2, '0')}`, BLOB_MODE, i + 1));
    const cut = Buffer.concat([serializeTree(entries), Buffer.from('100644 zz\0'), Buffer.alloc(10, 1)]);
    expect(() => parseTree(cut)).toThrow();
    expect(() => changedEntries(cut, cut)).toThrow('malformed tree object');
    expect(() => changedEntries(serializeTree(entries), cut)).toThrow('malformed tree object');
  });

  it('throws on a malformed tree, as parseTree does', () => {
    const good = serializeTree([entry('a', BLOB_MODE, 1)]);
    expect(() => changedEntries(good, Buffer.from('100644 a\0short'))).toThrow('malformed tree object');
    expect(() => changedEntries(Buffer.from('no space or nul'), good)).toThrow('malformed tree object');
  });
});
