/**
 * Errors of the disk and of the repository's content as stored (see src/domain/errors.ts for the
 * taxonomy). Each names the repository (`account/name`), never a path; the service layer
 * (src/service/errors.ts) translates them into the answers the adapters give: a full disk or
 * quota 507, a repository the server may not write 503, a damaged or missing object 409.
 */
import { CfghubError, ErrorCode } from '../domain/errors.js';

/** The disk (or the user's quota) is full: nothing was written. */
export class StorageFullError extends CfghubError {
  readonly code = ErrorCode.StorageFull;
  constructor(
    readonly repository: string,
    readonly reason: string,
  ) {
    super(`no space left on the server's disk to write repository ${repository} (${reason}); nothing was changed`);
  }
}

/** The server may not write the repository (read-only file system, permissions): nothing was written. */
export class RepositoryUnwritableError extends CfghubError {
  readonly code = ErrorCode.RepositoryUnwritable;
  constructor(
    readonly repository: string,
    readonly reason: string,
  ) {
    super(`repository ${repository} cannot be written (${reason}); nothing was changed`);
  }
}

/** An object the repository should hold is missing or unreadable (a damaged pack, a truncated loose object). */
export class RepositoryDamagedError extends CfghubError {
  readonly code: typeof ErrorCode.RepositoryDamaged | typeof ErrorCode.ObjectNotFound = ErrorCode.RepositoryDamaged;
  constructor(
    readonly repository: string,
    readonly oid: string,
    readonly problem: string,
  ) {
    super(`repository ${repository} is damaged: object ${oid} ${problem}`);
  }
}

/** An object the repository does not hold: a 404 where a caller named it, damage where the repository should hold it. */
export class ObjectNotFoundError extends RepositoryDamagedError {
  override readonly code = ErrorCode.ObjectNotFound;
  constructor(repository: string, oid: string) {
    super(repository, oid, 'is missing');
  }
}

/** The repository's folder is gone, or was replaced by something that is not a real folder. */
export class RepositoryGoneError extends CfghubError {
  readonly code = ErrorCode.RepositoryGone;
  constructor(readonly fullName: string) {
    super(`repository ${fullName} does not exist`);
  }
}

/** A repository of that name exists already. */
export class RepositoryExistsError extends CfghubError {
  readonly code = ErrorCode.RepositoryExists;
}

/**
 * Two folders hold one repository name (names are unique without regard to case, contract
 * section 3): neither is served until one is removed or renamed. `folders` are relative to the
 * repositories folder, never absolute paths.
 */
export class AmbiguousRepositoryError extends CfghubError {
  readonly code = ErrorCode.AmbiguousRepository;
  constructor(
    readonly fullName: string,
    readonly folders: readonly string[],
  ) {
    super(
      `repository ${fullName} is stored in ${folders.length} folders whose names differ only in case (${folders.join(', ')}); ` +
        'names are unique without regard to case: remove or rename all but one',
    );
  }
}

/** `git` is not on the PATH: clones and repacks cannot run (HTTP 503), the server goes on. */
export class GitUnavailableError extends CfghubError {
  readonly code = ErrorCode.GitUnavailable;
  constructor() {
    super('git is not installed on the server (it must be on the PATH to serve clones and repack repositories)');
  }
}

/** Another writer held a lock (of the token file, the admin token file) through every attempt. */
export class LockBusyError extends CfghubError {
  readonly code = ErrorCode.LockBusy;
  constructor(
    /** What is locked, for the message (never a path): "the token store". */
    readonly what: string,
  ) {
    super(`${what} is locked by another process`);
  }
}

/** A folder that could not be made or is not a folder; the CLI names it (the user's own folder). */
export class FolderError extends CfghubError {
  readonly code = ErrorCode.Folder;
  constructor(
    message: string,
    /** The folder that could not be made or is not a folder. */
    readonly folder: string,
  ) {
    super(message);
  }
}
