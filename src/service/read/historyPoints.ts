/**
 * A point in a repository's history as diff, revert and restore take it: a commit id (all 40 hex
 * digits, or a unique prefix of 7 or more, as `git log --oneline` shows it), an ISO 8601 instant
 * or date (the last commit at or before it, as `Repository-Date`), or a tag name (as `Tag`), tried
 * in that order. Tags and dates go through readPoint, as the reads do.
 */
import { parseIsoInstant } from '../../lib/dates.js';
import { commitInfo } from '../../layout/timeTravel.js';
import type { GitRepository } from '../../disk/repository.js';
import { ServiceError } from '../errors.js';
import { readPoint } from './readPoint.js';
import { LayoutError } from '../../layout/errors.js';
import { ObjectNotFoundError } from '../../disk/errors.js';

const COMMIT_ID = /^[0-9a-fA-F]{40}$/;
/** A short commit id: 7 hex digits (git's default abbreviation) up to 39. */
const SHORT_ID = /^[0-9a-fA-F]{7,39}$/;
/** How many objects sharing a prefix are looked at: enough to tell a commit among a few others. */
const PREFIX_CANDIDATES = 16;

/** The commit, checked to exist in the repository as a commit (404 otherwise). */
export async function requireCommit(repository: GitRepository, commitId: string): Promise<string> {
  try {
    await commitInfo(repository, commitId);
    return commitId;
  } catch (error) {
    if (error instanceof ObjectNotFoundError || error instanceof LayoutError) {
      throw new ServiceError('not_found', `repository ${repository.fullName} has no commit ${commitId}`);
    }
    throw error;
  }
}

async function isCommit(repository: GitRepository, id: string): Promise<boolean> {
  return (await repository.objects.read(id)).type === 'commit';
}

/**
 * The commits whose ids start with `prefix` (as git, other objects sharing it do not count);
 * more than one means the prefix is ambiguous.
 */
async function commitsWithPrefix(repository: GitRepository, prefix: string): Promise<string[]> {
  const ids = repository.objects.idsWithPrefix(prefix.toLowerCase(), PREFIX_CANDIDATES);
  const commits: string[] = [];
  for (const id of ids) if (await isCommit(repository, id)) commits.push(id);
  return commits;
}

function ambiguous(repository: GitRepository, prefix: string, commits: readonly string[]): ServiceError {
  const shown = commits
    .slice(0, 3)
    .map((id) => id.slice(0, 12))
    .join(', ');
  return new ServiceError(
    'invalid_argument',
    `commit id ${prefix} is ambiguous in ${repository.fullName}: it starts ${commits.length > 3 ? 'several commits' : `${commits.length} commits`} (${shown}); give more digits`,
  );
}

/**
 * A commit id, full or a unique prefix of 7 or more hex digits, as the full id of a commit of the
 * repository: 400 naming `what` when malformed or ambiguous, 404 when no commit has it.
 */
export async function resolveCommitId(repository: GitRepository, text: string, what: string): Promise<string> {
  if (COMMIT_ID.test(text)) return requireCommit(repository, text.toLowerCase());
  if (!SHORT_ID.test(text))
    throw new ServiceError(
      'invalid_argument',
      `${what} must be a commit id: 40 hex digits, or the first 7 or more of them`,
    );
  const commits = await commitsWithPrefix(repository, text);
  if (commits.length > 1) throw ambiguous(repository, text, commits);
  if (commits.length === 0)
    throw new ServiceError('not_found', `repository ${repository.fullName} has no commit ${text}`);
  return commits[0];
}

/** The commit a point names; `head` is the head as the caller read it. */
export async function resolvePoint(repository: GitRepository, head: string, point: string): Promise<string> {
  if (COMMIT_ID.test(point)) return requireCommit(repository, point.toLowerCase());
  if (parseIsoInstant(point)) return (await readPoint(repository, head, undefined, point)).commitId;
  if (SHORT_ID.test(point)) {
    // A tag may look like hex too: a prefix that names no commit is tried as a tag.
    const commits = await commitsWithPrefix(repository, point);
    if (commits.length > 1) throw ambiguous(repository, point, commits);
    if (commits.length === 1) return commits[0];
  }
  return (await readPoint(repository, head, point)).commitId;
}
