/**
 * `GET /rest/history` and `GET /rest/diff`, each also as
 * `…/{account}/{repository}`, with the access rules of the other reads. Options come as headers,
 * as for the other reads, or as query parameters of the same name in lower case.
 */
import type { Request, RequestHandler, Response } from 'express';
import { diff } from '../../service/history/diff.js';
import { DEFAULT_HISTORY_LIMIT, history, MAX_HISTORY_LIMIT } from '../../service/history/history.js';
import type { HttpDeps } from '../deps.js';
import { badRequest } from '../answer/errors.js';
import { booleanHeader, clientVersion, header, sendBytes, sendJson } from '../answer/headers.js';
import { jsonAnswer } from '../../service/answers/answerInSlices.js';
import { readAccess, type NamedRepository } from '../access/readAccess.js';

/**
 * Changes (keys and files) an answer may list and still be serialized by one JSON.stringify; past
 * it, in slices (answerInSlices.ts). A page whose commit added 40,000 keys is 14 MB of JSON: 70 ms
 * of one piece of the event loop. A page of a few changes per commit stays on the quicker path.
 */
const CHANGES_SERIALIZED_AT_ONCE = 1_000;

async function sendAnswer(req: Request, res: Response, body: object, changes: number): Promise<void> {
  if (changes <= CHANGES_SERIALIZED_AT_ONCE) return sendJson(req, res, 200, body);
  const answer = await jsonAnswer(body, booleanHeader(req, 'Pretty'));
  sendBytes(res, 200, answer.contentType, answer.bytes);
}

/** A header, else the query parameter of the same name in lower case; empty counts as absent. */
function option(req: Request, name: string): string | undefined {
  const fromHeader = header(req, name);
  if (fromHeader !== undefined) return fromHeader;
  const fromQuery = req.query[name.toLowerCase()];
  return typeof fromQuery === 'string' && fromQuery.trim() !== '' ? fromQuery.trim() : undefined;
}

function limitOf(req: Request): number {
  const text = option(req, 'Limit');
  if (text === undefined) return DEFAULT_HISTORY_LIMIT;
  const limit = /^\d{1,7}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= MAX_HISTORY_LIMIT))
    throw badRequest(`Limit must be a whole number from 1 to ${MAX_HISTORY_LIMIT}`);
  return limit;
}

export function historyRoutes(deps: HttpDeps): { history: RequestHandler; diff: RequestHandler } {
  const access = readAccess(deps);
  const named = (req: Request): NamedRepository => ({
    pathname: req.path,
    account: req.params.account as string | undefined,
    repository: req.params.repository as string | undefined,
  });

  const historyOf = async (req: Request, res: Response) => {
    clientVersion(req);
    const limit = limitOf(req);
    const { repository, head } = await access(req, named(req), { settingsOnly: true });
    const page = await history(repository, head, {
      limit,
      before: option(req, 'Before'),
      key: option(req, 'Key'),
      file: option(req, 'File'),
    });
    const changes = page.commits.reduce((sum, commit) => sum + commit.keys.length + commit.files.length, 0);
    await sendAnswer(req, res, { account: repository.account, repository: repository.name, head, ...page }, changes);
  };

  const diffOf = async (req: Request, res: Response) => {
    clientVersion(req);
    const from = option(req, 'From');
    if (from === undefined) throw badRequest('the From header is required: a commit id, a tag or an ISO 8601 date');
    const { repository, head } = await access(req, named(req));
    const body = await diff(repository, head, { from, to: option(req, 'To'), context: option(req, 'Context') });
    const resolved = body.resolved
      ? [body.resolved.properties, body.resolved.files].flatMap((changed) => [
          changed.added,
          changed.changed,
          changed.removed,
        ])
      : [];
    const changes =
      body.keys.length + body.files.length + resolved.reduce((sum, names) => sum + Object.keys(names).length, 0);
    await sendAnswer(req, res, { account: repository.account, repository: repository.name, ...body }, changes);
  };

  return { history: historyOf, diff: diffOf };
}
