/**
 * The object reader against git itself: every object of repositories that git packed with deltas
 * (offset and reference deltas), with loose objects, with a version 1 pack index, and with packs replaced by `git repack` after the first read, reads back with
 * the same type and bytes as `git cat-file` gives.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectStore } from '../../src/disk/objectStore.js';
import { applyDelta } from '../../src/git/delta.js';
import { PackFile } from '../../src/disk/packFile.js';
import { tempGit, type TempGit } from '../support/gitCli.js';
import { DeltaFormatError } from '../../src/git/errors.js';
import { ObjectNotFoundError } from '../../src/disk/errors.js';

interface GitObject {
  readonly oid: string;
  readonly type: string;
  readonly content: Buffer;
}

/** Every object of the repository, as `git cat-file --batch` gives them. */
function allObjects(repo: TempGit): GitObject[] {
  const output = repo.gitBinary(['cat-file', '--batch-all-objects', '--batch']);
  const objects: GitObject[] = [];
  let at = 0;
  while (at < output.length) {
    const lineEnd = output.indexOf(0x0a, at);
    const [oid, type, size] = output.toString('latin1', at, lineEnd).split(' ');
    const start = lineEnd + 1;
    objects.push({ oid, type, content: output.subarray(start, start + Number(size)) });
    at = start + Number(size) + 1;
  }
  return objects;
}

function deltaCount(repo: TempGit): number {
  return repo
    .git(['cat-file', '--batch-all-objects', '--batch-check=%(deltabase)'])
    .split('\n')
    .filter((base) => base && !/^0+$/.test(base)).length;
}

/** `count` commits of one growing file, so that git stores most versions as deltas. */
function importHistory(repo: TempGit, count: number, from = 0): void {
  const lines = Array.from({ length: 200 }, (_, i) => `line ${i} of a configuration file that changes a little each time`);
  let script = '';
  for (let i = from; i < from + count; i++) {
    lines[i % lines.length] = `changed in commit ${i}`;
    const content = `${lines.join('\n')}\n`;
    script += `commit refs/heads/main\ncommitter T <t@example.com> ${1_700_000_000 + i} +0000\ndata 9\ncommit ${i % 10}\n`;
    if (i === from && from > 0) script += 'from refs/heads/main^0\n';
    script += `M 100644 inline conf/app-${i % 3}.properties\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  repo.git(['fast-import', '--quiet'], script);
}

async function expectSameObjects(store: ObjectStore, objects: readonly GitObject[]): Promise<void> {
  for (const object of objects) {
    const read = await store.read(object.oid);
    expect(read.type, object.oid).toBe(object.type);
    expect(read.content.equals(object.content), `${object.type} ${object.oid}`).toBe(true);
  }
}

describe('ObjectStore reads what git wrote', () => {
  let repo: TempGit;
  afterEach(() => repo.remove());

  it('reads packs with offset deltas', async () => {
    repo = tempGit();
    importHistory(repo, 40);
    repo.git(['repack', '-adf', '--depth=50']);
    expect(deltaCount(repo)).toBeGreaterThan(20);
    await expectSameObjects(new ObjectStore(repo.gitdir), allObjects(repo));
  });

  it('reads a pack entry by entry from disk as it reads one held in memory', () => {
    repo = tempGit();
    importHistory(repo, 40);
    repo.git(['repack', '-adf', '--depth=50']);
    const folder = join(repo.gitdir, 'objects', 'pack');
    const name = readdirSync(folder).find((entry) => entry.endsWith('.pack'))!.slice(0, -'.pack'.length);
    for (const limit of [0, Number.MAX_SAFE_INTEGER]) {
      const pack = PackFile.open(join(folder, name), name, limit);
      try {
        for (const object of allObjects(repo)) {
          const read = pack.read(Buffer.from(object.oid, 'hex'), () => undefined)!;
          expect(read.type, object.oid).toBe(object.type);
          expect(read.content.equals(object.content), `${object.type} ${object.oid} (limit ${limit})`).toBe(true);
        }
      } finally {
        pack.close();
      }
    }
  });

  it('reads packs with reference deltas', async () => {
    repo = tempGit();
    importHistory(repo, 40);
    repo.git(['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-adf', '--depth=50']);
    expect(deltaCount(repo)).toBeGreaterThan(20);
    await expectSameObjects(new ObjectStore(repo.gitdir), allObjects(repo));
  });

  it('reads loose objects, and objects that another process packed after the first read', async () => {
    repo = tempGit();
    importHistory(repo, 10);
    repo.git(['repack', '-adf']);
    const store = new ObjectStore(repo.gitdir);
    await expectSameObjects(store, allObjects(repo));
    // New loose objects, then everything repacked into a new pack while the old one is removed.
    const loose = repo.git(['hash-object', '-w', '--stdin'], 'a loose blob\n').trim();
    expect((await store.read(loose)).content.toString()).toBe('a loose blob\n');
    importHistory(repo, 10, 10);
    repo.git(['repack', '-adf']);
    await expectSameObjects(store, allObjects(repo));
  });

  it('reads a pack with a version 1 index', async () => {
    repo = tempGit();
    importHistory(repo, 20);
    repo.git(['repack', '-adf']);
    const folder = join(repo.gitdir, 'objects', 'pack');
    const pack = readdirSync(folder).find((name) => name.endsWith('.pack'))!;
    const index = join(folder, pack.replace(/\.pack$/, '.idx'));
    rmSync(index);
    repo.git(['index-pack', '--index-version=1', '-o', index, join(folder, pack)]);
    await expectSameObjects(new ObjectStore(repo.gitdir), allObjects(repo));
  });

  it('names a missing object', async () => {
    repo = tempGit();
    importHistory(repo, 2);
    await expect(new ObjectStore(repo.gitdir).read('0123456789abcdef0123456789abcdef01234567')).rejects.toBeInstanceOf(ObjectNotFoundError);
  });
});

describe('applyDelta', () => {
  const base = Buffer.from('hello, configuration');
  /** size varints, then: copy 7 bytes from 0, insert "world". */
  const delta = Buffer.from([base.length, 12, 0x80 | 0x01 | 0x10, 0, 7, 5, ...Buffer.from('world')]);

  it('copies and inserts', () => {
    expect(applyDelta(base, delta).toString()).toBe('hello, world');
  });

  it('refuses a delta made for another base', () => {
    expect(() => applyDelta(Buffer.from('short'), delta)).toThrow(DeltaFormatError);
  });

  it('refuses a copy past the end of the base', () => {
    const broken = Buffer.from([base.length, 40, 0x80 | 0x01 | 0x10, 10, 40]);
    expect(() => applyDelta(base, broken)).toThrow(DeltaFormatError);
  });

  it('refuses a result shorter than announced', () => {
    expect(() => applyDelta(base, Buffer.from([base.length, 13, 0x80 | 0x10, 7]))).toThrow(DeltaFormatError);
  });
});
