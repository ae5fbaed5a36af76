/**
 * ConfigHub's read endpoints (contract section 7): `pull`, `rawFile`, `info`, `keyData` and
 * `export`, each as `/rest/<name>` (the `Client-Token` names the repository) and as
 * `/rest/<name>/{account}/{repository}`. Each answer is built once per commit and options (see
 * ReadCache), carries an ETag, and answers a matching `If-None-Match` with 304.
 */
import express, { type Request, type Response, type Router } from 'express';
import { parseRequestContext, type Context } from '../domain/context.js';
import { ServiceError } from '../service/errors.js';
import { exportBody, infoBody, keyDataBody, pullBody, rawFile, type ReadTarget } from '../service/read.js';
import { readPoint } from '../service/readPoint.js';
import { isoSeconds } from '../domain/dates.js';
import { requireRepository } from '../service/repositories.js';
import { tokenBelongsTo } from '../service/tokens.js';
import type { GitRepository } from '../store/repository.js';
import { listTags } from '../store/tags.js';
import type { AppContext } from './context.js';
import { booleanHeader, clientVersion, header } from './headers.js';
import { answerOf, ReadCache, type CachedAnswer } from './readCache.js';

/** The repository a read is allowed on, and its head as read once for this request. */
type Access = (req: Request) => Promise<{ repository: GitRepository; head: string }>;

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

export function readRoutes(ctx: AppContext): Router {
  const router = express.Router();
  const cache = new ReadCache();

  /** `/rest/<name>`: the token names the repository. */
  const byToken: Access = async (req) => {
    const presented = header(req, 'Client-Token');
    if (!presented) throw new ServiceError('unauthorized', `${req.path} needs a Client-Token header`);
    const token = ctx.tokens.authenticate(presented);
    const repository = requireRepository(ctx.registry, token.account, token.repository);
    return { repository, head: repository.head() };
  };

  /** `/rest/<name>/{account}/{repository}`: a token of that repository, or none if it allows token-free pull. */
  const byPath: Access = async (req) => {
    const repository = requireRepository(ctx.registry, String(req.params.account), String(req.params.repository));
    const head = repository.head();
    const presented = header(req, 'Client-Token');
    if (presented) {
      const token = ctx.tokens.authenticate(presented);
      if (!tokenBelongsTo(token, repository)) throw new ServiceError('forbidden', `the Client-Token is not a token of ${repository.fullName}`);
      return { repository, head };
    }
    const { settings } = await repository.snapshot(head);
    if (settings.isPrivate) throw new ServiceError('unauthorized', `repository ${repository.fullName} is private: reading it needs a Client-Token of its own`);
    if (!settings.tokenFreePull) throw new ServiceError('forbidden', `repository ${repository.fullName} does not allow reads without a Client-Token`);
    return { repository, head };
  };

  const handle = (name: string, endpoint: Endpoint, access: Access) => async (req: Request, res: Response) => {
    clientVersion(req);
    const { repository, head } = await access(req);
    const point = await readPoint(repository, head, header(req, 'Tag'), header(req, 'Repository-Date'));
    const key = [repository.gitdir, point.commitId, point.repoDate ?? '', name, ...endpoint.varies.map((h) => req.get(h) ?? '')].join('\0');
    let answer = endpoint.cacheable(req) ? cache.get(key) : undefined;
    if (!answer) {
      const target: ReadTarget = { repository, account: repository.account, name: repository.name, snapshot: await repository.snapshot(point.commitId), repoDate: point.repoDate };
      answer = await endpoint.build(req, target, isoSeconds(new Date()));
      if (endpoint.cacheable(req)) cache.set(key, answer);
    }
    res.set('ETag', answer.etag);
    if (notModified(req, answer.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(answer.contentType).send(answer.body);
  };

  for (const [name, endpoint] of Object.entries(ENDPOINTS)) {
    router.get(`/rest/${name}`, handle(name, endpoint, byToken));
    router.get(`/rest/${name}/:account/:repository`, handle(name, endpoint, byPath));
  }
  return router;
}
