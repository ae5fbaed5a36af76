/**
 * Faults of the disk and of the repository's content, as typed errors the adapters answer
 * clearly (never `500 internal error`): a full disk or quota (HTTP 507), a repository the server
 * may not write (503), a damaged or missing object (409). Each names the repository, never a path.
 */
import { basename, dirname } from 'node:path';

/** `account/name` of the repository at `gitdir` (`<repos>/<account>/<name>.git`). */
export function repositoryNameOf(gitdir: string): string {
  return `${basename(dirname(gitdir))}/${basename(gitdir).replace(/\.git$/, '')}`;
}

/** The disk (or the user's quota) is full: nothing was written. */
export class StorageFullError extends Error {
  readonly code = 'StorageFull';
  constructor(
    readonly repository: string,
    readonly reason: string,
  ) {
    super(`no space left on the server's disk to write repository ${repository} (${reason}); nothing was changed`);
  }
}

/** The server may not write the repository (read-only file system, permissions): nothing was written. */
export class RepositoryUnwritableError extends Error {
  readonly code = 'RepositoryUnwritable';
  constructor(
    readonly repository: string,
    readonly reason: string,
  ) {
    super(`repository ${repository} cannot be written (${reason}); nothing was changed`);
  }
}

/** An object the repository should hold is missing or unreadable (a damaged pack, a truncated loose object). */
export class RepositoryDamagedError extends Error {
  readonly code: string = 'RepositoryDamaged';
  constructor(
    readonly repository: string,
    readonly oid: string,
    readonly problem: string,
  ) {
    super(`repository ${repository} is damaged: object ${oid} ${problem}`);
  }
}

const FULL: Record<string, string> = { ENOSPC: 'no space left on device', EDQUOT: 'disk quota exceeded' };
const UNWRITABLE: Record<string, string> = { EROFS: 'read-only file system', EACCES: 'permission denied', EPERM: 'operation not permitted' };

/** `error` as a StorageFullError or RepositoryUnwritableError when it is one of those faults, else itself. */
export function asStorageFault(error: unknown, repository: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code && FULL[code]) return new StorageFullError(repository, FULL[code]);
  if (code && UNWRITABLE[code]) return new RepositoryUnwritableError(repository, UNWRITABLE[code]);
  return error;
}
