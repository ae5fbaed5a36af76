/**
 * Errors of git's formats (see src/domain/errors.ts for the taxonomy): bytes that break a pack,
 * a pack index, a delta or an object. All are GitFormatErrors, which the object store
 * (src/disk/objects/objectStore.ts) reports as damage of the repository it read them from, by name.
 */
import { CfghubError, ErrorCode } from '../domain/errors.js';

/** Stored bytes that break one of git's formats: the repository holding them is damaged. */
export abstract class GitFormatError extends CfghubError {}

/** A pack entry that cannot be read: an unknown type, a missing delta base. */
export class PackFormatError extends GitFormatError {
  readonly code = ErrorCode.PackFormat;
}

/** A pack index of an unknown version, or cut short. */
export class PackIndexFormatError extends GitFormatError {
  readonly code = ErrorCode.PackIndexFormat;
}

/** A delta whose instructions do not fit its base or its announced result. */
export class DeltaFormatError extends GitFormatError {
  readonly code = ErrorCode.DeltaFormat;
}

/** A commit, tree or tag object whose content breaks its format. */
export class ObjectFormatError extends GitFormatError {
  readonly code = ErrorCode.ObjectFormat;
}
