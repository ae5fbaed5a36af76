/** The request id (taken from `X-Request-Id` when well formed) and one log line per request. */
import type { PushLocals } from './routes/pushRoutes.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { HttpDeps } from './deps.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives the request its id (also sent back as `X-Request-Id`) and logs it when answered, with
 * the fields `extra` gives then (a refused push adds its reason). Returns the id.
 */
export function beginRequest(
  deps: HttpDeps,
  req: IncomingMessage,
  res: ServerResponse,
  extra?: () => object,
  route?: string,
): string {
  const incoming = req.headers['x-request-id'];
  const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', requestId);
  countRequest(deps, req, res, route);
  if (!deps.logger.isLevelEnabled('info')) return requestId; // no line to write: no timing, no listener
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    deps.logger.info({
      reqId: requestId,
      method: req.method,
      path: query === -1 ? url : url.slice(0, query),
      status: res.statusCode,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      ...extra?.(),
    });
  });
  return requestId;
}

/**
 * Counts the request in the metrics when answered: by `route`, else the express route pattern it
 * matched, with a push's outcome and the kind of its refusal (set in `res.locals` by the push route).
 */
function countRequest(deps: HttpDeps, req: IncomingMessage, res: ServerResponse, route: string | undefined): void {
  const metrics = deps.parts.metrics;
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const matched = route ?? (req as { route?: { path?: unknown } }).route?.path;
    const locals = (res as { locals?: Pick<PushLocals, 'pushOutcome' | 'refusalKind'> }).locals;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    metrics.request(
      req.method ?? 'GET',
      typeof matched === 'string' ? matched : undefined,
      query === -1 ? url : url.slice(0, query),
      res.statusCode,
      Number(process.hrtime.bigint() - started) / 1e9,
      locals?.pushOutcome,
      locals?.refusalKind,
    );
  });
}
