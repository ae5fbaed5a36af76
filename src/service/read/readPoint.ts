/**
 * Which commit a read looks at: the head, the commit of a tag (`Tag`), or the last commit at or
 * before an instant (`Repository-Date`). A tag wins over a date, as in ConfigHub.
 */
import { commitAtOrBefore, commitTimes } from '../../layout/timeTravel.js';
import type { GitRepository } from '../../disk/repository.js';
import { resolveTag } from '../../disk/records/tags.js';
import { ServiceError } from '../errors.js';
import { isoSeconds, parseIsoInstant } from '../../lib/dates.js';

export interface ReadPoint {
  readonly commitId: string;
  /** Set when the read is of the past: the committer time of the commit read. */
  readonly repoDate?: string;
}

/** `head` is the repository's head as the caller read it, so one request reads the ref once. */
export async function readPoint(
  repository: GitRepository,
  head: string,
  tag?: string,
  date?: string,
): Promise<ReadPoint> {
  if (tag !== undefined) {
    const commitId = await resolveTag(repository, tag);
    if (!commitId) throw new ServiceError('not_found', `repository ${repository.fullName} has no tag ${tag}`);
    return { commitId, repoDate: await committedAt(repository, commitId) };
  }
  if (date !== undefined) {
    const instant = parseIsoInstant(date);
    if (!instant)
      throw new ServiceError(
        'invalid_argument',
        'Repository-Date must be an ISO 8601 date like 2026-01-31T12:00:00Z, or a date alone (2026-01-31, midnight UTC)',
      );
    const commitId = await commitAtOrBefore(repository, instant);
    if (!commitId) throw new ServiceError('not_found', `repository ${repository.fullName} did not exist at ${date}`);
    return { commitId, repoDate: await committedAt(repository, commitId) };
  }
  return { commitId: head };
}

async function committedAt(repository: GitRepository, commitId: string): Promise<string> {
  return isoSeconds(new Date((await commitTimes(repository, commitId)).committedAt * 1000));
}
