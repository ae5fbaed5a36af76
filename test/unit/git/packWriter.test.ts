/**
 * The pack writer against git itself: git indexes our pack to the very same index bytes, verifies
 * it, and reads every object back unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeObject, serializeTree, BLOB_MODE } from '../../../src/git/gitObjects.js';
import { assemblePack, buildPack, crc32Bytes } from '../../../src/git/packWriter.js';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { readPackEntries, readPackEntriesSteps } from '../../../src/git/packEntries.js';
import { indexedObjectCount } from '../../../src/git/packIndex.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

let repo: TempGit | undefined;
afterEach(() => repo?.remove());

function sampleObjects() {
  const blobs = [
    encodeObject('blob', Buffer.from('')),
    encodeObject('blob', Buffer.from('small\n')),
    encodeObject('blob', Buffer.alloc(70_000, 'x')), // a size that needs a multi-byte entry header
    encodeObject('blob', Buffer.from('ünïcödé and bytes \u0000\u00ff')),
  ];
  const tree = encodeObject(
    'tree',
    serializeTree(blobs.map((b, i) => ({ name: `f${i}`, mode: BLOB_MODE, oid: b.oid }))),
  );
  return [...blobs, tree];
}

describe('the CRC-32 of pack entries', () => {
  it("is zlib's where Node has it, and the JavaScript one gives the same (property)", () => {
    expect(crc32Bytes(Buffer.from('123456789'))).toBe(0xcbf43926); // the check value of CRC-32
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3_000 }), (bytes) => {
        expect(crc32Bytes(bytes)).toBe(zlib.crc32(bytes));
      }),
    );
  });
});

describe('buildPack', () => {
  it('writes a pack that git indexes to the same bytes as our index, and verifies', () => {
    repo = tempGit();
    const objects = sampleObjects();
    const pack = buildPack(objects);
    const packPath = join(repo.dir, `${pack.name}.pack`);
    writeFileSync(packPath, pack.pack);
    repo.git(['index-pack', '-o', join(repo.dir, 'git.idx'), packPath]);
    expect(readFileSync(join(repo.dir, 'git.idx')).equals(pack.index)).toBe(true);
    writeFileSync(join(repo.dir, `${pack.name}.idx`), pack.index);
    const verified = repo.git(['verify-pack', '-v', join(repo.dir, `${pack.name}.idx`)]);
    for (const object of objects) expect(verified).toContain(object.oid);
  });

  it('gives objects git reads back byte for byte once the pack is in a repository', () => {
    repo = tempGit();
    const objects = sampleObjects();
    const pack = buildPack(objects);
    const base = join(repo.gitdir, 'objects', 'pack', pack.name);
    writeFileSync(`${base}.pack`, pack.pack);
    writeFileSync(`${base}.idx`, pack.index);
    for (const object of objects) {
      expect(repo.git(['cat-file', '-t', object.oid]).trim()).toBe(object.type);
      expect(repo.gitBinary(['cat-file', object.type, object.oid]).equals(object.content)).toBe(true);
    }
    repo.git(['fsck', '--strict', '--no-dangling']);
  });
});

describe('readPackEntries (through the one index parser, packIndex.ts)', () => {
  it('reads back the entries a pack was written from, so copying them rebuilds the very same pack', () => {
    const pack = buildPack(sampleObjects());
    const entries = readPackEntries(pack.pack, pack.index)!;
    expect(entries).toHaveLength(sampleObjects().length);
    const again = assemblePack(entries);
    expect(again.pack.equals(pack.pack)).toBe(true);
    expect(again.index.equals(pack.index)).toBe(true);
    expect(indexedObjectCount(pack.index.subarray(0, 8 + 256 * 4))).toBe(entries.length);
  });

  it('as steps, pauses after each run of 1,024 entries and gives the same entries (a merge of 8 MiB was one piece of 45 to 90 ms)', () => {
    const objects = Array.from({ length: 5_000 }, (_, i) =>
      encodeObject('blob', Buffer.from(`key: k${i}\nvalue: ${i}\n`)),
    );
    const pack = buildPack(objects);
    const steps = readPackEntriesSteps(pack.pack, pack.index);
    let pauses = 0;
    let next = steps.next();
    for (; !next.done; next = steps.next()) pauses++;
    expect(pauses).toBeGreaterThanOrEqual(2 * Math.floor(objects.length / 1_024));
    expect(next.value!.map((entry) => entry.oid.toString('hex'))).toEqual(
      readPackEntries(pack.pack, pack.index)!.map((entry) => entry.oid.toString('hex')),
    );
  });

  it('leaves a pack with deltas or a version 1 index to git (undefined), and counts a version 1 index', () => {
    repo = tempGit();
    const base = Buffer.from(Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join(''));
    const objects = [
      encodeObject('blob', base),
      encodeObject('blob', Buffer.concat([base, Buffer.from('one more\n')])),
    ];
    const plain = buildPack(objects);
    const packPath = join(repo.dir, 'mine.pack');
    writeFileSync(packPath, plain.pack);
    // git's own pack of the same objects, with deltas, and a version 1 index of ours.
    const listed = objects.map((o) => o.oid).join('\n');
    repo.git(['index-pack', '-o', join(repo.dir, 'mine.idx'), packPath]);
    const v1 = join(repo.dir, 'v1.idx');
    repo.git(['index-pack', '--index-version=1', '-o', v1, packPath]);
    expect(readPackEntries(plain.pack, readFileSync(v1))).toBeUndefined();
    expect(indexedObjectCount(readFileSync(v1))).toBe(2);
    writeFileSync(join(repo.gitdir, 'objects', 'pack', `${plain.name}.pack`), plain.pack);
    writeFileSync(join(repo.gitdir, 'objects', 'pack', `${plain.name}.idx`), plain.index);
    const deltified = repo.gitBinary(
      ['pack-objects', '--stdout', '--no-reuse-object', '--window=10', '--depth=5'],
      `${listed}\n`,
    );
    writeFileSync(join(repo.dir, 'delta.pack'), deltified);
    repo.git(['index-pack', '-o', join(repo.dir, 'delta.idx'), join(repo.dir, 'delta.pack')]);
    expect(readPackEntries(deltified, readFileSync(join(repo.dir, 'delta.idx')))).toBeUndefined();
  });
});
