/** `GET /rest/info/all`: the listing of every repository (seed section 4.1, contract section 5). */
import express, { type Router } from 'express';
import { withoutPaths } from '../domain/reasons.js';
import { listRepositories } from '../service/listing.js';
import type { AppContext } from './context.js';
import { booleanHeader, clientVersion } from './headers.js';

export function infoRoutes(ctx: AppContext): Router {
  const router = express.Router();
  // The listing's JSON, kept while no repository's head or user count changed (same fingerprint).
  let serialised: { fingerprint: string; compact: string; pretty?: string } | undefined;
  router.get('/rest/info/all', async (req, res) => {
    clientVersion(req);
    const listing = await listRepositories(ctx.registry, ctx.tokens, (repository, error) => {
      ctx.logger.warn({ reqId: res.locals.requestId, event: 'unreadable-repository', repository, problem: withoutPaths(String((error as Error)?.message ?? error)) });
    });
    if (serialised?.fingerprint !== listing.fingerprint) {
      serialised = { fingerprint: listing.fingerprint, compact: JSON.stringify(listing.records) };
    }
    const body = booleanHeader(req, 'Pretty') ? (serialised.pretty ??= JSON.stringify(listing.records, null, 2)) : serialised.compact;
    res.status(200).type('application/json').send(body);
  });
  return router;
}
