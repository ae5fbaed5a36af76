/**
 * ConfigHub's read endpoints (contract section 7): `pull`, `rawFile`, `info`, `keyData` and
 * `export`, each as `/rest/<name>` (the `Client-Token` names the repository) and as
 * `/rest/<name>/{account}/{repository}`. Each answer is built once per commit and options (see
 * ReadCache), carries an ETag, and answers a matching `If-None-Match` with 304.
 *
 * Served straight from node:http, without express (see app.ts for the measurement): a cached
 * answer costs a route match, the access check, a stat of the head ref and one write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRequestContext, type Context } from '../domain/context.js';
import { ServiceError } from '../service/errors.js';
import { exportBody, infoBody, keyDataBody, pullBody, rawFile, type ReadTarget } from '../service/read.js';
import { readPoint } from '../service/readPoint.js';
import { isoSeconds } from '../domain/dates.js';
import { listTags } from '../store/tags.js';
import type { AppContext } from './context.js';
import { answerError } from './errorAnswer.js';
import { booleanHeader, clientVersion, header, sendBytes } from './headers.js';
import { readAccess } from './readAccess.js';
import { answerOf, ReadCache, type CachedAnswer } from './readCache.js';
import { beginRequest } from './requestLog.js';
import { readerKeyRing } from './securityProfile.js';

type Request = IncomingMessage;

/** `/rest/<endpoint>` or `/rest/<endpoint>/<account>/<repository>`, with an optional final slash. */
const READ_PATH = /^\/rest\/(pull|rawFile|info|keyData|export)(?:\/([^/]+)\/([^/]+))?\/?$/i;
/** Endpoint names by their lower case: paths match without regard to case, as express's routes did. */
const ENDPOINT_NAMES = new Map(['pull', 'rawFile', 'info', 'keyData', 'export'].map((name) => [name.toLowerCase(), name]));

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
  build(req: Request, target: ReadTarget, generatedOn: string): Promise<CachedAnswer> | CachedAnswer;
}

const json = (req: Request, body: unknown): CachedAnswer =>
  answerOf(booleanHeader(req, 'Pretty') ? JSON.stringify(body, null, 2) : JSON.stringify(body), 'application/json');

function requiredContext(req: Request, target: ReadTarget): Context {
  const text = header(req, 'Context');
  if (text === undefined) {
    throw new ServiceError('invalid_argument', `the Context header is required: one item per level (${target.snapshot.settings.levels.join(';')})`);
  }
  const parsed = parseRequestContext(text, target.snapshot.settings.levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', parsed.problem);
  return parsed.context;
}

const ENDPOINTS: Record<string, Endpoint> = {
  pull: {
    varies: ['Context', 'Include-Comments', 'Include-Value-Context', 'No-Properties', 'No-Files', 'Pretty'],
    cacheable: () => true,
    build: (req, target, generatedOn) =>
      json(req, {
        ...pullBody(target, header(req, 'Context') ?? '', requiredContext(req, target), {
          includeComments: booleanHeader(req, 'Include-Comments'),
          includeValueContext: booleanHeader(req, 'Include-Value-Context'),
          noProperties: booleanHeader(req, 'No-Properties'),
          noFiles: booleanHeader(req, 'No-Files'),
        }),
        generatedOn,
      }),
  },
  rawFile: {
    varies: ['Context', 'File'],
    cacheable: () => true,
    build: (req, target) => {
      const path = header(req, 'File');
      if (path === undefined) throw new ServiceError('invalid_argument', 'the File header is required: the path of the file to read');
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
      const body = infoBody(target, {
        contextElements: labels !== undefined ? labels.split(',').map((l) => l.trim()).filter(Boolean) : booleanHeader(req, 'Context-Elements'),
        files: glob ?? booleanHeader(req, 'Files'),
        tags: booleanHeader(req, 'Tags') ? await listTags(target.repository) : undefined,
      });
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
    build: (req, target) => json(req, exportBody(target, { omitValues: booleanHeader(req, 'Omit-Values'), omitFiles: booleanHeader(req, 'Omit-Files') })),
  },
};

/** Whether `If-None-Match` names this ETag (or `*`). */
function notModified(req: Request, etag: string): boolean {
  const value = header(req, 'If-None-Match');
  if (value === undefined) return false;
  return value.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}

/**
 * The read endpoints as a handler that takes a request if it names one (returning true) and
 * leaves every other request to the caller (returning false).
 */
export function readRoutes(ctx: AppContext): (req: IncomingMessage, res: ServerResponse) => boolean {
  const cache = new ReadCache();

  const access = readAccess(ctx);

  const handle = async (req: Request, res: ServerResponse, path: ReadPath): Promise<void> => {
    const name = path.endpoint;
    const endpoint = ENDPOINTS[name];
    clientVersion(req);
    // decodeURIComponent throws URIError on a malformed escape: answered 400.
    const named = path.account === undefined ? path : { ...path, account: decodeURIComponent(path.account), repository: decodeURIComponent(path.repository!) };
    const { repository, head, groupKeys } = await access(req, named);
    const point = await readPoint(repository, head, header(req, 'Tag'), header(req, 'Repository-Date'));
    // Answers differ by the security groups the caller unlocked: the key names them (by a hash), never a password.
    const ring = await readerKeyRing(req, repository, point.commitId, groupKeys ?? []);
    const key = [repository.gitdir, point.commitId, point.repoDate ?? '', name, ring.fingerprint(), ...endpoint.varies.map((h) => header(req, h) ?? '')].join('\0');
    let answer = endpoint.cacheable(req) ? cache.get(key) : undefined;
    if (!answer) {
      const target: ReadTarget = { repository, account: repository.account, name: repository.name, snapshot: await repository.snapshot(point.commitId), repoDate: point.repoDate, ring };
      answer = await endpoint.build(req, target, isoSeconds(new Date()));
      if (endpoint.cacheable(req)) cache.set(key, answer);
    }
    res.setHeader('ETag', answer.etag);
    if (notModified(req, answer.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    sendBytes(res, 200, answer.contentType, answer.body);
  };

  return (req, res) => {
    const path = readPathOf(req);
    if (!path) return false;
    const requestId = beginRequest(ctx, req, res);
    handle(req, res, path).catch((error: unknown) => answerError(ctx, req, res, requestId, error));
    return true;
  };
}
