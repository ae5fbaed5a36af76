/**
 * The HTTP front: every request gets an id and one log line; the read endpoints are served by
 * readRoutes and pushes by pushFront without express, everything else by the express application,
 * and every error is mapped to a JSON answer.
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
import { sendJson } from './answer/headers.js';
import { adminRoutes } from './routes/adminRoutes.js';
import { answerGitError, gitRoutes } from './routes/gitRoutes.js';
import { infoRoutes } from './routes/infoRoutes.js';
import { historyRoutes } from './routes/historyRoutes.js';
import { pushRoutes } from './routes/pushRoutes.js';
import { pushFront } from './routes/pushFront.js';
import { readRoutes } from './routes/readRoutes.js';
import { replicaFront } from './replicaFront.js';
import { replicationRoutes } from './routes/replicationRoutes.js';
import { haRoutes } from './routes/haRoutes.js';
import { rollbackRoutes } from './routes/rollbackRoutes.js';
import { changeRoutes } from './routes/changeRoutes.js';
import { uiRoutes } from './routes/uiRoutes.js';
import { explainRoutes } from './routes/explainRoutes.js';
import { answerMetrics } from './metrics.js';
import { answerReadiness } from './routes/readiness.js';
import { openApiDocument } from './openapi.js';
import { beginRequest } from './requestLog.js';
import { springRoutes } from './routes/spring.js';
import { ofrepRoutes } from './routes/ofrep.js';
import { clientsRoutes } from './routes/clients.js';
import { webhookRoutes } from './routes/webhookRoutes.js';
import { FIRST_AUDIT_DELAY_MS } from '../service/schemas/outsideCommits.js';

/** The express application: everything but the read endpoints. */
export function createApp(deps: HttpDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // ETags are commit ids or refusal reasons, set by the routes
  app.set('query parser', 'simple');

  app.use((req: Request, res: Response, next: NextFunction) => {
    res.locals.requestId = beginRequest(deps, req, res, () =>
      res.locals.refusal ? { refusal: res.locals.refusal } : {},
    );
    next();
  });

  app.get('/healthz', (req, res) => sendJson(req, res, 200, { status: 'ok' }));
  app.get('/readyz', (req, res) => answerReadiness(deps, req, res));
  app.get('/metrics', (req, res) => answerMetrics(deps, req, res));
  app.get('/openapi.json', (req, res) => sendJson(req, res, 200, openApiDocument()));
  app.use(gitRoutes(deps)); // before anything reads a body: git's requests stream into git untouched
  app.use(infoRoutes(deps));
  app.use(replicationRoutes(deps)); // State and change feed for replicas
  app.use(haRoutes(deps)); // between the nodes of an HA cluster
  app.use(pushRoutes(deps));
  app.use(historyRoutes(deps));
  app.use(rollbackRoutes(deps));
  app.use(changeRoutes(deps)); // change requests: reviewed, approved, applied
  app.use(uiRoutes(deps)); // the web console: GET / and /ui/…
  app.use(explainRoutes(deps));
  app.use(adminRoutes(deps));
  app.use(clientsRoutes(deps)); // who reads what: the read record, to an admin token
  app.use(webhookRoutes(deps)); // a repository's webhooks and their deliveries

  app.use((req: Request) => {
    throw new HttpError(404, 'not_found', `no such endpoint: ${req.method} ${req.path}`);
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.locals.gitProtocolRoute) answerGitError(deps, res, res.locals.requestId as string, error);
    else answerError(deps, req, res, res.locals.requestId as string, error);
  });
  return app;
}

/** A server's HTTP front: its request listener, and what it holds for its life (parts.ts), closed with it. */
export interface HttpFront {
  /** The read endpoints first, then the express application (a replica's front before both). */
  readonly listener: RequestListener;
  /** The express application, for everything but the routes served without it. */
  readonly app: express.Express;
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
  const app = createApp(deps);
  const reads = readRoutes(deps);
  const pushes = pushFront(deps); // pushes skip express too
  const spring = springRoutes(deps); // Spring Cloud Config's reads, under /spring/
  const ofrep = ofrepRoutes(deps); // OpenFeature's remote evaluation protocol, under /ofrep/v1/
  const served = (req: IncomingMessage, res: ServerResponse) => {
    if (!reads(req, res) && !spring(req, res) && !ofrep(req, res) && !pushes(req, res)) app(req, res);
  };
  // Commits made outside cfghub are weighed against the schemas as they arrive (history, /readyz, metrics).
  // Weighing every head takes a read of each repository's head commit: it starts once the first
  // requests of a new server are answered, not beside them (/readyz weighs them when asked).
  setTimeout(() => deps.parts.outsideCommits.watchAll(), FIRST_AUDIT_DELAY_MS).unref();
  return {
    listener: deps.replica ? replicaFront(deps, deps.replica, served) : served,
    app,
    deps,
    endWaits: () => {
      deps.parts.endWaits();
      reads.closeWatches();
    },
    close: () => {
      reads.closeWatches();
      deps.parts.close();
    },
  };
}
