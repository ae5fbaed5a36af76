/**
 * Tags of a repository: create at the head, list, delete, resolve. Raises
 * ServiceError: 'invalid_argument' for a bad name or comment, 'conflict' for a tag that exists (in
 * any case), 'not_found' for an unknown one, 'unavailable' when another writer holds the lock.
 */
import { nameProblem } from '../../domain/names.js';
import type { GitRepository } from '../../disk/repository.js';
import * as store from '../../disk/records/tags.js';
import type { TagRecord } from '../../disk/records/tags.js';
import { ServiceError } from '../errors.js';
import { signature } from '../write/push.js';

export type { TagRecord } from '../../disk/records/tags.js';

/** Why a tag name is not valid, or undefined: the rules of account and repository names, and git's ban on `.lock`. */
export function tagNameProblem(name: string): string | undefined {
  return nameProblem('tag name', name) ?? (/\.lock$/i.test(name) ? "tag name must not end in '.lock'" : undefined);
}

function checkName(name: string): void {
  const problem = tagNameProblem(name);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

const BUSY = 'the repository is busy with other writers; try again';

/** Tags the repository's current head. */
export async function createTag(repository: GitRepository, name: string, comment = ''): Promise<TagRecord> {
  checkName(name);
  if (comment.includes('\u0000'))
    throw new ServiceError('invalid_argument', 'the tag comment contains a NUL character');
  const outcome = await store.createTag(repository, name, comment, signature());
  if (outcome.ok) return outcome.tag;
  if (outcome.why === 'exists')
    throw new ServiceError('conflict', `repository ${repository.fullName} already has a tag ${outcome.existing}`);
  throw new ServiceError('unavailable', BUSY);
}

/** Every tag naming a commit, sorted by name. */
export function listTags(repository: GitRepository): Promise<TagRecord[]> {
  return store.listTags(repository);
}

/** Deletes a tag (exact name, else without regard to case); returns the name deleted. */
export async function deleteTag(repository: GitRepository, name: string): Promise<string> {
  checkName(name);
  const outcome = await store.deleteTag(repository, name);
  if (outcome.ok) return outcome.name;
  if (outcome.why === 'not_found')
    throw new ServiceError('not_found', `repository ${repository.fullName} has no tag ${name}`);
  throw new ServiceError('unavailable', BUSY);
}
