/**
 * Faults of the disk as typed errors (src/disk/errors.ts) the adapters answer
 * clearly (never `500 internal error`): a full disk or quota (HTTP 507), a repository the server
 * may not write (503), a damaged or missing object (409). Each names the repository, never a path.
 */
import { basename, dirname } from 'node:path';
import { GitFormatError } from '../git/errors.js';
import { RepositoryDamagedError, RepositoryUnwritableError, StorageFullError } from './errors.js';

/** `account/name` of the repository at `gitdir` (`<repos>/<account>/<name>.git`). */
export function repositoryNameOf(gitdir: string): string {
  return `${basename(dirname(gitdir))}/${basename(gitdir).replace(/\.git$/, '')}`;
}

/** An error's errno code or name, never its message (which may hold a path): for logs of what could not be done. */
export function problemOf(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error instanceof Error ? error.name : 'unknown error');
}

const FULL: Record<string, string> = { ENOSPC: 'no space left on device', EDQUOT: 'disk quota exceeded' };
const UNWRITABLE: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
};

/** `error` as a StorageFullError or RepositoryUnwritableError when it is one of those faults, else itself. */
export function asStorageFault(error: unknown, repository: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && FULL[code]) return new StorageFullError(repository, FULL[code]);
  if (code && UNWRITABLE[code]) return new RepositoryUnwritableError(repository, UNWRITABLE[code]);
  return error;
}

/**
 * `error` as a RepositoryDamagedError naming the repository and the commit read when it is an
 * object that git's formats do not allow (a tree whose bytes are no tree: `git hash-object
 * --literally` writes one), else itself. The object store names damage it finds in stored bytes
 * itself; this is for objects read whole and parsed afterwards (a commit's trees).
 */
export function asDamagedCommit(error: unknown, repository: string, commitId: string): unknown {
  if (error instanceof GitFormatError)
    return new RepositoryDamagedError(
      repository,
      commitId,
      `has an object that cannot be parsed among its trees (${error.message})`,
    );
  return error;
}
