/** `GET /rest/info/all`: the listing of every repository (seed section 4.1, contract section 5). */
import express, { type Router } from 'express';
import { listRepositories } from '../service/listing.js';
import type { AppContext } from './context.js';
import { withoutPaths } from '../domain/reasons.js';
import { clientVersion, sendJson } from './headers.js';

export function infoRoutes(ctx: AppContext): Router {
  const router = express.Router();
  router.get('/rest/info/all', async (req, res) => {
    clientVersion(req);
    const records = await listRepositories(ctx.registry, ctx.tokens, (repository, error) => {
      ctx.logger.warn({ reqId: res.locals.requestId, event: 'unreadable-repository', repository, problem: withoutPaths(String((error as Error)?.message ?? error)) });
    });
    sendJson(req, res, 200, records);
  });
  return router;
}
