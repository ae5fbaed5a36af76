/** `GET /rest/info/all`: the listing of every repository. */
import type { Request, RequestHandler, Response } from 'express';
import { withoutPaths } from '../../domain/reasons.js';
import { listRepositories } from '../../service/read/listing.js';
import type { HttpDeps } from '../deps.js';
import { booleanHeader, clientVersion, header } from '../answer/headers.js';
import { visibleRecords } from '../../service/access/accessPolicy.js';

export function infoRoutes(deps: HttpDeps): RequestHandler {
  // The listing's JSON, kept while no repository's head or user count changed (same fingerprint).
  let serialised: { fingerprint: string; compact: string; pretty?: string } | undefined;
  return async (req: Request, res: Response) => {
    clientVersion(req);
    const listing = await listRepositories(deps.registry, deps.tokens, (repository, error) => {
      deps.logger.warn({
        reqId: res.locals.requestId,
        event: 'unreadable-repository',
        repository,
        problem: withoutPaths(String((error as Error)?.message ?? error)),
      });
    });
    if (serialised?.fingerprint !== listing.fingerprint) {
      serialised = { fingerprint: listing.fingerprint, compact: JSON.stringify(listing.records) };
    }
    if (deps.hidePrivate) {
      // Made for each caller: what it may see depends on its token (service/access/accessPolicy.ts).
      const presented = header(req, 'Client-Token');
      const visible = visibleRecords(
        listing.records,
        presented === undefined ? undefined : deps.tokens.authenticate(presented),
      );
      res
        .status(200)
        .type('application/json')
        .send(booleanHeader(req, 'Pretty') ? JSON.stringify(visible, null, 2) : JSON.stringify(visible));
      return;
    }
    const body = booleanHeader(req, 'Pretty')
      ? (serialised.pretty ??= JSON.stringify(listing.records, null, 2))
      : serialised.compact;
    res.status(200).type('application/json').send(body);
  };
}
