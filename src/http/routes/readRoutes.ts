/**
 * ConfigHub's read endpoints: `pull`, `rawFile`, `info`, `keyData` and
 * `export`, each as `/rest/<name>` (the `Client-Token` names the repository) and as
 * `/rest/<name>/{account}/{repository}`. Each answer is built once per commit and options (see
 * ReadCache), carries an ETag, and answers a matching `If-None-Match` with 304. The ETag of
 * pull and rawFile is of the content alone, and with `Wait` such a request is held until the
 * content changes (watchHub.ts); a pull also comes as properties, YAML or dotenv (pullFormat.ts).
 *
 * Served straight from node:http, without express (see app.ts for the measurement): a cached
 * answer costs a route match, the access check and one write: the head is known without a system
 * call while the head watch reports no change (see GitRepository.head).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRequestContext, type Context } from '../../domain/context.js';
import { ServiceError } from '../../service/errors.js';
import {
  exportBodySteps,
  infoBodySteps,
  keyDataBody,
  pullBodySteps,
  rawFile,
  type ReadTarget,
} from '../../service/read/read.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { readPoint } from '../../service/read/readPoint.js';
import { isoSeconds } from '../../lib/dates.js';
import { listTags } from '../../disk/records/tags.js';
import type { HttpDeps } from '../deps.js';
import { answerError } from '../answer/errorAnswer.js';
import { booleanHeader, clientVersion, header, sendBytes } from '../answer/headers.js';
import { readAccess } from '../access/readAccess.js';
import { answerOf, readCacheOfWorker, type CachedAnswer } from '../readCache.js';
import { jsonAnswer, pullAnswer } from '../answer/answerInSlices.js';
import { beginRequest } from '../requestLog.js';
import { pullFormat } from '../answer/pullFormat.js';
import { renderedPull } from '../answer/renderedPull.js';
import { waitMsOf } from '../watchRequest.js';
import { DEFAULT_MAX_WATCHERS, WatchHub, type HeldWatch, type WaitResult } from '../watchHub.js';
import { watcherCount } from '../metrics.js';
import type { PullFormat } from '../../domain/renderings.js';
import type { GroupKey } from '../../service/security/sealing.js';
import type { GitRepository } from '../../disk/repository.js';
import { readerKeyRing } from '../access/securityProfile.js';
import { pullMayDiffer } from '../../service/answers/changeReach.js';
import { telemetry } from '../../lib/telemetry.js';
import { headHolding } from '../../service/replication/replicaLink.js';
import { HttpError } from '../answer/errors.js';
import { applicationNameOf, readFields, type ReadNote } from './readNote.js';
import { recordRead } from './clients.js';

type Request = IncomingMessage;

/** `/rest/<endpoint>` or `/rest/<endpoint>/<account>/<repository>`, with an optional final slash. */
const READ_PATH = /^\/rest\/(pull|rawFile|info|keyData|export)(?:\/([^/]+)\/([^/]+))?\/?$/i;
/** Endpoint names by their lower case: paths match without regard to case, as express's routes did. */
export const READ_ENDPOINTS = ['pull', 'rawFile', 'info', 'keyData', 'export'] as const;
const ENDPOINT_NAMES = new Map(READ_ENDPOINTS.map((name) => [name.toLowerCase(), name]));

interface ReadPath {
  readonly pathname: string;
  readonly endpoint: string;
  /** Both present in the path form, both absent in the token form. */
  readonly account?: string;
  readonly repository?: string;
}

/** The read endpoint a request names, or undefined for any other request. */
function readPathOf(req: Request): ReadPath | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const url = req.url ?? '';
  const query = url.indexOf('?');
  const pathname = query === -1 ? url : url.slice(0, query);
  const match = READ_PATH.exec(pathname);
  if (!match) return undefined;
  return { pathname, endpoint: ENDPOINT_NAMES.get(match[1].toLowerCase())!, account: match[2], repository: match[3] };
}

interface Endpoint {
  /** Headers that change the answer, besides the commit read: part of the cache key. */
  readonly varies: readonly string[];
  /** False when the answer depends on more than the commit (tags can move without a commit). */
  cacheable(req: Request): boolean;
  build(
    req: Request,
    target: ReadTarget,
    generatedOn: string,
    format: PullFormat,
  ): Promise<CachedAnswer> | CachedAnswer;
}

/** Serialized in slices (answerInSlices.ts): an export of a large repository is megabytes of JSON. */
const json = (req: Request, body: unknown): Promise<CachedAnswer> => jsonAnswer(body, booleanHeader(req, 'Pretty'));

