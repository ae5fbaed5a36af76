/**
 * Any error as its JSON answer; internal errors are logged without paths.
 * What an error of the layers below means to a caller is the service's to say (asServiceError
 * in src/service/errors.ts): this file imports nothing of src/disk, src/git or src/layout.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutPaths } from '../../domain/reasons.js';
import { asServiceError, FAULT_EVENT_OF, type ServiceError } from '../../service/errors.js';
import type { HttpDeps } from '../deps.js';
import { HTTP_CODE_OF, HttpError, STATUS_OF } from './errors.js';
import { sendJson } from './headers.js';

export function answerError(
  deps: HttpDeps,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  error: unknown,
): void {
  const answer = errorAnswer(deps, requestId, error);
  if (res.headersSent) return;
  sendJson(req, res, answer.status, answer.body());
}

/** The answer to an error, for adapters that send it in their own form; internal errors are logged. */
export function errorAnswer(deps: HttpDeps, requestId: string, error: unknown): HttpError {
  const known = error instanceof HttpError ? undefined : asServiceError(error);
  const answer = error instanceof HttpError ? error : known ? answerOf(known) : toHttpError(error);
  const fault = known && FAULT_EVENT_OF[known.code];
  if (fault) {
    // A fault of the disk or of the repository's content: logged with its cause, once per request.
    deps.logger.error({ reqId: requestId, event: fault, problem: withoutPaths(describe(error)) });
  } else if (known?.code === 'unavailable') {
    // Refused for now (no leader, a lease that may have expired): the server works as it should.
    deps.logger.warn({ reqId: requestId, event: 'unavailable', problem: withoutPaths(known.message) });
  } else if (answer.status >= 500) {
    deps.logger.error({ reqId: requestId, event: 'internal-error', problem: withoutPaths(describe(error)) });
  }
  return answer;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function answerOf(error: ServiceError): HttpError {
  return new HttpError(STATUS_OF[error.code], HTTP_CODE_OF[error.code], error.message, undefined, error.fields);
}

/** Errors of the HTTP machinery itself: a malformed URL, the body parser's. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof URIError) return new HttpError(400, 'bad_request', 'the URL holds a malformed percent-encoding');
  const parserError = error as { type?: string; status?: number };
  switch (parserError?.type) {
    case 'entity.too.large':
      return new HttpError(413, 'payload_too_large', 'the request body is larger than the limit');
    case 'request.aborted':
    case 'request.size.invalid':
      return new HttpError(400, 'bad_request', 'the request body was cut short');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpError(415, 'unsupported_media_type', 'the request body encoding is not supported');
  }
  return new HttpError(500, 'internal', 'internal error');
}
