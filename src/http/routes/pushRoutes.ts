/**
 * `POST /rest/push` (token names the repository) and `POST /rest/push/{account}/{repository}`.
 * Order of checks: repository and access (404, 401, 403), Content-Type (415), body size (413),
 * JSON and shape (400), limits (413), then the push itself (200, or 304 with the reason).
 * Served without express by pushFront.ts; express keeps the route for compressed bodies.
 */
import type { RefusalKind } from '../../domain/applyPush.js';
import type { Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { findLimitProblemSteps } from '../../domain/pushRequest.js';
import { headerSafeReason, withoutPaths } from '../../domain/reasons.js';
import { dryRunPush, push } from '../../service/write/push.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { HttpDeps } from '../deps.js';
import { badRequest, HttpError } from '../answer/errors.js';
import { booleanHeader, clientVersion, dryRunContexts, header, ifMatch, sendJson } from '../answer/headers.js';
import { bodyReader, requireJsonContentType } from '../body/jsonBody.js';
import { parseJsonInSlices } from '../body/jsonBodyInSlices.js';
import { parsePushBodySteps } from '../../api/pushBody.js';
import { plainWriteAccess, type NamedWrite } from '../access/pushAccess.js';

/** What the push route leaves for the request's log line and metrics (requestLog.ts reads them). */
export interface PushLocals {
  pushOutcome?: string;
  /** A refusal's reason, for the log line. */
  refusal?: string;
  /** What the refusal is about, for the metrics (never the reason: it names the client's keys and values). */
  refusalKind?: RefusalKind;
}

/** The push itself, for a request of node:http: served by pushFront.ts, and by express for bodies it must inflate. */
export type PushHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  locals: PushLocals,
  requestId: string,
  named: NamedWrite,
  readBody: () => Promise<Buffer>,
) => Promise<void>;

export function pushHandler(deps: HttpDeps): PushHandler {
  const access = plainWriteAccess(deps);
  return async (req, res, locals, requestId, named, readBody) => {
    const version = clientVersion(req);
    const { repository, token, groupKeys } = await access(req, named);
    requireJsonContentType(req, 'a push');
    const raw = await readBody();
    // A large body: its parse, then its shape and limits checked element by element in slices.
    const slices = new TimeSlices();
    const body = await parseJsonInSlices(raw, slices);
    const parsed = await slices.run(parsePushBodySteps(body));
    if (!parsed.ok)
      throw badRequest(
        `the push is malformed: ${parsed.problems[0].path}: ${parsed.problems[0].message}`,
        parsed.problems,
      );
    const limit = await slices.run(findLimitProblemSteps(parsed.request));
    if (limit) throw new HttpError(413, 'payload_too_large', `${limit.path}: ${limit.message}`, [limit]);
    await slices.pause();

    const caller = {
      forceKeyPush: token?.forceKeyPush ?? false,
      groupKeys,
      tokenLabel: token?.label,
      ruleSet: token?.ruleSet,
      applicationName: header(req, 'Application-Name'),
      clientVersion: version,
      ifMatch: ifMatch(req),
    };
    if (booleanHeader(req, 'Dry-Run')) {
      // Everything the push runs, nothing written: 200 with what it would do (docs/schemas.md).
      const answer = await dryRunPush(repository, parsed.request, caller, dryRunContexts(req));
      locals.pushOutcome = `dry-run ${answer.outcome}`;
      sendJson(req, res, 200, answer);
      return;
    }
    const result = await push(repository, parsed.request, caller);
    if (repository.maintenanceProblem) {
      deps.logger.warn({
        reqId: requestId,
        event: 'pack-merge-failed',
        repository: repository.fullName,
        problem: withoutPaths(
          String((repository.maintenanceProblem as Error)?.message ?? repository.maintenanceProblem),
        ),
      });
    }
    locals.pushOutcome = result.kind;
    if (result.kind === 'refused') {
      locals.refusal = result.reason;
      locals.refusalKind = result.refusal ?? 'invalid';
      res.statusCode = 304;
      res.setHeader('ETag', `"${headerSafeReason(result.reason)}"`);
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('ETag', `"${result.commitId}"`);
    res.setHeader('Content-Length', '0');
    res.end();
    // After the answer: the line is serialized here and written to stdout by the thread pool,
    // whose thread and the pipe's reader it wakes; made before the answer, on a busy machine their
    // turns on the cores came before the answer's write.
    deps.logger.info({
      reqId: requestId,
      event: 'push',
      repository: repository.fullName,
      outcome: result.kind,
      commit: result.commitId,
      elements: parsed.request.data.length,
    });
  };
}

/** The push route in express, in both forms: for the requests pushFront.ts leaves to it (a compressed body). */
export function pushRoutes(deps: HttpDeps): RequestHandler {
  const readBody = bodyReader(deps.bodyLimit);
  const handle = pushHandler(deps);
  return (req: Request, res: Response) =>
    handle(
      req,
      res,
      res.locals,
      res.locals.requestId as string,
      req.params.account === undefined
        ? { pathname: req.path }
        : { pathname: req.path, account: String(req.params.account), repository: String(req.params.repository) },
      () => readBody(req, res),
    );
}
