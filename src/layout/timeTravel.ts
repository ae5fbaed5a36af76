/**
 * Time travel (`Repository-Date`): the commit of `refs/heads/main` that was
 * current at an instant, found by walking first parents from the head. What is parsed of each
 * commit (its parents and committer time) is kept per repository by commit id (bounded, in
 * repositoryCaches.ts), as commits never change, so repeated lookups walk the history in memory. The walk always starts from the head as
 * it is now, since plain git may add commits at any time.
 */
import { parseCommit, type ParsedCommit } from '../git/gitObjects.js';
import type { RepositoryReader } from './objectReader.js';
import { LayoutError } from './errors.js';

export interface CommitTimes {
  readonly parents: readonly string[];
  /** Committer time, seconds since the epoch. */
  readonly committedAt: number;
}

/**
 * A commit parsed (tree, parents, committer time, author, message), once per repository: commits
 * never change. A LayoutError when the object is not a commit.
 */
export async function commitInfo(repository: RepositoryReader, commitId: string): Promise<ParsedCommit> {
  const cache = repository.caches.commits;
  const known = cache.get(commitId);
  if (known) return known;
  const object = await repository.objects.read(commitId);
  if (object.type !== 'commit') throw new LayoutError(`object ${commitId} is a ${object.type}, not a commit`);
  const parsed = parseCommit(object.content);
  cache.set(commitId, parsed);
  return parsed;
}

/** A commit's parents and committer time. */
export async function commitTimes(repository: RepositoryReader, commitId: string): Promise<CommitTimes> {
  const { parents, committedAt } = await commitInfo(repository, commitId);
  return { parents, committedAt };
}

/**
 * The last commit of `refs/heads/main` (following first parents from the head) whose committer
 * time is at or before `instant`; null when there is none, as when the instant is before the
 * first commit.
 */
export async function commitAtOrBefore(repository: RepositoryReader, instant: Date): Promise<string | null> {
  const millis = instant.getTime();
  if (Number.isNaN(millis)) throw new RangeError('invalid instant');
  // Committer times are whole seconds: a commit at second s is at or before the instant when s <= floor(instant).
  const limit = Math.floor(millis / 1000);
  let commitId: string | undefined = repository.head();
  while (commitId !== undefined) {
    const times = await commitTimes(repository, commitId);
    if (times.committedAt <= limit) return commitId;
    commitId = times.parents[0];
  }
  return null;
}
