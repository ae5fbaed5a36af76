/**
 * Objects by id prefix (short commit ids), from packs with index version 2 and 1 and
 * from loose objects, compared with the list `git cat-file --batch-all-objects` gives.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../../src/disk/objects/objectStore.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

let repo: TempGit;

/** Writes `n` loose blobs; returns their ids. */
function write(n: number, tag: string): string {
  const files = Array.from({ length: n }, (_, i) => {
    const file = `${repo.dir}/${tag}-${i}`;
    writeFileSync(file, `${tag} object ${i}\n`);
    return file;
  });
  return repo.git(['hash-object', '-w', '--stdin-paths'], files.join('\n'));
}

/** Packs those objects (unreachable, so `git repack` would leave them) and removes their loose copies. */
function pack(ids: string, indexVersion: number): void {
  repo.git(['pack-objects', '-q', `--index-version=${indexVersion}`, `${repo.gitdir}/objects/pack/pack`], ids);
  repo.git(['prune-packed']);
}

const allIds = () =>
  repo.git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).trim().split('\n').sort();

beforeAll(() => {
  repo = tempGit();
  pack(write(400, 'v2'), 2);
  pack(write(300, 'v1'), 1);
  write(200, 'loose');
  const indexes = readdirSync(`${repo.gitdir}/objects/pack`).filter((file) => file.endsWith('.idx'));
  expect(
    indexes.map((file) => readFileSync(`${repo.gitdir}/objects/pack/${file}`).readUInt32BE(0) === 0xff744f63).sort(),
  ).toEqual([false, true]);
  expect(repo.git(['count-objects']).trim()).toMatch(/^200 objects/);
});

afterAll(() => repo?.remove());

describe('ObjectStore.idsWithPrefix', () => {
  it('finds exactly the objects git has with a prefix, in packs (index v2 and v1) and loose', () => {
    const ids = allIds();
    expect(ids).toHaveLength(900);
    const store = new ObjectStore(repo.gitdir);
    const prefixes = new Set<string>([
      '00',
      'ff',
      'abc',
      ...ids.slice(0, 80).flatMap((id) => [id.slice(0, 2), id.slice(0, 3), id.slice(0, 7), id]),
    ]);
    for (const prefix of prefixes) {
      expect(store.idsWithPrefix(prefix, 1000), prefix).toEqual(ids.filter((id) => id.startsWith(prefix)));
    }
  });

  it('stops at the limit', () => {
    const store = new ObjectStore(repo.gitdir);
    const prefix = allIds()[0].slice(0, 2);
    const many = allIds().filter((id) => id.startsWith(prefix));
    expect(many.length).toBeGreaterThan(1);
    expect(store.idsWithPrefix(prefix, 1)).toHaveLength(1);
  });
});
