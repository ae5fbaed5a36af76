/**
 * The refs of change requests: `refs/changes/<n>` names the change request's commit (made on the
 * head it was created on), `refs/change-reviews/<n>` the last commit of its review record (one
 * commit per event: created, approved, closed, applied). Both are found where git keeps refs,
 * loose and in `packed-refs`, and moved as every ref is (refs.ts): objects written durably first,
 * then `<ref>.lock`, a compare-and-swap against the value the writer read, a rename, an fsync.
 * Being refs, their commits are kept by `git gc` and `git repack -a -d` and checked by `git fsck`.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import type { EncodedObject } from '../../git/gitObjects.js';
import { fsyncFolder } from '../durableFs.js';
import { BUSY, retryWhileBusy } from '../refs/lockRetry.js';
import { packedRefs, readRef, RefLock } from '../refs/refs.js';
import type { GitRepository } from '../repository.js';

export const CHANGES_PREFIX = 'refs/changes/';
export const REVIEWS_PREFIX = 'refs/change-reviews/';

const NUMBER = /^[1-9][0-9]{0,8}$/;

/** The numbers of every change request ref, loose and packed, ascending. */
export function changeNumbers(gitdir: string): number[] {
  const found = new Set<number>();
  for (const ref of packedRefs(gitdir).keys()) {
    const rest = ref.startsWith(CHANGES_PREFIX) ? ref.slice(CHANGES_PREFIX.length) : '';
    if (NUMBER.test(rest)) found.add(Number(rest));
  }
  let names: string[] = [];
  try {
    names = fs.readdirSync(join(gitdir, CHANGES_PREFIX));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  for (const name of names) if (NUMBER.test(name)) found.add(Number(name));
  return [...found].sort((a, b) => a - b);
}

export const changeRef = (n: number) => `${CHANGES_PREFIX}${n}`;
export const reviewRef = (n: number) => `${REVIEWS_PREFIX}${n}`;

/** What a ref points at now, or null. */
export function refValue(repository: GitRepository, ref: string): string | null {
  return readRef(repository.gitdir, ref);
}

export type RefMove = 'moved' | 'changed' | 'locked';

/**
 * Writes `objects` durably, then moves `ref` from `expected` (null: must not exist) to `next`.
 * 'changed' when the ref was not at `expected` (another writer came first); 'locked' when
 * another writer held its lock through every attempt.
 */
export async function writeObjectsAndMoveRef(
  repository: GitRepository,
  objects: readonly EncodedObject[],
  ref: string,
  expected: string | null,
  next: string,
): Promise<RefMove> {
  const { gitdir } = repository;
  // Kept (`.keep`) until the ref names them, as a push's pack is (see GitRepository.commit).
  const keep = (await repository.objects.writeUntilFolderSync(objects))?.keep;
  let named = false;
  try {
    await fsyncFolder(repository.objects.packFolder);
    await fs.promises.mkdir(dirname(join(gitdir, ref)), { recursive: true });
    const outcome = await retryWhileBusy(async (): Promise<RefMove | typeof BUSY> => {
      const lock = await RefLock.acquire(gitdir, ref, next);
      if (lock === 'locked') return BUSY;
      const update = await lock.swap(expected);
      return update.ok ? 'moved' : 'changed';
    });
    const move = outcome === BUSY ? 'locked' : outcome;
    named = move === 'moved';
    return move;
  } finally {
    if (named) await keep?.release();
  }
}
