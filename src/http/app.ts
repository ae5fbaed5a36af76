/**
 * The express application: request ids and one log line per request, the routes, and the
 * mapping of every error to a JSON answer (contract section 4).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../service/errors.js';
import type { AppContext } from './context.js';
import { withoutPaths } from '../domain/reasons.js';
import { HttpError, STATUS_OF } from './errors.js';
import { sendJson } from './headers.js';
import { infoRoutes } from './infoRoutes.js';
import { pushRoutes } from './pushRoutes.js';
import { readRoutes } from './readRoutes.js';

export function createApp(ctx: AppContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // ETags are commit ids or refusal reasons, set by the routes
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('X-Request-Id');
    const requestId = incoming && /^[A-Za-z0-9._-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      ctx.logger.info({
        reqId: requestId,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        ...(res.locals.refusal ? { refusal: res.locals.refusal } : {}),
      });
    });
    next();
  });

  app.get('/healthz', (req, res) => sendJson(req, res, 200, { status: 'ok' }));
  app.use(infoRoutes(ctx));
  app.use(pushRoutes(ctx));
  app.use(readRoutes(ctx));

  app.use((req: Request) => {
    throw new HttpError(404, 'not_found', `no such endpoint: ${req.method} ${req.path}`);
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const answer = toHttpError(error);
    if (answer.status >= 500) {
      ctx.logger.error({ reqId: res.locals.requestId, event: 'internal-error', problem: withoutPaths(describe(error)) });
    }
    if (res.headersSent) return;
    sendJson(req, res, answer.status, answer.body());
  });
  return app;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ServiceError) return new HttpError(STATUS_OF[error.code], error.code, error.message);
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
