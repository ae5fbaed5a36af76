/**
 * The error taxonomy: every error cfghub raises on purpose is a CfghubError with a
 * `code` from ErrorCode, and each layer keeps its errors in one module: this one (the base, the
 * codes and the domain's own errors), src/git/errors.ts (git's formats), src/layout/errors.ts (the
 * configuration layout), src/disk/errors.ts (the disk and the repository's content) and
 * src/service/errors.ts (the operations' errors, and the translation of all the others into them,
 * which is what the adapters answer). Code compares classes (`instanceof`) or these constants,
 * never a string written out.
 */

export const ErrorCode = {
  // src/domain
  RenderTooLarge: 'render_too_large',
  EmbedTooDeep: 'embed_too_deep',
  ReferenceCycle: 'ReferenceCycle',
  InvalidUtf8: 'InvalidUtf8',
  GlobTooLong: 'GlobTooLong',
  // src/git
  PackFormat: 'PackFormat',
  PackIndexFormat: 'PackIndexFormat',
  DeltaFormat: 'DeltaFormat',
  ObjectFormat: 'ObjectFormat',
  // src/layout
  Layout: 'LayoutError',
  // src/disk
  StorageFull: 'StorageFull',
  RepositoryUnwritable: 'RepositoryUnwritable',
  RepositoryDamaged: 'RepositoryDamaged',
  ObjectNotFound: 'ObjectNotFound',
  RepositoryGone: 'RepositoryGone',
  RepositoryExists: 'RepositoryExists',
  AmbiguousRepository: 'AmbiguousRepository',
  GitUnavailable: 'GitUnavailable',
  LockBusy: 'LockBusy',
  Folder: 'FolderError',
  // src/service: ServiceError's codes (what the adapters answer), then the service's own faults
  InvalidArgument: 'invalid_argument',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  Conflict: 'conflict',
  PreconditionFailed: 'precondition_failed',
  Unavailable: 'unavailable',
  OutOfStorage: 'storage_full',
  ReadOnlyRepository: 'repository_unwritable',
  DamagedRepository: 'repository_damaged',
  InvalidContent: 'repository_content_invalid',
  NameConflict: 'repository_name_conflict',
  NoGit: 'git_unavailable',
  DamagedSecret: 'DamagedSecret',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The base of every error cfghub raises on purpose; `name` is the class's, for logs. */
export abstract class CfghubError extends Error {
  abstract readonly code: ErrorCode;

  override get name(): string {
    return this.constructor.name;
  }
}

/**
 * Whether `error` is damage of the repository's store (an object missing or unreadable), which is
 * the repository's fault as a whole, not one commit's content: readers that report a commit's
 * layout problems in their answer let it through, so it is answered 409 and never cached.
 */
export function isRepositoryDamage(error: unknown): boolean {
  return (
    error instanceof CfghubError &&
    (error.code === ErrorCode.RepositoryDamaged || error.code === ErrorCode.ObjectNotFound)
  );
}

/** A rendering went over a limit; names the file. Answered 409 (the repository's content, not the request, is at fault). */
export class RenderLimitError extends CfghubError {
  constructor(
    readonly code: typeof ErrorCode.RenderTooLarge | typeof ErrorCode.EmbedTooDeep,
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

/** Files that embed each other in a cycle. */
export class ReferenceCycleError extends CfghubError {
  readonly code = ErrorCode.ReferenceCycle;
  constructor(readonly cycle: readonly string[]) {
    super(`files embed each other in a cycle: ${cycle.join(' -> ')}`);
  }
}

/** What is wrong with a body that is not valid UTF-8: the offset and value of its first bad byte. */
export class InvalidUtf8Error extends CfghubError {
  readonly code = ErrorCode.InvalidUtf8;
  constructor(
    readonly offset: number,
    readonly byte: number,
  ) {
    super(
      `byte 0x${byte.toString(16).toUpperCase().padStart(2, '0')} at offset ${offset} does not begin a valid UTF-8 sequence`,
    );
  }
}

/** A Files-Glob pattern longer than the limit (`limit`: MAX_GLOB_LENGTH, see glob.ts). */
export class GlobTooLongError extends CfghubError {
  readonly code = ErrorCode.GlobTooLong;
  constructor(
    readonly length: number,
    limit: number,
  ) {
    super(`Files-Glob has ${length} characters, more than the ${limit} allowed`);
  }
}
