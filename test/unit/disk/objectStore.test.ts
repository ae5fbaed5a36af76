/**
 * The object reader against git itself: every object of repositories that git packed with deltas
 * (offset and reference deltas), held whole, by windows or entry by entry, with loose objects, with a version 1 pack index, and with packs replaced by `git repack` after the first read, reads back with
 * the same type and bytes as `git cat-file` gives.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ObjectStore } from '../../../src/disk/objects/objectStore.js';
import { applyDelta } from '../../../src/git/delta.js';
import { PackFile, type PackReading } from '../../../src/disk/objects/packFile.js';
import { adler32 } from '../../../src/git/objectCompression.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';
import { DeltaFormatError } from '../../../src/git/errors.js';
import { ObjectNotFoundError } from '../../../src/disk/errors.js';

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
  const lines = Array.from(
    { length: 200 },
    (_, i) => `line ${i} of a configuration file that changes a little each time`,
  );
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

  it('reads a pack entry by entry from disk, and by windows of any size, as it reads one held in memory', () => {
    repo = tempGit();
    importHistory(repo, 40);
    repo.git(['repack', '-adf', '--depth=50']);
    const folder = join(repo.gitdir, 'objects', 'pack');
    const name = readdirSync(folder)
      .find((entry) => entry.endsWith('.pack'))!
      .slice(0, -'.pack'.length);
    const all = Number.MAX_SAFE_INTEGER;
    const readings: PackReading[] = [
      { wholeUpTo: 0, windowsUpTo: 0, window: 64 * 1024 }, // entry by entry
      { wholeUpTo: all, windowsUpTo: all, window: 64 * 1024 }, // whole
      // By windows: entries across windows, entries larger than a window, and one window for all.
      ...[64, 256, 4096, 64 * 1024].map((window) => ({ wholeUpTo: 0, windowsUpTo: all, window })),
    ];
    for (const reading of readings) {
      const pack = PackFile.open(join(folder, name), name, { reading });
      try {
        // Newest first, as history reads, and again, from the windows and bases kept.
        for (const object of [...allObjects(repo), ...allObjects(repo).reverse()]) {
          const read = pack.read(Buffer.from(object.oid, 'hex'), () => undefined)!;
          expect(read.type, object.oid).toBe(object.type);
          expect(read.content.equals(object.content), `${object.type} ${object.oid} (${JSON.stringify(reading)})`).toBe(
            true,
          );
        }
      } finally {
        pack.close();
      }
    }
  });

  it('reads a pack held by windows after git removed its files (the windows not read yet too)', () => {
    repo = tempGit();
    importHistory(repo, 40);
    repo.git(['repack', '-adf', '--depth=50']);
    const folder = join(repo.gitdir, 'objects', 'pack');
    const name = readdirSync(folder)
      .find((entry) => entry.endsWith('.pack'))!
      .slice(0, -'.pack'.length);
    const objects = allObjects(repo);
    const pack = PackFile.open(join(folder, name), name, {
      reading: { wholeUpTo: 0, windowsUpTo: Number.MAX_SAFE_INTEGER, window: 512 },
    });
    try {
      expect(pack.read(Buffer.from(objects[0].oid, 'hex'), () => undefined)?.content.equals(objects[0].content)).toBe(
        true,
      );
      for (const file of readdirSync(folder)) rmSync(join(folder, file));
      for (const object of objects)
        expect(
          pack.read(Buffer.from(object.oid, 'hex'), () => undefined)?.content.equals(object.content),
          object.oid,
        ).toBe(true);
    } finally {
      pack.close();
    }
  });

  it('reads an entry whose zlib stream is longer than zlib would make it, from a pack read by windows', async () => {
    repo = tempGit();
    const content = Buffer.from('a blob whose zlib stream starts with 300 empty stored blocks\n');
    // Valid zlib that no zlib writes: empty stored blocks, then the content as the final stored block.
    const final = Buffer.alloc(5);
    final[0] = 1;
    final.writeUInt16LE(content.length, 1);
    final.writeUInt16LE(content.length ^ 0xffff, 3);
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(adler32(content));
    const empty = Buffer.from([0, 0, 0, 0xff, 0xff]);
    const stream = Buffer.concat([
      Buffer.from([0x78, 0x01]),
      ...Array.from({ length: 300 }, () => empty),
      final,
      content,
      checksum,
    ]);
    // A pack of that one blob (type 3; its size in the header's varint), then its SHA-1.
    const header = [0x80 | (3 << 4) | (content.length & 0x0f), content.length >> 4];
    const body = Buffer.concat([
      Buffer.from('PACK'),
      Buffer.from([0, 0, 0, 2, 0, 0, 0, 1]),
      Buffer.from(header),
      stream,
    ]);
    const trailer = createHash('sha1').update(body).digest();
    const folder = join(repo.gitdir, 'objects', 'pack');
    mkdirSync(folder, { recursive: true });
    const name = `pack-${trailer.toString('hex')}`;
    writeFileSync(join(folder, `${name}.pack`), Buffer.concat([body, trailer]));
    repo.git(['index-pack', join(folder, `${name}.pack`)]);
    const oid = repo.git(['hash-object', '--stdin'], content.toString()).trim();
    expect(repo.gitBinary(['cat-file', 'blob', oid]).equals(content)).toBe(true); // git reads it
    // Windows of 256 bytes: the stream's first window holds what zlib would make of it, not all of it.
    const pack = PackFile.open(join(folder, name), name, {
      reading: { wholeUpTo: 0, windowsUpTo: Number.MAX_SAFE_INTEGER, window: 256 },
    });
    try {
      expect(pack.read(Buffer.from(oid, 'hex'), () => undefined)?.content.equals(content)).toBe(true);
    } finally {
      pack.close();
    }
    expect((await new ObjectStore(repo.gitdir).read(oid)).content.equals(content)).toBe(true);
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
    await expect(new ObjectStore(repo.gitdir).read('0123456789abcdef0123456789abcdef01234567')).rejects.toBeInstanceOf(
      ObjectNotFoundError,
    );
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
