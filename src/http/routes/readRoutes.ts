/**
 * ConfigHub's read endpoints: `pull`, `rawFile`, `info`, `keyData` and
 * `export`, each as `/rest/<name>` (the `Client-Token` names the repository) and as
 * `/rest/<name>/{account}/{repository}`. This adapter parses the headers, checks access and
 * writes bytes; the answers are the service's (service/answers/answers.ts: made once per commit
 * and query, cached, carried where a push did not reach them). Each carries an ETag, and a
 * matching `If-None-Match` is answered 304. The ETag of pull and rawFile is of the content alone,
 * and with `Wait` such a request is held until the content changes (service/answers/watchHub.ts);
 * a pull also comes as properties, YAML or dotenv (pullFormat.ts).
 *
 * Served straight from node:http, without express (see app.ts for the measurement): a cached
 * answer costs a route match (routeMatcher.ts), the access check and one write: the head is known without a system
 * call while the head watch reports no change (see GitRepository.head).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ReadAnswers, type ReadEndpoint, type ReadQuery, type ReadRequest } from '../../service/answers/answers.js';
import { readCacheOfWorker } from '../../service/answers/readCache.js';
import { DEFAULT_MAX_WATCHERS, WatchHub, type HeldWatch, type WaitResult } from '../../service/answers/watchHub.js';
import { readPoint } from '../../service/read/readPoint.js';
import type { PullFormat } from '../../domain/renderings.js';
import { headHolding } from '../../service/replication/replicaLink.js';
import type { HttpDeps } from '../deps.js';
import type { PlainHandler } from '../routeTable.js';
import { answerError } from '../answer/errorAnswer.js';
import { HttpError } from '../answer/errors.js';
import { booleanHeader, clientVersion, header, sendBytes } from '../answer/headers.js';
import { pullFormat } from '../answer/pullFormat.js';
import { readAccess } from '../access/readAccess.js';
import { readerKeys } from '../access/securityProfile.js';
import { beginRequest } from '../requestLog.js';
import { waitMsOf } from '../watchRequest.js';
import { applicationNameOf, readFields, type ReadNote } from './readNote.js';

type Request = IncomingMessage;

interface ReadPath {
  readonly pathname: string;
  readonly endpoint: ReadEndpoint;
  /** Both present in the path form, both absent in the token form. */
  readonly account?: string;
  readonly repository?: string;
}

/** What a read asks for, from its headers (the service makes the answer: service/answers/answers.ts). */
function queryOf(req: Request, endpoint: ReadEndpoint, format: PullFormat): ReadQuery {
  const pretty = booleanHeader(req, 'Pretty');
  switch (endpoint) {
    case 'pull':
      return {
        endpoint,
        format,
        context: header(req, 'Context'),
        includeComments: booleanHeader(req, 'Include-Comments'),
        includeValueContext: booleanHeader(req, 'Include-Value-Context'),
        noProperties: booleanHeader(req, 'No-Properties'),
        noFiles: booleanHeader(req, 'No-Files'),
        pretty,
      };
    case 'rawFile':
      return { endpoint, context: header(req, 'Context'), file: header(req, 'File') };
    case 'info': {
      const labels = header(req, 'Context-Labels');
      return {
        endpoint,
        contextElements:
          labels !== undefined
            ? labels
                .split(',')
                .map((l) => l.trim())
                .filter(Boolean)
            : booleanHeader(req, 'Context-Elements'),
        files: header(req, 'Files-Glob') ?? booleanHeader(req, 'Files'),
        tags: booleanHeader(req, 'Tags'),
        pretty,
      };
    }
    case 'keyData':
      return { endpoint, keyName: header(req, 'KeyName'), pretty };
    case 'export':
      return {
        endpoint,
        omitValues: booleanHeader(req, 'Omit-Values'),
        omitFiles: booleanHeader(req, 'Omit-Files'),
        pretty,
      };
  }
}

