/**
 * Time travel (contract section 7, `Repository-Date`): the commit of `refs/heads/main` that was
 * current at an instant, found by walking first parents from the head. What is parsed of each
 * commit (its parents and committer time) is kept per repository by commit id, as commits never
 * change, so repeated lookups walk the history in memory. The walk always starts from the head as
 * it is now, since plain git may add commits at any time.
 */
import { parseCommit } from './gitObjects.js';
import type { GitRepository } from './repository.js';

export interface CommitTimes {
  readonly parents: readonly string[];
  /** Committer time, seconds since the epoch. */
  readonly committedAt: number;
}

const commitCache = new WeakMap<GitRepository, Map<string, CommitTimes>>();

/** A commit's parents and committer time, parsed once per repository. */
export async function commitTimes(repository: GitRepository, commitId: string): Promise<CommitTimes> {
  let cache = commitCache.get(repository);
  if (!cache) commitCache.set(repository, (cache = new Map()));
  const known = cache.get(commitId);
  if (known) return known;
  const object = await repository.objects.read(commitId);
  if (object.type !== 'commit') throw new Error(`object ${commitId} is a ${object.type}, not a commit`);
  const { parents, committedAt } = parseCommit(object.content);
  const times: CommitTimes = { parents, committedAt };
  cache.set(commitId, times);
  return times;
}

/**
 * The last commit of `refs/heads/main` (following first parents from the head) whose committer
 * time is at or before `instant`; null when there is none, as when the instant is before the
 * first commit.
 */
export async function commitAtOrBefore(repository: GitRepository, instant: Date): Promise<string | null> {
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

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * `YYYY-MM-DDTHH:MM:SSZ`, or the same with a `+hh:mm` or `-hh:mm` offset (contract section 7);
 * undefined for anything else, including dates and times that do not exist (2021-02-30, 24:00:00).
 */
export function parseIsoInstant(text: string): Date | undefined {
  const match = ISO_INSTANT.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const offsetHours = match[8] === undefined ? 0 : Number(match[8]);
  const offsetMinutes = match[9] === undefined ? 0 : Number(match[9]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0–99 as 1900–1999
  date.setUTCHours(hour, minute, second, 0);
  const offset = (match[7] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  return new Date(date.getTime() - offset * 60_000);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
