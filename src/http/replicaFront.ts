/**
 * The front of a replica: every answer carries `Replica-Lag` (seconds since the replica
 * last confirmed it was current with its primary, `unknown` before the first time), and every
 * write is forwarded to the primary, whose answer goes back to the client unchanged.
 *
 * Why forwarding rather than a 307 redirect: ConfigHub's clients (the Java client, curl without
 * -L, most HTTP libraries for a POST) do not follow redirects of a POST, and a forwarded push
 * answers with the primary's own status, headers (its commit id) and body. Writes are every
 * method but GET, HEAD and OPTIONS, except git's fetch negotiation (POST …/git-upload-pack, a
 * read served from the mirror) and the replication endpoints (served from the mirrors too, so a
 * replica can be followed in turn). The replica never writes a repository itself.
 */
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestListener,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ReplicaLink } from '../service/replication/replicaLink.js';
import type { HttpDeps } from './deps.js';
import { HttpError } from './answer/errors.js';
import { sendJson } from './answer/headers.js';
import { beginRequest } from './requestLog.js';

/** A forwarded write the primary has not answered within this long is cut with a 504. */
const FORWARD_TIMEOUT_MS = 60_000;
/**
 * In a cluster, a forwarded write its leader has not answered this long after another node was
 * elected (or its lease ended) is cut with a 503: a paused leader's kernel keeps taking requests,
 * and the client would wait for it until its own timeout, past the failover. A leader stopping
 * cleanly answers what it took before it gives its place up.
 */
const REPLACED_GRACE_MS = 200;
/** Errors of connecting: the primary received nothing of the request. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);
/** Headers of one connection, not of the request: never forwarded (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'host',
  'proxy-authorization',
]);

export function isWrite(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return false;
  const url = req.url ?? '';
  if (method === 'POST' && url.startsWith('/git/') && url.split('?')[0].endsWith('/git-upload-pack')) return false;
  return !url.startsWith('/rest/replication/') && !url.startsWith('/rest/ha/');
}

/**
 * Whether a leader's 2xx to this write waits for the sync set's confirmation: not for a REST push,
 * whose journal record reaches every member before its ref moves (service/ha/syncSet.ts), nor for
 * an OpenFeature evaluation, a read sent as a POST.
 */
function needsConfirmation(req: IncomingMessage): boolean {
  if (!isWrite(req)) return false;
  const url = req.url ?? '';
  return !(req.method === 'POST' && (/^\/rest\/push(\/|\?|$)/.test(url) || url.startsWith('/ofrep/')));
}

/**
 * An HA leader's answer to a write other than a push (a tag, a token or admin-token record, a
 * repository made or deleted), held until every member of the sync set holds it too
 * (ReplicaLink.confirmWrite): what the handler writes is kept, and sent once confirmed. A
 * refusal (any status but 2xx) changed nothing and goes at once. When the confirmation fails
 * (this node no longer leads) the write's outcome is unknown: a 503 saying so, or, if the
 * handler had already sent its headers, the connection is closed without an answer.
 */
function holdUntilConfirmed(req: IncomingMessage, res: ServerResponse, confirm: () => Promise<void>): void {
  const write = res.write;
  const end = res.end;
  const held: Array<[unknown, BufferEncoding | undefined]> = [];
  const release = () => {
    res.write = write;
    res.end = end;
    for (const [chunk, encoding] of held) res.write(chunk as Buffer, encoding as BufferEncoding);
    res.end();
  };
  res.write = function (this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown) {
    held.push([chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : undefined]);
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
    return true;
  } as typeof res.write;
  res.end = function (this: ServerResponse, chunk?: unknown, encoding?: unknown) {
    if (chunk !== undefined && typeof chunk !== 'function')
      held.push([chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : undefined]);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      release();
      return res;
    }
    confirm().then(release, () => {
      res.write = write;
      res.end = end;
      if (res.headersSent) return void res.destroy();
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      res.setHeader('Retry-After', '1');
      const unknown = new HttpError(
        503,
        'unavailable',
        'this node stopped leading before its replicas confirmed this write; its outcome is unknown: read it back',
      );
      sendJson(req, res, unknown.status, unknown.body());
    });
    return res;
  } as typeof res.end;
}

/** The value of `Replica-Lag`: seconds with one decimal, or `unknown`. */
export function lagHeader(replica: ReplicaLink): string {
  const lag = replica.lagSeconds();
  return lag === undefined ? 'unknown' : lag.toFixed(1);
}

