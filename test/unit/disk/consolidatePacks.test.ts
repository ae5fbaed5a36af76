/**
 * Pack consolidation: each push writes one pack, and small packs are merged so their number stays
 * small, with every commit still readable by git and by a fresh reader.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { push } from '../../../src/service/write/push.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import {
  consolidatePacks,
  geometricPrefix,
  MERGED_PACK_LIMIT,
  PACKS_BEFORE_MERGE,
  packsToMerge,
} from '../../../src/disk/objects/consolidatePacks.js';
import { encodeObject } from '../../../src/git/gitObjects.js';
import { buildPack } from '../../../src/git/packWriter.js';
import type { PackFile } from '../../../src/disk/objects/packFile.js';
import { ObjectStore } from '../../../src/disk/objects/objectStore.js';
import { readSnapshot } from '../../../src/layout/readSnapshot.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { tempDir } from '../../support/harness.js';

describe('geometricPrefix', () => {
  it.each([
    [[1, 1, 1, 100], 3],
    [[1, 1, 5], 2],
    [[1, 2, 3, 6, 100], 4],
    [[10, 100], 1],
    [[3], 1],
  ])('of %j is %i', (sizes, expected) => {
    expect(geometricPrefix(sizes)).toBe(expected);
  });
});

describe('packsToMerge', () => {
  /** `small` packs of 1 object and 1 byte each (more than PACKS_BEFORE_MERGE), then the packs given as [objects, bytes]. */
  const packs = (small: number, ...more: [number, number][]) => [
    ...Array.from({ length: small }, () => ({ objects: 1, bytes: 1 })),
    ...more.map(([objects, bytes]) => ({ objects, bytes })),
  ];
  const merged = (list: ReturnType<typeof packs>, limit: number) =>
    packsToMerge(list, limit).map((pack) => `${pack.objects}/${pack.bytes}`);
  it('is nothing while there are few packs', () => {
    expect(merged(packs(PACKS_BEFORE_MERGE), 100)).toEqual([]);
  });
  it('is the geometric prefix when it fits', () => {
    expect(merged(packs(PACKS_BEFORE_MERGE, [20, 20], [1_000, 40]), 100)).toHaveLength(PACKS_BEFORE_MERGE + 1);
  });
  it('is fewer packs when the prefix is over the limit', () => {
    expect(merged(packs(PACKS_BEFORE_MERGE - 2, [2, 45], [3, 45], [4, 45]), 100)).toEqual([
      ...Array(PACKS_BEFORE_MERGE - 2).fill('1/1'),
      '2/45',
    ]);
  });
  it('leaves out packs over half the limit, and counts only the others', () => {
    expect(merged(packs(PACKS_BEFORE_MERGE, [1, 60]), 100)).toEqual([]);
    expect(merged(packs(PACKS_BEFORE_MERGE + 1, [1, 60]), 100)).toHaveLength(PACKS_BEFORE_MERGE + 1);
  });
  it('takes at least two, which always fit', () => {
    const list = [...Array.from({ length: PACKS_BEFORE_MERGE + 1 }, (_, i) => ({ objects: 10 ** (i + 1), bytes: 50 }))];
    expect(packsToMerge(list, 100)).toEqual(list.slice(0, 2));
  });
});

/** A bare repository holding `count` packs of one blob each, of `size` random bytes (deflating them keeps their size). */
async function packedBlobs(path: string, count: number, size: number): Promise<{ store: ObjectStore; ids: string[] }> {
  execFileSync('git', ['init', '--bare', '-q', path]);
  const store = new ObjectStore(path);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const blob = encodeObject('blob', randomBytes(size));
    ids.push(blob.oid);
    await store.writePackDurably(buildPack([blob]));
  }
  return { store, ids };
}

