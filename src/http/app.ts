/**
 * The HTTP front: one matcher on plain node:http finds each request's entry in the route table
 * (routeTable.ts), whose handler serves it: the reads, pushes, Spring and OFREP on node:http,
 * the others through the express adapter below. Every request gets an id and one log line, and
 * every error is mapped to a JSON answer (git's routes: to text git shows).
 *
 * Why reads skip express: with an answer of 60 KB from memory, a node:http server answers about
 * 20,000 requests per second on the 2-core machine the benchmarks run on, and the same answer
 * sent from an express 5 middleware about 6,000 (measured side by side, wrk, 16 connections).
 * Pulls are what polling clients do all day; pushes skip it too (see pushFront.ts); admin
 * routes keep express's comforts.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { HttpDeps, HttpOptions } from './deps.js';
import { ServerParts } from './parts.js';
import { answerError } from './answer/errorAnswer.js';
import { HttpError } from './answer/errors.js';
import { replicaFront } from './replicaFront.js';
import { beginRequest } from './requestLog.js';
import { openRooms } from './rooms.js';
import { RouteMatcher, type RouteMatch } from './routeMatcher.js';
import { ROUTE_TABLE, type Serving } from './routeTable.js';
import { FIRST_AUDIT_DELAY_MS } from '../service/schemas/outsideCommits.js';

/** The route the front's matcher found for a request handed to the express adapter (undefined: none). */
const MATCHED = Symbol('matched route');
type RoutedRequest = IncomingMessage & { [MATCHED]?: RouteMatch };

/** The path's parameters decoded, as express's router decoded them (a malformed escape throws URIError: 400). */
function decodedParams(params: Readonly<Record<string, string>>): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) decoded[name] = decodeURIComponent(value);
  return decoded;
}

/**
 * The express adapter: express's request and response wrappers, res.locals and error handling
 * for the routes the table serves through express; it routes nothing itself (the front's matcher
 * did). A request no route matched is answered here: 404 naming its method and path, or for
 * OPTIONS the methods its path answers.
 */
function expressAdapter(deps: HttpDeps, servings: readonly Serving[], matcher: RouteMatcher): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // ETags are commit ids or refusal reasons, set by the routes
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next: NextFunction) => {
    const matched = (req as RoutedRequest)[MATCHED];
    res.locals.requestId = beginRequest(
      deps,
      req,
      res,
      () => (res.locals.refusal ? { refusal: res.locals.refusal } : {}),
      matched && (matched.route.label ?? matched.route.path),
    );
    const handler = matched && servings[matched.index].express;
    if (!handler) {
      const methods = req.method === 'OPTIONS' ? matcher.methodsAt(req.path) : [];
      if (methods.length) return void res.set('Allow', methods.join(', ')).status(200).send(methods.join(','));
      throw new HttpError(404, 'not_found', `no such endpoint: ${req.method} ${req.path}`);
    }
    req.params = decodedParams(matched.params);
    return handler(req, res, next);
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const matched = (req as RoutedRequest)[MATCHED];
    const answer = matched && servings[matched.index].answerError;
    if (answer) answer(res, res.locals.requestId as string, error);
    else answerError(deps, req, res, res.locals.requestId as string, error);
  });
  return app;
}

/** A server's HTTP front: its request listener, and what it holds for its life (parts.ts), closed with it. */
export interface HttpFront {
  /** The route table's matcher, then the route's handler (a replica's front before it). */
  readonly listener: RequestListener;
  readonly deps: HttpDeps;
  /**
   * Ends what holds a client or works in the background: held watches answer 304, replicas
   * waiting on the feed get the current state, the outside-commit watch and the webhook
   * deliveries stop (ServerParts.endWaits). The metrics keep counting the drain's requests.
   */
  endWaits(): void;
  /** Ends everything the front holds (call once its server has drained). */
  close(): void;
}

/** The HTTP front of a server on `options`: the parts it holds are made here, once. */
export function createHttpFront(options: HttpOptions): HttpFront {
  const deps: HttpDeps = { ...options, parts: new ServerParts(options) };
  const opened = openRooms(deps);
  // Each entry's handler bound once, by its index in the table; the paths compiled once.
  const servings = ROUTE_TABLE.map((route) => route.serve(opened.rooms));
  const matcher = new RouteMatcher(ROUTE_TABLE);
  const app = expressAdapter(deps, servings, matcher);
  const served = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const matched = matcher.match(req.method ?? 'GET', query === -1 ? url : url.slice(0, query));
    const plain = matched && servings[matched.index].plain;
    if (plain && plain(req, res, matched) !== false) return;
    (req as RoutedRequest)[MATCHED] = matched;
    app(req, res);
  };
  // Commits made outside cfghub are weighed against the schemas as they arrive (history, /readyz, metrics).
  // Weighing every head takes a read of each repository's head commit: it starts once the first
  // requests of a new server are answered, not beside them (/readyz weighs them when asked).
  setTimeout(() => deps.parts.outsideCommits.watchAll(), FIRST_AUDIT_DELAY_MS).unref();
  return {
    listener: deps.replica ? replicaFront(deps, deps.replica, served) : served,
    deps,
    endWaits: () => {
      deps.parts.endWaits();
      opened.close();
    },
    close: () => {
      opened.close();
      deps.parts.close();
    },
  };
}