export function replicaFront(deps: HttpDeps, replica: ReplicaLink, next: RequestListener): RequestListener {
  return (req, res) => {
    // An HA cluster's leader serves everything itself, while its lease surely lives.
    if (replica.servesWrites?.()) {
      for (const [name, value] of Object.entries(replica.leaderHeaders?.() ?? {})) res.setHeader(name, value);
      if (replica.confirmWrite && needsConfirmation(req)) holdUntilConfirmed(req, res, replica.confirmWrite);
      return next(req, res);
    }
    res.setHeader('Replica-Lag', lagHeader(replica));
    if (!isWrite(req)) return next(req, res);
    if (!replica.primary) {
      res.setHeader('Retry-After', '1');
      const problem = replica.leaderProblem?.();
      const refused = new HttpError(
        503,
        'no_leader',
        `no node of the cluster leads now (${problem ?? 'an election is under way'}): writes wait for a leader; reads are served by every node`,
      );
      beginRequest(deps, req, res, () => ({ refusal: 'no_leader' }));
      sendJson(req, res, refused.status, refused.body());
      return;
    }
    forward(deps, replica.primary, req, res, replica.primaryReplaced?.());
  };
}

function forwardedHeaders(req: IncomingMessage): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
  const prior = req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = [prior, req.socket.remoteAddress].filter(Boolean).join(', ');
  return headers;
}

function forward(
  deps: HttpDeps,
  primary: string,
  req: IncomingMessage,
  res: ServerResponse,
  replaced?: AbortSignal,
): void {
  const requestId = beginRequest(deps, req, res, () => ({ forwardedTo: 'primary' }));
  const path = req.url ?? '/';
  // Only a path, appended to the primary's URL: an absolute-form target (`POST http://elsewhere/…`)
  // or `//elsewhere/…` must never choose where the replica sends the request.
  if (!path.startsWith('/')) {
    const refused = new HttpError(
      400,
      'bad_request',
      'the request target must be a path (origin form), like /rest/push',
    );
    sendJson(req, res, refused.status, refused.body());
    return;
  }
  const target = new URL(primary + path);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const fail = (error: HttpError) => {
    if (res.headersSent) res.destroy();
    else sendJson(req, res, error.status, error.body());
  };
  const upstream = send(
    target,
    {
      method: req.method,
      headers: { ...forwardedHeaders(req), 'x-request-id': requestId },
      timeout: FORWARD_TIMEOUT_MS,
    },
    (answer) => {
      const headers: IncomingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
      res.writeHead(answer.statusCode ?? 502, headers as Record<string, string | string[]>);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    },
  );
  upstream.on('timeout', () => upstream.destroy(new Error('timeout')));
  let graceTimer: NodeJS.Timeout | undefined;
  const onReplaced = () => {
    graceTimer = setTimeout(() => {
      if (!res.headersSent) upstream.destroy(new Error('replaced'));
    }, REPLACED_GRACE_MS);
  };
  if (replaced?.aborted) onReplaced();
  else replaced?.addEventListener('abort', onReplaced, { once: true });
  const settled = () => {
    clearTimeout(graceTimer);
    replaced?.removeEventListener('abort', onReplaced);
  };
  upstream.on('response', settled);
  upstream.on('close', settled);
  upstream.on('error', (error) => {
    if (error.message === 'replaced') {
      deps.logger.warn({ reqId: requestId, event: 'forward-failed', problem: 'leader replaced' });
      res.setHeader('Retry-After', '1');
      return fail(
        new HttpError(
          503,
          'leader_replaced',
          'the leader this write was sent to lost its place before it answered; its outcome is unknown: read it back, then send it again (another node leads now)',
        ),
      );
    }
    const timedOut = error.message === 'timeout';
    const code = (error as NodeJS.ErrnoException).code;
    deps.logger.warn({ reqId: requestId, event: 'forward-failed', problem: timedOut ? 'timeout' : (code ?? 'error') });
    if (timedOut) {
      return fail(
        new HttpError(
          504,
          'primary_timeout',
          `the primary did not answer this write within ${FORWARD_TIMEOUT_MS / 1000} s; it may or may not have been applied: read it back`,
        ),
      );
    }
    // Nothing reached a primary that could not be connected to: the write was not made. A
    // connection lost after it was made may have carried the write: its outcome is unknown.
    // (Whatever the primary answers, a refusal included, goes back to the client unchanged above.)
    if (code !== undefined && NOT_CONNECTED.has(code)) {
      res.setHeader('Retry-After', '1');
      return fail(
        new HttpError(
          503,
          'primary_unavailable',
          'the primary (the leader, in a cluster) cannot be reached from this node; the write was not made: send it again (reads are served here)',
        ),
      );
    }
    fail(
      new HttpError(
        502,
        'primary_connection_lost',
        'the connection to the primary (the leader, in a cluster) was lost before it answered; the write may or may not have been applied: read it back',
      ),
    );
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}
