/**
 * Shared by revert and restore: the changes between two commits as read from their trees, refused
 * when they hold content that breaks the layout rules, and file contents read from their blobs.
 */
import type { FileRecord } from '../../domain/model.js';
import { parseFileContent } from '../../layout/layout.js';
import type { GitRepository } from '../../disk/repository.js';
import type { FileChange, FileSide, TreeChanges } from '../../layout/treeDiff.js';
import { changesBetween } from './commitSummary.js';
import { ServiceError } from '../errors.js';

/** The changes from `before` to `after`; a 409 naming the file and commit if either breaks the layout. */
export async function readableChanges(
  repository: GitRepository,
  before: string | undefined,
  after: string,
): Promise<TreeChanges> {
  const changes = await changesBetween(repository, before, after);
  if (changes.problems.length) throw new ServiceError('conflict', `the content cannot be read: ${changes.problems[0]}`);
  return changes;
}

/** The file variant as it is on one side of a change, with its content (sealed, for a secured file). */
export async function fileRecord(repository: GitRepository, change: FileChange, side: FileSide): Promise<FileRecord> {
  const blob = await repository.objects.read(side.blobId);
  return {
    path: change.path,
    context: change.context,
    active: side.active,
    ...parseFileContent(blob.content.toString('utf8'), change.path),
  };
}

/** Ends a commit message's first paragraph with a sentence about the rollback, then the trailers. */
export function rollbackComment(comment: string | undefined, fallback: string, sentence: string): string {
  return `${comment ?? fallback}\n\n${sentence}`;
}
