/**
 * Errors the operations raise, each with a code the adapters map: the HTTP layer to a status and
 * a JSON body, the CLI to an exit status. Messages never hold a path, a token or a value.
 */
export type ServiceErrorCode =
  | 'invalid_argument' // a name, a level list, a date: HTTP 400, CLI exit 2
  | 'unauthorized' // missing, unknown, revoked or expired token: 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'precondition_failed' // 412
  | 'unavailable'; // 503: the repository stayed locked by another writer

export class ServiceError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
  ) {
    super(message);
  }
}
