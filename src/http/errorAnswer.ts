/** Any error as its JSON answer (contract section 4); internal errors are logged without paths. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { DamagedSecretError } from '../service/opening.js';
import { RepositoryGoneError } from '../disk/repository.js';
import type { AppContext } from './context.js';
import { GitUnavailableError } from '../disk/gitCommand.js';
import { LayoutError } from '../layout/layout.js';
import { RenderLimitError } from '../domain/renderLimits.js';
import { RepositoryDamagedError, RepositoryUnwritableError, StorageFullError } from '../disk/storageFaults.js';
import { AmbiguousRepositoryError } from '../disk/registry.js';
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
  const fault = faultEvent(error);
  if (fault) {
    // A fault of the disk or of the repository's content: logged with its cause, once per request.
    ctx.logger.error({ reqId: requestId, event: fault, problem: withoutPaths(describe(error)) });
  } else if (answer.status >= 500) {
    ctx.logger.error({ reqId: requestId, event: 'internal-error', problem: withoutPaths(describe(error)) });
  }
  return answer;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** The log event of a storage or damage fault, or undefined for other errors. */
function faultEvent(error: unknown): string | undefined {
  if (error instanceof StorageFullError || isErrno(error, FULL_CODES)) return 'storage-full';
  if (error instanceof RepositoryUnwritableError || isErrno(error, UNWRITABLE_CODES)) return 'repository-unwritable';
  if (error instanceof RepositoryDamagedError || error instanceof DamagedSecretError) return 'repository-damaged';
  return undefined;
}

const FULL_CODES = ['ENOSPC', 'EDQUOT'];
const UNWRITABLE_CODES = ['EROFS', 'EACCES', 'EPERM'];

function isErrno(error: unknown, codes: readonly string[]): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && codes.includes(code) && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StorageFullError) return new HttpError(507, 'insufficient_storage', error.message, undefined, { repository: error.repository });
  if (isErrno(error, FULL_CODES)) return new HttpError(507, 'insufficient_storage', "no space left on the server's disk; nothing was changed");
  if (error instanceof RepositoryUnwritableError) return new HttpError(503, 'repository_unwritable', error.message, undefined, { repository: error.repository });
  if (isErrno(error, UNWRITABLE_CODES)) return new HttpError(503, 'repository_unwritable', 'the server may not write its storage (read-only or permission denied); nothing was changed');
  if (error instanceof RepositoryDamagedError) {
    return new HttpError(409, 'repository_damaged', `${error.message}; restore it from a backup or mend it with git`, undefined, { repository: error.repository, object: error.oid });
  }
  if (error instanceof DamagedSecretError) {
    // A sealed text changed outside cfghub (or damaged on disk): the repository's content, not the server, is at fault.
    return new HttpError(409, 'repository_damaged', `${error.message}: the repository was changed outside cfghub or is damaged; restore it from a backup or mend it with git`);
  }
  if (error instanceof ServiceError) return new HttpError(STATUS_OF[error.code], HTTP_CODE_OF[error.code], error.message);
  if (error instanceof RepositoryGoneError) return new HttpError(404, 'not_found', error.message);
  if (error instanceof AmbiguousRepositoryError) return new HttpError(409, 'repository_name_conflict', error.message);
  if (error instanceof LayoutError) return contentInvalid(error);
  if (error instanceof RenderLimitError) return new HttpError(409, error.code, error.message, undefined, { file: error.file });
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
