/**
 * `POST /rest/push` (token names the repository) and `POST /rest/push/{account}/{repository}`.
 * Order of checks: repository and access (404, 401, 403), Content-Type (415), body size (413),
 * JSON and shape (400), limits (413), then the push itself (200, or 304 with the reason).
 */
import express, { type Request, type Response, type Router } from 'express';
import { findLimitProblem } from '../domain/pushRequest.js';
import { headerSafeReason, withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { push } from '../service/push.js';
import { requireRepository } from '../service/repositories.js';
import { tokenBelongsTo } from '../service/tokens.js';
import type { GitRepository } from '../store/repository.js';
import type { TokenRecord } from '../store/tokenStore.js';
import type { AppContext } from './context.js';
import { badRequest, HttpError } from './errors.js';
import { clientVersion, header } from './headers.js';
import { parsePushBody } from './pushSchema.js';

interface PushAccess {
  readonly repository: GitRepository;
  readonly token?: TokenRecord;
}

export function pushRoutes(ctx: AppContext): Router {
  const router = express.Router();
  const rawBody = express.raw({ type: () => true, limit: ctx.bodyLimit });
  const readBody = (req: Request, res: Response) =>
    new Promise<Buffer>((resolve, reject) => rawBody(req, res, (error?: unknown) => (error ? reject(error) : resolve(req.body as Buffer))));

  const handle = (access: (req: Request) => PushAccess | Promise<PushAccess>) => async (req: Request, res: Response) => {
    const version = clientVersion(req);
    const { repository, token } = await access(req);
    const contentType = (req.get('Content-Type') ?? '').split(';')[0].trim().toLowerCase();
    if (contentType !== 'application/json') {
      throw new HttpError(415, 'unsupported_media_type', 'a push must be sent with Content-Type: application/json');
    }
    const body = await readBody(req, res);
    let json: unknown;
    try {
      json = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : '');
    } catch {
      throw badRequest('the body is not valid JSON');
    }
    const parsed = parsePushBody(json);
    if (!parsed.ok) throw badRequest(`the push is malformed: ${parsed.problems[0].path}: ${parsed.problems[0].message}`, parsed.problems);
    const limit = findLimitProblem(parsed.request);
    if (limit) throw new HttpError(413, 'payload_too_large', `${limit.path}: ${limit.message}`, [limit]);

    const result = await push(repository, parsed.request, {
      forceKeyPush: token?.forceKeyPush ?? false,
      tokenLabel: token?.label,
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

  router.post(
    '/rest/push',
    handle((req) => {
      const presented = header(req, 'Client-Token');
      if (!presented) throw new ServiceError('unauthorized', 'POST /rest/push needs a Client-Token header');
      const token = ctx.tokens.authenticate(presented);
      return { repository: requireRepository(ctx.registry, token.account, token.repository), token };
    }),
  );

  router.post(
    '/rest/push/:account/:repository',
    handle(async (req) => {
      const repository = requireRepository(ctx.registry, String(req.params.account), String(req.params.repository));
      const presented = header(req, 'Client-Token');
      if (presented) {
        const token = ctx.tokens.authenticate(presented);
        if (!tokenBelongsTo(token, repository)) throw new ServiceError('forbidden', `the Client-Token is not a token of ${repository.fullName}`);
        return { repository, token };
      }
      const { settings } = await repository.headSnapshot();
      if (!settings.tokenFreePush) {
        throw new ServiceError('forbidden', `repository ${repository.fullName} does not allow push without a Client-Token`);
      }
      return { repository };
    }),
  );

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
