/**
 * Errors as HTTP answers: `{"error": CODE, "message": TEXT}` (plus `details` where useful) with
 * the matching status (contract section 4). Never a stack trace or a filesystem path.
 */
import type { ServiceErrorCode } from '../service/errors.js';

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
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
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

export const badRequest = (message: string, details?: readonly ErrorDetail[]) => new HttpError(400, 'bad_request', message, details);