function requiredContext(req: Request, target: ReadTarget): Context {
  const text = header(req, 'Context');
  if (text === undefined) {
    throw new ServiceError(
      'invalid_argument',
      `the Context header is required: one item per level (${target.snapshot.settings.levels.join(';')})`,
    );
  }
  const parsed = parseRequestContext(text, target.snapshot.settings.levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', parsed.problem);
  return parsed.context;
}

const ENDPOINTS: Record<string, Endpoint> = {
  pull: {
    varies: ['Context', 'Include-Comments', 'Include-Value-Context', 'No-Properties', 'No-Files', 'Pretty'],
    cacheable: () => true,
    build: async (req, target, generatedOn, format) => {
      const context = requiredContext(req, target);
      if (format !== 'json') return renderedPull(target, context, format);
      // Key by key in slices: a pull of a large repository resolves every key of it.
      const slices = new TimeSlices();
      const body = await slices.run(
        pullBodySteps(target, header(req, 'Context') ?? '', context, {
          includeComments: booleanHeader(req, 'Include-Comments'),
          includeValueContext: booleanHeader(req, 'Include-Value-Context'),
          noProperties: booleanHeader(req, 'No-Properties'),
          noFiles: booleanHeader(req, 'No-Files'),
        }),
      );
      // The ETag is of the content alone: generatedOn varies without it. Made
      // in slices (answerInSlices.ts): the largest allowed answer is 8 Mi characters of files.
      return pullAnswer(body, booleanHeader(req, 'Pretty'), generatedOn, slices);
    },
  },
  rawFile: {
    varies: ['Context', 'File'],
    cacheable: () => true,
    build: (req, target) => {
      const path = header(req, 'File');
      if (path === undefined)
        throw new ServiceError('invalid_argument', 'the File header is required: the path of the file to read');
      const file = rawFile(target, path, requiredContext(req, target));
      return answerOf(file.content, file.contentType);
    },
  },
  info: {
    varies: ['Context-Elements', 'Context-Labels', 'Files', 'Files-Glob', 'Tags', 'Pretty'],
    cacheable: (req) => !booleanHeader(req, 'Tags'),
    build: async (req, target, generatedOn) => {
      const labels = header(req, 'Context-Labels');
      const glob = header(req, 'Files-Glob');
      const tags = booleanHeader(req, 'Tags') ? await listTags(target.repository) : undefined;
      const body = await new TimeSlices().run(
        infoBodySteps(target, {
          contextElements:
            labels !== undefined
              ? labels
                  .split(',')
                  .map((l) => l.trim())
                  .filter(Boolean)
              : booleanHeader(req, 'Context-Elements'),
          files: glob ?? booleanHeader(req, 'Files'),
          tags,
        }),
      );
      const { account, repository, ...rest } = body;
      return json(req, { account, repository, generatedOn, ...rest });
    },
  },
  keyData: {
    varies: ['KeyName', 'Pretty'],
    cacheable: () => true,
    build: (req, target) => {
      const name = header(req, 'KeyName');
      if (name === undefined) throw new ServiceError('invalid_argument', 'the KeyName header is required');
      return json(req, keyDataBody(target, name));
    },
  },
  export: {
    varies: ['Omit-Values', 'Omit-Files', 'Pretty'],
    cacheable: () => true,
    build: async (req, target) =>
      json(
        req,
        await new TimeSlices().run(
          exportBodySteps(target, {
            omitValues: booleanHeader(req, 'Omit-Values'),
            omitFiles: booleanHeader(req, 'Omit-Files'),
          }),
        ),
      ),
  },
};

/** The ETags `If-None-Match` names (weak ones as strong), or true for `*`. */
function heldEtags(req: Request): readonly string[] | true {
  const value = header(req, 'If-None-Match');
  if (value === undefined) return [];
  const tags = value.split(',').map((tag) => tag.trim());
  return tags.includes('*') ? true : tags.map((tag) => tag.replace(/^W\//, ''));
}

/** For a held pull: whether its answer may differ between two heads (service/answers/changeReach.ts). */
const pullReach = (repository: GitRepository, contextText: string) => (from: string, to: string) =>
  pullMayDiffer(repository, from, to, contextText);

/** Whether `If-None-Match` names this ETag (or `*`). */
function notModified(req: Request, etag: string): boolean {
  const held = heldEtags(req);
  return held === true || held.includes(etag);
}

/**
 * The read endpoints as a handler that takes a request if it names one (returning true) and
 * leaves every other request to the caller (returning false).
 */
export type ReadRoutes = ((req: IncomingMessage, res: ServerResponse) => boolean) & {
  /** Ends every held watch (the server is shutting down). */
  closeWatches(): void;
};

/**
 * The read endpoints as a handler that takes a request if it names one (returning true) and
 * leaves every other request to the caller (returning false).
 */
export function readRoutes(deps: HttpDeps): ReadRoutes {
  const cache = readCacheOfWorker(deps.workers);
  /** How a held watch is answered: the new answer (200), nothing new (304), or the error making it. */
  const respond = (held: HeldWatch, result: WaitResult) => {
    const { req, res } = held;
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
    sendBytes(res, 200, result.answer.contentType, result.answer.body);
  };
  const hub = new WatchHub(deps.maxWatchers ?? DEFAULT_MAX_WATCHERS, respond);
  // One line per wake (not per watcher): how many were answered, and how long the server took.
  hub.onWake = (wake) =>
    deps.logger.info({
      event: 'watch-wake',
      repository: wake.repository,
      answersMade: wake.answersMade,
      woken: wake.woken,
      durationMs: Math.round(wake.ms * 10) / 10,
    });
  watcherCount(
    deps,
    () => hub.size,
    () => hub.answersMade,
  ); // cfghub_watchers and cfghub_watch_answers_made_total in /metrics

  const access = readAccess(deps);

  /**
   * A pull's answer at the commit its group was last answered at, when the changes since do not
   * reach its context (service/answers/changeReach.ts): after a push, the contexts it did not change are
   * served without their answers being made again. Any doubt: undefined, and the answer is made.
   */
  const carried = async (
    req: Request,
    repository: GitRepository,
    commitId: string,
    groupKey: string,
    keyAt: (commitId: string) => string,
  ) => {
    const last = cache.lastCommitOf(groupKey);
    if (last === undefined || last === commitId) return undefined;
    const answer = cache.get(keyAt(last));
    if (!answer) return undefined;
    try {
      return (await pullMayDiffer(repository, last, commitId, header(req, 'Context') ?? '')) ? undefined : answer;
    } catch {
      return undefined;
    }
  };

  /** The answer of a request at a commit, made once per commit and options (the cache), and what groups it with its like. */
  const answerAt = async (
    req: Request,
    name: string,
    format: PullFormat,
    repository: GitRepository,
    commitId: string,
    repoDate: string | undefined,
    groupKeys: readonly GroupKey[],
  ) => {
    const endpoint = ENDPOINTS[name];
    // Answers differ by the security groups the caller unlocked: the key names them (by a hash), never a password.
    const ring = await readerKeyRing(req, repository, commitId, groupKeys);
    const options = [name, format, ring.fingerprint(), ...endpoint.varies.map((h) => header(req, h) ?? '')];
    const keyAt = (at: string) => [repository.gitdir, at, repoDate ?? '', ...options].join('\0');
    const groupKey = [repository.gitdir, ...options].join('\0');
    const make = async () => {
      const target: ReadTarget = {
        repository,
        account: repository.account,
        name: repository.name,
        snapshot: await repository.snapshot(commitId),
        repoDate,
        ring,
      };
      return endpoint.build(req, target, isoSeconds(new Date()), format);
    };
    if (!endpoint.cacheable(req)) return { answer: await make(), groupKey };
    const key = keyAt(commitId);
    let answer = cache.get(key);
    if (answer) {
      telemetry.readCache('hit');
      return { answer, groupKey };
    }
    // Only pulls of the present carry: a body of the past names its date, and other endpoints are not weighed.
    const lastOfGroup = name === 'pull' && repoDate === undefined ? { key: groupKey, commitId } : undefined;
    if (lastOfGroup && (answer = await carried(req, repository, commitId, groupKey, keyAt)))
      telemetry.readCache('carried');
    else {
      telemetry.readCache('miss');
      answer = await make();
    }
    cache.set(key, answer, lastOfGroup);
    return { answer, groupKey };
  };

  /** A primary's head for a read with `Min-Commit`: the commit must be the head or one of its ancestors. */
  const headWithCommit = async (repository: GitRepository, commit: string): Promise<string> => {
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
    const made = await answerAt(req, name, format, repository, point.commitId, point.repoDate, groupKeys);
    const answer = made.answer;
    // Recorded once the answer is made: its context was then checked (a cached answer's too, the Context header being in its key).
    if (name === 'pull' || name === 'rawFile') recordRead(deps, note);
    // A watch (If-None-Match and Wait) of the head whose answer the client holds: held until it changes.
    if (waitMs !== undefined && point.repoDate === undefined && notModified(req, answer.etag)) {
      hub.hold({
        req,
        res,
        requestId,
        etag: answer.etag,
        repository,
        groupKey: made.groupKey,
        answerAt: async (commitId) =>
          (await answerAt(req, name, format, repository, commitId, undefined, groupKeys)).answer,
        // A pull's answer is its context's resolved keys and files (in any format): a change of keys resolving for other contexts only leaves it as it was.
        ...(name === 'pull' ? { mayDiffer: pullReach(repository, header(req, 'Context') ?? '') } : {}),
        holds: heldEtags(req),
        head: point.commitId,
        waitMs,
      });
      return;
    }
    res.setHeader('ETag', answer.etag);
    if (notModified(req, answer.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    sendBytes(res, 200, answer.contentType, answer.body);
  };

  const routes = (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = readPathOf(req);
    if (!path) return false;
    const note: ReadNote = {};
    const requestId = beginRequest(
      deps,
      req,
      res,
      () => readFields(note),
      `/rest/${path.endpoint}${path.account === undefined ? '' : '/:account/:repository'}`,
    );
    handle(req, res, path, requestId, note).catch((error: unknown) => answerError(deps, req, res, requestId, error));
    return true;
  };
  return Object.assign(routes, { closeWatches: () => hub.close() });
}
