/**
 * Errors the operations raise, each with a code the adapters map: the HTTP layer to a status and
 * a JSON body, the CLI to an exit status. Messages never hold a path, a token or a value.
 *
 * The errors of the layers below (src/disk/errors.ts, src/git/errors.ts, src/layout/errors.ts,
 * the domain's in src/domain/errors.ts) reach the adapters only through `asServiceError`, which
 * translates each into a ServiceError: so an adapter knows the service's errors alone, and the
 * one place that says what a store error means to a caller is here.
 */
import { CfghubError, ErrorCode, RenderLimitError } from '../domain/errors.js';
import { GitFormatError } from '../git/errors.js';
import { LayoutError } from '../layout/errors.js';
import {
  AmbiguousRepositoryError,
  GitUnavailableError,
  LockBusyError,
  RepositoryDamagedError,
  RepositoryGoneError,
  RepositoryUnwritableError,
  StorageFullError,
} from '../disk/errors.js';

export type ServiceErrorCode =
  | typeof ErrorCode.InvalidArgument // a name, a level list, a date: HTTP 400, CLI exit 2
  | typeof ErrorCode.Unauthorized // missing, unknown, revoked or expired token: 401
  | typeof ErrorCode.Forbidden // 403
  | typeof ErrorCode.NotFound // 404
  | typeof ErrorCode.Conflict // 409
  | typeof ErrorCode.PreconditionFailed // 412
  | typeof ErrorCode.Unavailable // 503: the repository stayed locked by another writer
  // Faults of the storage or of the repository's content, translated from the store's errors:
  | typeof ErrorCode.OutOfStorage // 507: the disk or quota is full; nothing was changed
  | typeof ErrorCode.ReadOnlyRepository // 503: the server may not write the repository
  | typeof ErrorCode.DamagedRepository // 409: an object or a sealed text cannot be read
  | typeof ErrorCode.InvalidContent // 409: a commit breaks the layout (made with plain git)
  | typeof ErrorCode.NameConflict // 409: two folders hold one repository name
  | typeof ErrorCode.RenderTooLarge // 409: a file renders beyond the limit
  | typeof ErrorCode.EmbedTooDeep // 409: files embed each other too deep
  | typeof ErrorCode.NoGit; // 503: git is not installed on the server

export class ServiceError extends CfghubError {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    /** Further fields of the answer (`repository`, `object`, `file`, `commit`): names, never paths. */
    readonly fields?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

/** A sealed text that does not open with its group's key: changed outside cfghub, or damaged. */
export class DamagedSecretError extends CfghubError {
  readonly code = ErrorCode.DamagedSecret;
  constructor(
    /** What holds the text: "a value of key db.password", "file app.conf". */
    readonly what: string,
    readonly group: string,
    /** `account/name`, when known. */
    readonly repository: string | undefined,
  ) {
    super(
      `${what}${repository ? ` of repository ${repository}` : ''} does not open with the key of security group ${group}`,
    );
  }
}

/** The log event of a fault of the disk or of the repository's content (logged once per request with its cause). */
export const FAULT_EVENT_OF: Partial<Record<ServiceErrorCode, string>> = {
  [ErrorCode.OutOfStorage]: 'storage-full',
  [ErrorCode.ReadOnlyRepository]: 'repository-unwritable',
  [ErrorCode.DamagedRepository]: 'repository-damaged',
};

const MEND = 'restore it from a backup or mend it with git';

/** Node's error codes of a full disk or quota, and of storage the server may not write. */
const FULL_CODES: readonly string[] = ['ENOSPC', 'EDQUOT'];
const UNWRITABLE_CODES: readonly string[] = ['EROFS', 'EACCES', 'EPERM'];

/** A system call's error with one of `codes` (not any object that happens to have a `code`). */
function isErrno(error: unknown, codes: readonly string[]): boolean {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  return typeof code === 'string' && codes.includes(code) && typeof syscall === 'string';
}

/** The error as the service's own, or undefined when it is none the service knows (a bug: the adapters answer 500). */
export function asServiceError(error: unknown): ServiceError | undefined {
  if (error instanceof ServiceError) return error;
  // Faults of the disk and of the repository's content.
  if (error instanceof StorageFullError)
    return new ServiceError(ErrorCode.OutOfStorage, error.message, { repository: error.repository });
  if (isErrno(error, FULL_CODES))
    return new ServiceError(ErrorCode.OutOfStorage, "no space left on the server's disk; nothing was changed");
  if (error instanceof RepositoryUnwritableError)
    return new ServiceError(ErrorCode.ReadOnlyRepository, error.message, { repository: error.repository });
  if (isErrno(error, UNWRITABLE_CODES)) {
    return new ServiceError(
      ErrorCode.ReadOnlyRepository,
      'the server may not write its storage (read-only or permission denied); nothing was changed',
    );
  }
  if (error instanceof RepositoryDamagedError) {
    return new ServiceError(ErrorCode.DamagedRepository, `${error.message}; ${MEND}`, {
      repository: error.repository,
      object: error.oid,
    });
  }
  if (error instanceof DamagedSecretError) {
    // A sealed text changed outside cfghub (or damaged on disk): the repository's content, not the server, is at fault.
    return new ServiceError(
      ErrorCode.DamagedRepository,
      `${error.message}: the repository was changed outside cfghub or is damaged; ${MEND}`,
      error.repository ? { repository: error.repository } : undefined,
    );
  }
  if (error instanceof GitFormatError) {
    // Parsed outside the object store and a snapshot's read (which name the repository): a tag or a restore's tree.
    return new ServiceError(ErrorCode.DamagedRepository, `a stored object is damaged (${error.message}); ${MEND}`);
  }
  if (error instanceof LayoutError) {
    return new ServiceError(ErrorCode.InvalidContent, error.message, {
      ...(error.file ? { file: error.file } : {}),
      ...(error.commit ? { commit: error.commit } : {}),
    });
  }
  if (error instanceof RenderLimitError) return new ServiceError(error.code, error.message, { file: error.file });
  // Repositories that are not there, or twice.
  if (error instanceof RepositoryGoneError) return new ServiceError(ErrorCode.NotFound, error.message);
  if (error instanceof AmbiguousRepositoryError) return new ServiceError(ErrorCode.NameConflict, error.message);
  if (error instanceof LockBusyError)
    return new ServiceError(ErrorCode.Unavailable, `${error.what} is busy with other writers; try again`);
  if (error instanceof GitUnavailableError)
    return new ServiceError(ErrorCode.NoGit, 'git is not installed on the server');
  return undefined;
}

/** Runs `work`, its errors translated (asServiceError) where the service knows them. */
export async function translating<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asServiceError(error) ?? error;
  }
}