describe('a pack merge bounded in size', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeAll(() => (dir = tempDir()));
  afterAll(() => dir.remove());
  const packSizes = (gitdir: string) =>
    readdirSync(join(gitdir, 'objects', 'pack'))
      .filter((name) => name.endsWith('.pack'))
      .map((name) => statSync(join(gitdir, 'objects', 'pack', name)).size);

  it('never writes a pack over its limit, leaves larger packs alone, and loses no object', async () => {
    const gitdir = join(dir.path, 'bounded.git');
    const { store, ids } = await packedBlobs(gitdir, 40, 1_000);
    const limit = 8 * 1_024;
    for (let merged = -1; merged !== 0;) merged = await consolidatePacks(store, limit);
    await store.settled();
    const sizes = packSizes(gitdir);
    expect(sizes.length).toBeLessThan(40); // it did merge
    expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
    expect(sizes.filter((size) => size > limit / 2).length).toBeGreaterThan(1); // packs near the limit are not merged again
    for (const id of ids)
      expect(execFileSync('git', ['--git-dir', gitdir, 'cat-file', '-s', id], { encoding: 'utf8' }).trim()).toBe(
        '1000',
      );
    for (const id of ids) expect((await new ObjectStore(gitdir).read(id)).content.length).toBe(1_000);
  });

  it('reads a merged pack over 4 MiB from its file, not from the bytes it wrote', async () => {
    const gitdir = join(dir.path, 'large.git');
    const { store, ids } = await packedBlobs(gitdir, PACKS_BEFORE_MERGE + 1, 300 * 1_024);
    await store.read(ids[0]); // the packs are open, so the merge tells the store what it wrote
    expect(await consolidatePacks(store)).toBe(PACKS_BEFORE_MERGE + 1);
    await store.settled();
    const [size] = packSizes(gitdir);
    expect(size).toBeGreaterThan(4 * 1_024 * 1_024);
    expect(size).toBeLessThanOrEqual(MERGED_PACK_LIMIT);
    const open = [...(store as unknown as { packs: Map<string, PackFile> }).packs.values()]; // white box: the store's open packs
    expect(open.map((pack) => pack.holding)).toEqual(['windows']);
    for (const id of ids) expect((await store.read(id)).content.length).toBe(300 * 1_024);
  });

  it('copies the packs to the merged one in pieces, never holding a pack whole', async () => {
    const gitdir = join(dir.path, 'pieces.git');
    const { store, ids } = await packedBlobs(gitdir, PACKS_BEFORE_MERGE + 1, 300 * 1_024);
    await store.read(ids[0]); // the packs are open
    // Buffers are freed by a collection only: what the merge allocated is still counted when it returns.
    const before = process.memoryUsage().arrayBuffers;
    expect(await consolidatePacks(store)).toBe(PACKS_BEFORE_MERGE + 1);
    const allocated = process.memoryUsage().arrayBuffers - before;
    await store.settled();
    const [size] = packSizes(gitdir);
    expect(size).toBeGreaterThan(4 * 1_024 * 1_024);
    // Read whole and assembled in one buffer, the merge allocated twice the merged pack's size.
    expect(allocated).toBeLessThan(1_024 * 1_024);
    for (const id of ids) expect((await store.read(id)).content.length).toBe(300 * 1_024);
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'ignore' });
  });

  it('closes the pack it had open when the same large pack is written again (a retried push)', async () => {
    const gitdir = join(dir.path, 'again.git');
    const { store, ids } = await packedBlobs(gitdir, 1, 1_024);
    await store.read(ids[0]); // the packs are open
    const objects = Array.from({ length: 5 }, () => encodeObject('blob', randomBytes(1_024 * 1_024)));
    const descriptorsOf = (name: string) =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).includes(`${name}.pack`); // "(deleted)" after, once replaced
        } catch {
          return false; // closed meanwhile (the listing's own descriptor)
        }
      }).length;
    for (let round = 0; round < 2; round++) {
      const placed = (await store.writeUntilFolderSync(objects))!;
      await placed.keep.release();
      expect(descriptorsOf(placed.pack.name)).toBe(1);
    }
    for (const object of objects) expect((await store.read(object.oid)).content.length).toBe(1_024 * 1_024);
  });

  it('never reads the pack it last found an object in once that pack is closed (git deleted it)', async () => {
    const gitdir = join(dir.path, 'last.git');
    const { store, ids } = await packedBlobs(gitdir, 1, 5 * 1_024 * 1_024); // one pack, read by windows
    const content = (await store.read(ids[0])).content; // found in that pack
    // The pack deleted and the object written loose (git writes no loose copy of a packed object).
    const folder = join(gitdir, 'objects', 'pack');
    for (const name of readdirSync(folder)) rmSync(join(folder, name));
    execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], { input: content });
    store.refreshIfChanged(); // as a new head makes it: the deleted pack is closed, its descriptor freed
    expect((await store.read(ids[0])).content.equals(content)).toBe(true);
  });

  it('goes on when a git repack took the large merged pack before the store opened it', async () => {
    const gitdir = join(dir.path, 'taken.git');
    const { store, ids } = await packedBlobs(gitdir, PACKS_BEFORE_MERGE + 1, 300 * 1_024);
    await store.read(ids[0]);
    const place = store.placeWrittenPack.bind(store);
    store.placeWrittenPack = async (name, temporary, index) => {
      await place(name, temporary, index);
      // As `git repack -a -d` would: the same objects in a pack of its own, the merged one deleted.
      execFileSync('git', ['--git-dir', gitdir, 'repack', '-a', '-d', '-k', '-q']); // -k: these blobs are unreachable
    };
    expect(await consolidatePacks(store)).toBe(PACKS_BEFORE_MERGE + 1);
    await store.settled();
    for (const id of ids) expect((await store.read(id)).content.length).toBe(300 * 1_024);
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'ignore' });
  });
});

