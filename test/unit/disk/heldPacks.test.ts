/**
 * Open packs hold their bytes within one budget for the process (heldPacks.ts): reading a
 * repository whose packs would take the total over it closes the packs of the repository read
 * least recently, never those of the repository being read; a repository closed so reads the same
 * objects again from its folder, even after `git repack -a -d` replaced its pack meanwhile.
 * Real repositories packed by git, objects compared with `git cat-file`.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../../src/disk/objects/objectStore.js';
import {
  HELD_PACKS_BYTES,
  heldPackBytes,
  heldPacksBudget,
  setHeldPacksBudget,
  useHeldPacksBudget,
} from '../../../src/disk/objects/heldPacks.js';
import { encodeObject } from '../../../src/git/gitObjects.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

/** A repository with one pack of `kiB` KiB of random hex text (about 240 KiB packed for 400); the blobs' ids. */
function packedRepository(kiB: number): { repo: TempGit; blobs: string[] } {
  const repo = tempGit();
  let script = 'commit refs/heads/main\ncommitter T <t@example.com> 1700000000 +0000\ndata 5\nfiles\n';
  for (let i = 0; i < kiB / 16; i++) {
    const content = randomBytes(8 * 1024).toString('hex'); // 16 KiB of text that deflates to about 9 KiB
    script += `M 100644 inline file-${i}\ndata ${content.length}\n${content}\n`;
  }
  repo.git(['fast-import', '--quiet'], script);
  repo.git(['repack', '-a', '-d', '-q']);
  const blobs = repo
    .git(['ls-tree', 'main'])
    .trim()
    .split('\n')
    .map((line) => line.split(/\s/)[2]);
  return { repo, blobs };
}

async function expectGitsBlob(store: ObjectStore, repo: TempGit, oid: string): Promise<void> {
  const object = await store.read(oid);
  expect(object.type).toBe('blob');
  expect(object.content.equals(repo.gitBinary(['cat-file', 'blob', oid]))).toBe(true);
}

/**
 * The store reads `oid` as a blob whose bytes git names `oid` (a blob's id is the hash of its
 * bytes): for the hundreds of blobs of a larger pack, where a `git cat-file` each took the test
 * over two minutes on a loaded machine.
 */
async function expectBlobNamed(store: ObjectStore, oid: string): Promise<void> {
  const object = await store.read(oid);
  expect(object.type).toBe('blob');
  expect(encodeObject('blob', object.content).oid).toBe(oid);
}

/** Room for two of the repositories below, not three. */
const BUDGET = 600 * 1024;

describe('packs held within the process budget', () => {
  const repos: TempGit[] = [];
  const stores: ObjectStore[] = [];
  let restoreBudget: () => void = () => undefined;

  beforeEach(() => {
    restoreBudget = useHeldPacksBudget(BUDGET);
  });

  afterEach(() => {
    for (const store of stores.splice(0)) store.resetCache();
    for (const repo of repos.splice(0)) repo.remove();
    restoreBudget();
  });

  function open(kiB: number): { repo: TempGit; blobs: string[]; store: ObjectStore } {
    const made = packedRepository(kiB);
    repos.push(made.repo);
    const store = new ObjectStore(made.repo.gitdir);
    stores.push(store);
    return { ...made, store };
  }

  it('closes the packs of the repository read least recently, and reads them again when asked', async () => {
    const [a, b, c] = [open(400), open(400), open(400)];
    const before = heldPackBytes();
    await expectGitsBlob(a.store, a.repo, a.blobs[0]);
    await expectGitsBlob(b.store, b.repo, b.blobs[0]);
    expect(a.store.packBytesHeld).toBeGreaterThan(200 * 1024); // read whole when opened, with its index
    expect(b.store.packBytesHeld).toBeGreaterThan(200 * 1024);

    await expectGitsBlob(c.store, c.repo, c.blobs[0]); // a third pack would take the total over the budget
    expect(a.store.packBytesHeld).toBe(0);
    expect(b.store.packBytesHeld).toBeGreaterThan(0);
    expect(c.store.packBytesHeld).toBeGreaterThan(0);
    expect(heldPackBytes() - before).toBeLessThanOrEqual(BUDGET);

    // B read again, then A: C is now the one read least recently.
    await expectGitsBlob(b.store, b.repo, b.blobs[1]);
    for (const oid of a.blobs) await expectGitsBlob(a.store, a.repo, oid);
    expect(c.store.packBytesHeld).toBe(0);
    expect(b.store.packBytesHeld).toBeGreaterThan(0);
    expect(a.store.packBytesHeld).toBeGreaterThan(0);
  });

  it('keeps the packs of the repository being read, even alone over the budget', async () => {
    restoreBudget();
    restoreBudget = useHeldPacksBudget(100 * 1024);
    const a = open(400);
    for (const oid of a.blobs) await expectGitsBlob(a.store, a.repo, oid);
    expect(a.store.packBytesHeld).toBeGreaterThan(100 * 1024);
  });

  it('reads a closed repository from its folder again after git repacked it meanwhile', async () => {
    const [a, b, c] = [open(400), open(400), open(400)];
    await expectGitsBlob(a.store, a.repo, a.blobs[0]);
    await expectGitsBlob(b.store, b.repo, b.blobs[0]);
    await expectGitsBlob(c.store, c.repo, c.blobs[0]);
    expect(a.store.packBytesHeld).toBe(0);
    const packsBefore = readdirSync(join(a.repo.gitdir, 'objects', 'pack'));
    // One more commit, then every object into one new pack: the pack the store had open is gone.
    a.repo.git(
      ['fast-import', '--quiet'],
      'commit refs/heads/main\ncommitter T <t@example.com> 1700000001 +0000\ndata 4\nmore\nfrom refs/heads/main^0\nM 100644 inline added\ndata 6\nadded\n',
    );
    a.repo.git(['repack', '-a', '-d', '-q']);
    const packsAfter = readdirSync(join(a.repo.gitdir, 'objects', 'pack'));
    expect(packsAfter.filter((name) => packsBefore.includes(name))).toEqual([]);
    for (const oid of a.blobs) await expectGitsBlob(a.store, a.repo, oid);
  });

  it('counts the windows of a larger pack as they are read', async () => {
    restoreBudget();
    restoreBudget = useHeldPacksBudget(64 * 1024 * 1024);
    const a = open(8 * 1024); // about 4.7 MiB packed: over the 4 MiB read whole, so read by 64 KiB windows
    await expectGitsBlob(a.store, a.repo, a.blobs[0]);
    const first = a.store.packBytesHeld;
    expect(first).toBeLessThan(512 * 1024); // its index and a window or two
    for (const oid of a.blobs) await expectBlobNamed(a.store, oid);
    expect(a.store.packBytesHeld).toBeGreaterThan(4 * 1024 * 1024); // every window
  });

  it('gives each worker of serve --workers N its share of the server budget', () => {
    setHeldPacksBudget(4);
    expect(heldPacksBudget()).toBe(HELD_PACKS_BYTES / 4);
    setHeldPacksBudget(undefined); // one process
    expect(heldPacksBudget()).toBe(HELD_PACKS_BYTES);
  });

  it('lets go of what a repository held when its packs are closed', async () => {
    const a = open(400);
    const before = heldPackBytes();
    await expectGitsBlob(a.store, a.repo, a.blobs[0]);
    const held = a.store.packBytesHeld;
    expect(held).toBeGreaterThan(0);
    expect(heldPackBytes() - before).toBe(held);
    a.store.resetCache();
    expect(a.store.packBytesHeld).toBe(0);
    expect(heldPackBytes()).toBe(before);
  });
});
