/**
 * Pack consolidation: each push writes one pack, and small packs are merged so their number stays
 * small, with every commit still readable by git and by a fresh reader.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { push } from '../../src/service/push.js';
import { createRepository } from '../../src/service/repositories.js';
import { consolidatePacks, geometricPrefix, PACKS_BEFORE_MERGE } from '../../src/disk/consolidatePacks.js';
import { ObjectStore } from '../../src/disk/objectStore.js';
import { readSnapshot } from '../../src/layout/readSnapshot.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import type { GitRepository } from '../../src/disk/repository.js';
import { tempDir } from '../support/harness.js';

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

describe('consolidatePacks', () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  const packs = () => readdirSync(join(repository.gitdir, 'objects', 'pack')).filter((name) => name.endsWith('.pack'));
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', repository.gitdir, ...args], { encoding: 'utf8' });

  beforeAll(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), { account: 'acme', name: 'packs', levels: ['Env'] });
  });
  afterAll(() => dir.remove());

  it('keeps the number of packs small over many pushes, and git reads every commit', async () => {
    for (let i = 0; i < 60; i++) {
      const result = await push(
        repository,
        { changeComment: `push ${i}`, enableKeyCreation: true, data: [{ kind: 'key', key: `k${i % 7}`, values: [{ context: '*', value: `v${i}`, hasValue: true }] }] },
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
    for (const name of packs()) git('verify-pack', join(repository.gitdir, 'objects', 'pack', name.replace(/\.pack$/, '.idx')));
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
    const deltas = git('verify-pack', '-v', join(repository.gitdir, 'objects', 'pack', gitPacks[0].replace(/\.pack$/, '.idx')));
    const hasDeltas = deltas.split('\n').some((line) => /^[0-9a-f]{40} \w+ \d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line));
    for (let i = 0; i < 30; i++) {
      await push(
        repository,
        { enableKeyCreation: true, data: [{ kind: 'key', key: `after.${i}`, values: [{ context: '*', value: `${i}`, hasValue: true }] }] },
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
