/**
 * Errors as HTTP answers: `{"error": CODE, "message": TEXT}` (plus `details` where useful) with
 * the matching status (contract section 4). Never a stack trace or a filesystem path.
 */
import type { ServiceErrorCode } from '../service/errors.js';
import type { LayoutError } from '../layout/layout.js';

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
    return { error: this.code, message: this.message, ...this.fields, ...(this.details ? { details: this.details } : {}) };
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
};

/**
 * The `error` code of a service error over HTTP: its own, except that every malformed request is
 * `bad_request` (issue 15), whether an adapter or the service found the problem (a header, a body,
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
};

export const badRequest = (message: string, details?: readonly ErrorDetail[]) => new HttpError(400, 'bad_request', message, details);

/**
 * A repository whose commit breaks the layout (made with plain git, say): 409, since the request
 * is fine but the repository's content must be mended first. Names the file and the commit.
 */
export function contentInvalid(error: LayoutError): HttpError {
  return new HttpError(409, 'repository_content_invalid', error.message, undefined, {
    ...(error.file ? { file: error.file } : {}),
    ...(error.commit ? { commit: error.commit } : {}),
  });
}

