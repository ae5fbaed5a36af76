/**
 * `POST /rest/push` (token names the repository) and `POST /rest/push/{account}/{repository}`.
 * Order of checks: repository and access (404, 401, 403), Content-Type (415), body size (413),
 * JSON and shape (400), limits (413), then the push itself (200, or 304 with the reason).
 */
import express, { type Request, type Response, type Router } from 'express';
import { findLimitProblem } from '../domain/pushRequest.js';
import { headerSafeReason, withoutPaths } from '../domain/reasons.js';
import { push } from '../service/push.js';
import { TimeSlices } from '../layout/timeSlices.js';
import type { AppContext } from './context.js';
import { badRequest, HttpError } from './errors.js';
import { clientVersion, header } from './headers.js';
import { bodyReader, parseJson, requireJsonContentType } from './jsonBody.js';
import { parsePushBody } from './pushSchema.js';
import { pushAccess, type WriteAccess } from './pushAccess.js';

export function pushRoutes(ctx: AppContext): Router {
  const router = express.Router();
  const readBody = bodyReader(ctx.bodyLimit);

  const handle = (access: WriteAccess) => async (req: Request, res: Response) => {
    const version = clientVersion(req);
    const { repository, token, groupKeys } = await access(req);
    requireJsonContentType(req, 'a push');
    const raw = await readBody(req, res);
    // A large body: its parse, its check and the push are separate pieces of work, not one.
    const slices = new TimeSlices();
    const body = parseJson(raw);
    await slices.pause();
    const parsed = parsePushBody(body);
    if (!parsed.ok) throw badRequest(`the push is malformed: ${parsed.problems[0].path}: ${parsed.problems[0].message}`, parsed.problems);
    const limit = findLimitProblem(parsed.request);
    if (limit) throw new HttpError(413, 'payload_too_large', `${limit.path}: ${limit.message}`, [limit]);
    await slices.pause();

    const result = await push(repository, parsed.request, {
      forceKeyPush: token?.forceKeyPush ?? false,
      groupKeys,
      tokenLabel: token?.label,
      ruleSet: token?.ruleSet,
      applicationName: header(req, 'Application-Name'),
      clientVersion: version,
      ifMatch: ifMatch(req),
    });
    if (repository.maintenanceProblem) {
      ctx.logger.warn({ reqId: res.locals.requestId, event: 'pack-merge-failed', repository: repository.fullName, problem: withoutPaths(String((repository.maintenanceProblem as Error)?.message ?? repository.maintenanceProblem)) });
    }
    res.locals.pushOutcome = result.kind;
    if (result.kind === 'refused') {
      res.locals.refusal = result.reason;
      res.status(304).set('ETag', `"${headerSafeReason(result.reason)}"`).end();
      return;
    }
    ctx.logger.info({ reqId: res.locals.requestId, event: 'push', repository: repository.fullName, outcome: result.kind, commit: result.commitId, elements: parsed.request.data.length });
    res.status(200).set('ETag', `"${result.commitId}"`).set('Content-Length', '0').end();
  };

  const { byToken, byPath } = pushAccess(ctx);
  router.post('/rest/push', handle(byToken));
  router.post('/rest/push/:account/:repository', handle(byPath));

  return router;
}

/** `If-Match: "<commit id>"` (quotes optional); `*` matches any head. */
function ifMatch(req: Request): string | undefined {
  const value = header(req, 'If-Match');
  if (value === undefined || value === '*') return undefined;
  const match = /^(?:W\/)?"?([0-9a-f]{40})"?$/.exec(value);
  if (!match) throw badRequest('If-Match must be a commit id in quotes, as the ETag of a push gives it');
  return match[1];
}
