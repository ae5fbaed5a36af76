/**
 * A point in a repository's history as diff, revert and restore take it: a full commit id, an
 * ISO 8601 instant (the last commit at or before it, as `Repository-Date`), or a tag name (as
 * `Tag`), tried in that order. Tags and dates go through readPoint, as the reads do.
 */
import { parseIsoInstant } from '../domain/dates.js';
import { commitInfo } from '../store/history.js';
import { ObjectNotFoundError } from '../store/objectStore.js';
import type { GitRepository } from '../store/repository.js';
import { ServiceError } from './errors.js';
import { readPoint } from './readPoint.js';

const COMMIT_ID = /^[0-9a-fA-F]{40}$/;

/** A full commit id (40 hex digits), in lower case; `what` names the argument in the error. */
export function requireCommitId(text: string, what: string): string {
  if (!COMMIT_ID.test(text)) throw new ServiceError('invalid_argument', `${what} must be a full commit id (40 hex digits)`);
  return text.toLowerCase();
}

/** The commit, checked to exist in the repository as a commit (404 otherwise). */
export async function requireCommit(repository: GitRepository, commitId: string): Promise<string> {
  try {
    await commitInfo(repository, commitId);
    return commitId;
  } catch (error) {
    if (error instanceof ObjectNotFoundError || (error as { code?: string }).code === 'LayoutError') {
      throw new ServiceError('not_found', `repository ${repository.fullName} has no commit ${commitId}`);
    }
    throw error;
  }
}

/** The commit a point names; `head` is the head as the caller read it. */
export async function resolvePoint(repository: GitRepository, head: string, point: string): Promise<string> {
  if (COMMIT_ID.test(point)) return requireCommit(repository, point.toLowerCase());
  if (parseIsoInstant(point)) return (await readPoint(repository, head, undefined, point)).commitId;
  return (await readPoint(repository, head, point)).commitId;
}
