/**
 * The pack writer against git itself: git indexes our pack to the very same index bytes, verifies
 * it, and reads every object back unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeObject, serializeTree, BLOB_MODE } from '../../src/git/gitObjects.js';
import { buildPack } from '../../src/git/packWriter.js';
import { tempGit, type TempGit } from '../support/gitCli.js';

let repo: TempGit | undefined;
afterEach(() => repo?.remove());

function sampleObjects() {
  const blobs = [
    encodeObject('blob', Buffer.from('')),
    encodeObject('blob', Buffer.from('small\n')),
    encodeObject('blob', Buffer.alloc(70_000, 'x')), // a size that needs a multi-byte entry header
    encodeObject('blob', Buffer.from('ünïcödé and bytes \u0000\u00ff')),
  ];
  const tree = encodeObject('tree', serializeTree(blobs.map((b, i) => ({ name: `f${i}`, mode: BLOB_MODE, oid: b.oid }))));
  return [...blobs, tree];
}

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