/** The ETags `If-None-Match` names (weak ones as strong), or true for `*`. */
function heldEtags(req: Request): readonly string[] | true {
  const value = header(req, 'If-None-Match');
  if (value === undefined) return [];
  const tags = value.split(',').map((tag) => tag.trim());
  return tags.includes('*') ? true : tags.map((tag) => tag.replace(/^W\//, ''));
}

/** Whether `If-None-Match` names this ETag (or `*`). */
function notModified(req: Request, etag: string): boolean {
  const held = heldEtags(req);
  return held === true || held.includes(etag);
}

/** The read endpoints' room: a handler for each endpoint, and the watches they hold. */
export interface ReadRoutes {
  /** The handler of one endpoint, in both its forms (the route table's entries). */
  serve(endpoint: ReadEndpoint): PlainHandler;
  /** Ends every held watch, each answered 304 (the server is shutting down). */
  close(): void;
}

export function readRoutes(deps: HttpDeps): ReadRoutes {
  const answers = new ReadAnswers(readCacheOfWorker(deps.workers));
  /** How a held watch is answered: the new answer (200), nothing new (304), or the error making it. */
  const respond = (held: HeldRequest, result: WaitResult) => {
    const { req, res } = held;
    if (res.destroyed) return; // the client went away
    try {
      if (result && 'error' in result) return answerError(deps, req, res, held.requestId, result.error);
      if (!result) {
        res.setHeader('Connection', hub.closing ? 'close' : 'keep-alive');
        res.setHeader('ETag', held.etag);
        res.statusCode = 304;
        res.end();
        return;
      }
      res.removeHeader('Commit'); // woken by a later commit, which the shared wake does not name
      res.setHeader('ETag', result.answer.etag);
      sendBytes(res, 200, result.answer.contentType, result.answer.bytes);
    } catch {
      res.destroy(); // cannot happen; never stops the other watchers' answers
    }
  };
  const hub = new WatchHub<HeldRequest>(answers, deps.maxWatchers ?? DEFAULT_MAX_WATCHERS, respond);
  // One line per wake (not per watcher): how many were answered, and how long the server took.
  hub.onWake = (wake) =>
    deps.logger.info({
      event: 'watch-wake',
      repository: wake.repository,
      answersMade: wake.answersMade,
      woken: wake.woken,
      durationMs: Math.round(wake.ms * 10) / 10,
    });
  // cfghub_watchers and cfghub_watch_answers_made_total in /metrics
  deps.parts.metrics.watchers = () => hub.size;
  deps.parts.metrics.watchAnswersMade = () => hub.answersMade;

  const access = readAccess(deps);

  /** Holds a watch until its answer changes (service/answers/watchHub.ts); 503 over the limit of watchers. */
  const hold = (held: HeldRequest, read: ReadRequest, groupKey: string, head: string, waitMs: number) => {
    if (held.res.destroyed) return; // the client left while its first answer was made: nothing to hold
    // A closing hub answers at once (304), full or not.
    if (!hub.closing && hub.full) {
      held.res.setHeader('Retry-After', '1');
      throw new HttpError(
        503,
        'too_many_watchers',
        `this server holds ${hub.maxWatchers} watches at most; try again shortly, or poll`,
      );
    }
    const watch = hub.hold({ handle: held, read, groupKey, holds: heldEtags(held.req), head, waitMs });
    if (!watch) return;
    (held.res as WatchedResponse)[WATCH] = watch;
    held.res.once('close', responseClosed);
  };

  /** A primary's head for a read with `Min-Commit`: the commit must be the head or one of its ancestors. */
  const headWithCommit = async (repository: Parameters<typeof headHolding>[0], commit: string): Promise<string> => {
    const head = await headHolding(repository, commit);
    if (head !== undefined) return head;
    throw new HttpError(
      409,
      'commit_unknown',
      `commit ${commit.toLowerCase()} is neither the head of ${repository.fullName} nor one of its ancestors on this server: it was lost in a failover, or is of another repository`,
    );
  };

  const handle = async (
    req: Request,
    res: ServerResponse,
    path: ReadPath,
    requestId: string,
    note: ReadNote,
  ): Promise<void> => {
    const name = path.endpoint;
    clientVersion(req);
    const format = name === 'pull' ? pullFormat(req) : 'json';
    const waitMs = name === 'pull' || name === 'rawFile' ? waitMsOf(req) : undefined;
    // decodeURIComponent throws URIError on a malformed escape: answered 400.
    const named =
      path.account === undefined
        ? path
        : { ...path, account: decodeURIComponent(path.account), repository: decodeURIComponent(path.repository!) };
    const grant = await access(req, named);
    const { repository, head: accessHead, groupKeys = [] } = grant;
    // At least a commit (`Min-Commit`): a replica waits for it; a primary that does not have it
    // (lost in a failover, or never of this repository) says so rather than serve an older state.
    const minCommit = header(req, 'Min-Commit');
    const head =
      minCommit === undefined
        ? accessHead
        : deps.replica
          ? await deps.replica.awaitCommit(repository, minCommit)
          : await headWithCommit(repository, minCommit);
    const point = await readPoint(repository, head, header(req, 'Tag'), header(req, 'Repository-Date'));
    res.setHeader('Commit', point.commitId); // the commit served: the ETag names the content
    Object.assign(note, {
      repository: repository.fullName,
      tokenLabel: grant.token?.label,
      context: header(req, 'Context'),
      commit: point.commitId,
      application: applicationNameOf(req),
    });
    const read: ReadRequest = { repository, query: queryOf(req, name, format), keys: readerKeys(req, groupKeys) };
    const made = await answers.answerAt(read, point.commitId, point.repoDate);
    const answer = made.answer;
    // Recorded once the answer is made: its context was then checked (a cached answer's too, the Context header being in its key).
    if (name === 'pull' || name === 'rawFile') deps.parts.reads.record(note);
    // A watch (If-None-Match and Wait) of the head whose answer the client holds: held until it changes.
    if (waitMs !== undefined && point.repoDate === undefined && notModified(req, answer.etag)) {
      hold({ req, res, requestId, etag: answer.etag }, read, made.groupKey, point.commitId, waitMs);
      return;
    }
    res.setHeader('ETag', answer.etag);
    if (notModified(req, answer.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    sendBytes(res, 200, answer.contentType, answer.bytes);
  };

  const serve =
    (endpoint: ReadEndpoint): PlainHandler =>
    (req, res, { pathname, params, route }) => {
      const path: ReadPath = { pathname, endpoint, account: params.account, repository: params.repository };
      const note: ReadNote = {};
      const requestId = beginRequest(deps, req, res, () => readFields(note), route.path);
      handle(req, res, path, requestId, note).catch((error: unknown) => answerError(deps, req, res, requestId, error));
    };
  return { serve, close: () => hub.close() };
}

/** A held watch as the route keeps it: what answering it takes. */
interface HeldRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  /** The ETag of the answer the client holds (answered again with a 304). */
  readonly etag: string;
}

/** The watch a response belongs to, for the one shared 'close' listener. */
const WATCH = Symbol('watch');
type WatchedResponse = ServerResponse & { [WATCH]?: HeldWatch };

/** The one 'close' listener of every held response (a listener per watcher would be a closure per watcher): the client went away. */
function responseClosed(this: WatchedResponse): void {
  this[WATCH]?.leave();
}
