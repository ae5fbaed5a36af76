/** Any error as its JSON answer (contract section 4); internal errors are logged without paths. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { RepositoryGoneError } from '../store/repository.js';
import type { AppContext } from './context.js';
import { GitUnavailableError } from '../store/gitCommand.js';
import { LayoutError } from '../store/layout.js';
import { AmbiguousRepositoryError } from '../store/registry.js';
import { contentInvalid, HTTP_CODE_OF, HttpError, STATUS_OF } from './errors.js';
import { sendJson } from './headers.js';

export function answerError(ctx: AppContext, req: IncomingMessage, res: ServerResponse, requestId: string, error: unknown): void {
  const answer = errorAnswer(ctx, requestId, error);
  if (res.headersSent) return;
  sendJson(req, res, answer.status, answer.body());
}

/** The answer to an error, for adapters that send it in their own form; internal errors are logged. */
export function errorAnswer(ctx: AppContext, requestId: string, error: unknown): HttpError {
  const answer = toHttpError(error);
  if (answer.status >= 500) {
    ctx.logger.error({ reqId: requestId, event: 'internal-error', problem: withoutPaths(describe(error)) });
  }
  return answer;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ServiceError) return new HttpError(STATUS_OF[error.code], HTTP_CODE_OF[error.code], error.message);
  if (error instanceof RepositoryGoneError) return new HttpError(404, 'not_found', error.message);
  if (error instanceof AmbiguousRepositoryError) return new HttpError(409, 'repository_name_conflict', error.message);
  if (error instanceof LayoutError) return contentInvalid(error);
  if (error instanceof GitUnavailableError) return new HttpError(503, 'git_unavailable', 'git is not installed on the server');
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