describe('consolidatePacks', () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  const packs = () => readdirSync(join(repository.gitdir, 'objects', 'pack')).filter((name) => name.endsWith('.pack'));
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', repository.gitdir, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), {
      account: 'acme',
      name: 'packs',
      levels: ['Env'],
    });
  });
  afterAll(() => dir.remove());

  it('keeps the number of packs small over many pushes, and git reads every commit', async () => {
    for (let i = 0; i < 60; i++) {
      const result = await push(
        repository,
        {
          changeComment: `push ${i}`,
          enableKeyCreation: true,
          data: [{ kind: 'key', key: `k${i % 7}`, values: [{ context: '*', value: `v${i}`, hasValue: true }] }],
        },
        { forceKeyPush: false },
      );
      expect(result.kind).toBe('applied');
    }
    await repository.exclusive(async () => undefined); // let scheduled maintenance finish
    await repository.objects.settled(); // and the removal of the packs it merged
    expect(repository.maintenanceProblem).toBeUndefined();
    expect(packs().length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE + 1);
    expect(Number(git('rev-list', '--count', 'refs/heads/main').trim())).toBe(61);
    git('fsck', '--strict', '--no-dangling');
    for (const name of packs())
      git('verify-pack', join(repository.gitdir, 'objects', 'pack', name.replace(/\.pack$/, '.idx')));
    // Every commit's tree can be read, by git and by a reader that starts cold.
    const commits = git('rev-list', 'refs/heads/main').trim().split('\n');
    for (const commit of commits) git('ls-tree', '-r', commit);
    const cold = await readSnapshot(new ObjectStore(repository.gitdir), commits[0]);
    const warm = await repository.headSnapshot();
    const byName = (s: typeof cold) => [...s.keys()].sort((a, b) => a.key.localeCompare(b.key));
    expect(byName(cold)).toEqual(byName(warm));
    expect(cold.key('k3')?.values[0].value).toBe('v59'); // the last push to k3 was push 59 (59 % 7 === 3)
  });

  it('leaves packs git wrote with deltas alone, and keeps merging its own around them', async () => {
    git('repack', '-a', '-d', '-f', '-q'); // one pack, written by git, with deltas between versions
    const gitPacks = packs();
    expect(gitPacks).toHaveLength(1);
    const deltas = git(
      'verify-pack',
      '-v',
      join(repository.gitdir, 'objects', 'pack', gitPacks[0].replace(/\.pack$/, '.idx')),
    );
    const hasDeltas = deltas.split('\n').some((line) => /^[0-9a-f]{40} \w+ \d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line));
    for (let i = 0; i < 30; i++) {
      await push(
        repository,
        {
          enableKeyCreation: true,
          data: [{ kind: 'key', key: `after.${i}`, values: [{ context: '*', value: `${i}`, hasValue: true }] }],
        },
        { forceKeyPush: false },
      );
    }
    await repository.exclusive(async () => undefined);
    await repository.objects.settled();
    expect(repository.maintenanceProblem).toBeUndefined();
    if (hasDeltas) expect(packs()).toContain(gitPacks[0]);
    expect(packs().length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE + 2);
    git('fsck', '--strict', '--no-dangling');
    expect(Number(git('rev-list', '--count', 'refs/heads/main').trim())).toBe(91);
    const cold = await readSnapshot(new ObjectStore(repository.gitdir), git('rev-parse', 'refs/heads/main').trim());
    expect(cold.key('after.29')?.values[0].value).toBe('29');
    expect(cold.key('k3')?.values[0].value).toBe('v59');
  });

  it('merges nothing while there are few packs', async () => {
    const before = packs();
    if (before.length <= PACKS_BEFORE_MERGE) expect(await consolidatePacks(repository.objects)).toBe(0);
    expect(packs().length).toBeLessThanOrEqual(before.length);
  });
});
