/**
 * Errors as HTTP answers: `{"error": CODE, "message": TEXT}` (plus `details` where useful) with
 * the matching status. Never a stack trace or a filesystem path.
 */
import type { ServiceErrorCode } from '../../service/errors.js';

export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: readonly ErrorDetail[],
    /** Further fields of the body, after `message`. */
    readonly fields?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return {
      error: this.code,
      message: this.message,
      ...this.fields,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

export const STATUS_OF: Record<ServiceErrorCode, number> = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  unavailable: 503,
  storage_full: 507,
  repository_unwritable: 503,
  repository_damaged: 409,
  repository_content_invalid: 409,
  repository_name_conflict: 409,
  render_too_large: 409,
  embed_too_deep: 409,
  git_unavailable: 503,
};

/**
 * The `error` code of a service error over HTTP: its own, except that every malformed request is
 * `bad_request`, whether an adapter or the service found the problem (a header, a body,
 * a name, a date, a commit id).
 */
export const HTTP_CODE_OF: Record<ServiceErrorCode, string> = {
  invalid_argument: 'bad_request',
  unauthorized: 'unauthorized',
  forbidden: 'forbidden',
  not_found: 'not_found',
  conflict: 'conflict',
  precondition_failed: 'precondition_failed',
  unavailable: 'unavailable',
  storage_full: 'insufficient_storage',
  repository_unwritable: 'repository_unwritable',
  repository_damaged: 'repository_damaged',
  repository_content_invalid: 'repository_content_invalid',
  repository_name_conflict: 'repository_name_conflict',
  render_too_large: 'render_too_large',
  embed_too_deep: 'embed_too_deep',
  git_unavailable: 'git_unavailable',
};

export const badRequest = (message: string, details?: readonly ErrorDetail[]) =>
  new HttpError(400, 'bad_request', message, details);
