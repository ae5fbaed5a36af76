/**
 * Reading git's multi-pack-index: the packs it names, checked against indexes git itself writes
 * (with and without a bitmap), and its removal the way `git repack -d` removes it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clearMultiPackIndex,
  packsNamedByIndex,
  removeIndexNamingMissingPacks,
} from '../../../src/disk/objects/multiPackIndex.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

describe('multi-pack-index', () => {
  let repo: TempGit;
  const folder = () => join(repo.gitdir, 'objects', 'pack');
  const packs = () =>
    new Set(
      readdirSync(folder())
        .filter((f) => f.endsWith('.pack'))
        .map((f) => f.replace(/\.pack$/, '')),
    );

  beforeAll(() => {
    repo = tempGit();
    let parent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const blob = repo.git(['hash-object', '-w', '--stdin'], `content ${i}\n`).trim();
      const tree = repo.git(['mktree'], `100644 blob ${blob}\tfile${i}\n`).trim();
      const commit = repo
        .git(['commit-tree', tree, ...parent, '-m', `c${i}`], undefined, {
          GIT_AUTHOR_NAME: 'a',
          GIT_AUTHOR_EMAIL: 'a@b',
          GIT_COMMITTER_NAME: 'a',
          GIT_COMMITTER_EMAIL: 'a@b',
        })
        .trim();
      repo.git(['update-ref', 'refs/heads/main', commit]);
      repo.git(['repack', '-d', '-q']);
      parent = ['-p', commit];
    }
  });
  afterAll(() => repo.remove());

  it('is undefined when there is none', () => {
    expect(packsNamedByIndex(folder())).toBeUndefined();
  });

  it('names the packs git indexed', async () => {
    repo.git(['multi-pack-index', 'write', '--bitmap']);
    expect(packs().size).toBe(3);
    expect(packsNamedByIndex(folder())).toEqual(packs());
    expect(await removeIndexNamingMissingPacks(folder())).toBe(false); // every pack is there
  });

  it('is removed with its bitmap and reverse index, as git removes it', async () => {
    await clearMultiPackIndex(folder());
    expect(readdirSync(folder()).filter((f) => f.startsWith('multi-pack-index'))).toEqual([]);
    repo.git(['fsck', '--strict']);
  });
});
