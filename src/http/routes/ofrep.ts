/**
 * OpenFeature's remote evaluation protocol (OFREP, github.com/open-feature/protocol), so that any
 * OpenFeature SDK with an OFREP provider reads cfghub keys as flags:
 *
 * - `POST /ofrep/v1/evaluate/flags/{key}`: one flag (server providers);
 * - `POST /ofrep/v1/evaluate/flags`: every flag resolving for the context, with a content ETag;
 *   `If-None-Match` holding it answers 304 (web providers poll this way).
 *
 * The repository: the token's own (`Authorization: Bearer`, `X-API-Key` or `Client-Token`), or
 * named by a path prefix, `/openfeature/{account}/{repository}/ofrep/v1/…`, a base URL a
 * provider takes as it is (needed for repositories read without a token). Access, commit and key
 * ring as `/rest/pull` (protocolRead.ts); the mapping is service/protocols/ofrep.ts's.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TimeSlices } from '../../lib/timeSlices.js';
import {
  contextOfEvaluation,
  evaluateAllFlags,
  evaluateFlag,
  OfrepRequestError,
  type OfrepFailureCode,
} from '../../service/protocols/ofrep.js';
import type { HttpDeps } from '../deps.js';
import type { PlainHandler } from '../routeTable.js';
import { answerError } from '../answer/errorAnswer.js';
import { sendJson, header } from '../answer/headers.js';
import { parseJson, readPlainBody } from '../body/jsonBody.js';
import { readAccess, type NamedRepository } from '../access/readAccess.js';
import { beginRequest } from '../requestLog.js';
import { presentedToken } from './protocolAuth.js';
import { protocolRead } from './protocolRead.js';
import { noteRead, readFields, type ReadNote } from './readNote.js';

/** Largest evaluation request read: an evaluation context is a few attributes. */
export const MAX_OFREP_BODY = 64 * 1024;

/** The evaluation context a request body holds (`{"context": {…}}`; an empty body is an empty context). */
function evaluationContextOf(body: Buffer): unknown {
  if (body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = parseJson(body);
  } catch {
    throw new OfrepRequestError('PARSE_ERROR', 'the body must be JSON: {"context": {…}}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new OfrepRequestError('PARSE_ERROR', 'the body must be a JSON object: {"context": {…}}');
  return (parsed as { context?: unknown }).context;
}

function heldEtags(req: IncomingMessage): string[] {
  return (header(req, 'If-None-Match') ?? '')
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .filter(Boolean);
}

const FAILURE_STATUS: Record<OfrepFailureCode, number> = {
  FLAG_NOT_FOUND: 404,
  PARSE_ERROR: 400,
  TARGETING_KEY_MISSING: 400,
  INVALID_CONTEXT: 400,
  GENERAL: 400,
};

/** The handler of `[/openfeature/{account}/{repository}]/ofrep/v1/evaluate/flags[/{key}]` (the route table's entries). */
export function ofrepRoutes(deps: HttpDeps): PlainHandler {
  const access = readAccess(deps);

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    named: NamedRepository,
    flag: string | undefined,
    note: ReadNote,
  ): Promise<void> => {
    const body = await readPlainBody(req, res, Math.min(MAX_OFREP_BODY, deps.bodyLimit));
    try {
      const evaluationContext = evaluationContextOf(body);
      const read = await protocolRead(access, req, named, undefined);
      const context = contextOfEvaluation(evaluationContext, read.target.snapshot.settings.levels);
      noteRead(note, read, context, req);
      deps.parts.reads.record(note);
      res.setHeader('Commit', read.commitId);
      if (flag !== undefined) {
        const result = evaluateFlag(read.target, read.commitId, flag, context);
        return sendJson(req, res, 'errorCode' in result ? FAILURE_STATUS[result.errorCode] : 200, result);
      }
      const { flags, etag } = await new TimeSlices().run(evaluateAllFlags(read.target, read.commitId, context));
      res.setHeader('ETag', etag);
      if (heldEtags(req).includes(etag)) {
        res.statusCode = 304;
        res.end();
        return;
      }
      sendJson(req, res, 200, { flags });
    } catch (error) {
      if (!(error instanceof OfrepRequestError)) throw error;
      sendJson(req, res, 400, {
        ...(flag !== undefined ? { key: flag } : {}),
        errorCode: error.errorCode,
        errorDetails: error.message,
      });
    }
  };

  return (req, res, { pathname, params, route }) => {
    const note: ReadNote = {};
    const requestId = beginRequest(deps, req, res, () => readFields(note), route.path);
    (async () => {
      const named: NamedRepository = {
        pathname,
        token: presentedToken(req),
        ...(params.account === undefined
          ? {}
          : { account: decodeURIComponent(params.account), repository: decodeURIComponent(params.repository) }),
      };
      await handle(req, res, named, params.key === undefined ? undefined : decodeURIComponent(params.key), note);
    })().catch((error: unknown) => answerError(deps, req, res, requestId, error));
  };
}
