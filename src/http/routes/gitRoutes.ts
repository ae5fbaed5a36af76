/**
 * `git clone` and `git fetch` over HTTP: `/git/{account}/{repository}.git/…`, served by git's own
 * `git http-backend` (smart HTTP, protocol v2 when the client asks for it). Read-only: a push gets
 * 403. Access follows the pull rules, with the token as the password of HTTP Basic (any user
 * name), so git's own credential prompt and helpers work: a private repository, or one without
 * token-free pull, answers 401 with a Basic challenge until a token of its own is given.
 *
 * Mounted before anything reads the request body: the body streams into git as it arrives.
 * Errors here are plain text (git shows a text/plain body to its user as `remote: …` lines).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { withoutPaths } from '../../domain/reasons.js';
import { AccessPolicy } from '../../service/access/accessPolicy.js';
import { ServiceError } from '../../service/errors.js';
import { requireRepository } from '../../service/admin/repositories.js';
import { serveUploadPack, type UploadPackEndpoint } from '../../disk/gitCli/gitHttpBackend.js';
import type { GitRepository } from '../../disk/repository.js';
import type { HttpDeps } from '../deps.js';
import { errorAnswer } from '../answer/errorAnswer.js';
import { HttpError } from '../answer/errors.js';
import { header } from '../answer/headers.js';
import { requireVisible } from '../access/hidePrivate.js';
import { ErrorCode } from '../../domain/errors.js';

const GIT_ROUTE_PREFIX = '/git';

/** `/{account}/{name}.git/{endpoint}` (the `.git` may be left out), below the prefix. */
const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
/** A `Git-Protocol` header as git sends it (`version=2`); anything else is not passed on. */
const GIT_PROTOCOL = /^[A-Za-z0-9=:._,-]{1,100}$/;

const readOnly = () =>
  new HttpError(
    403,
    'forbidden',
    'this repository is read-only over git: change it through the REST API (POST /rest/push)',
  );

export function gitRoutes(deps: HttpDeps): Router {
  const router = express.Router();
  const policy = new AccessPolicy(deps.registry, deps.tokens, { hidePrivate: deps.hidePrivate });

  // Not mounted at the prefix (express would rewrite req.url and the logged path): matched here.
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    if (!req.url.startsWith(`${GIT_ROUTE_PREFIX}/`)) return next();
    res.locals.gitProtocolRoute = true;
    const [path, query = ''] = req.url.slice(GIT_ROUTE_PREFIX.length).split(/\?(.*)/s);
    const { repository, endpoint, account, name } = locate(deps, path);
    if (deps.hidePrivate) await requireVisibleToGit(deps, req, repository, account, name);
    const service = new URLSearchParams(query).get('service');
    if (endpoint === 'git-receive-pack' || service === 'git-receive-pack') throw readOnly();
    if (endpoint === 'info/refs' && service !== 'git-upload-pack') {
      throw new HttpError(403, 'forbidden', "only git's smart HTTP protocol is served: use git 1.6.6 or later");
    }
    const method = endpoint === 'info/refs' ? 'GET' : 'POST';
    if (req.method !== method) throw new HttpError(405, 'method_not_allowed', `${endpoint} answers ${method} only`);
    await checkAccess(policy, req, repository);

    const protocol = header(req, 'Git-Protocol');
    const outcome = await serveUploadPack(
      {
        gitdir: repository.gitdir,
        endpoint,
        method,
        contentType: header(req, 'Content-Type'),
        contentEncoding: header(req, 'Content-Encoding'),
        contentLength: header(req, 'Content-Length'),
        gitProtocol: protocol && GIT_PROTOCOL.test(protocol) ? protocol : undefined,
        remoteAddr: req.socket.remoteAddress,
        body: req,
      },
      res,
    );
    if (outcome.stderr) {
      deps.logger.warn({
        reqId: res.locals.requestId,
        event: 'git-http-backend',
        repository: repository.fullName,
        problem: withoutPaths(outcome.stderr.split('\n')[0]),
      });
    }
  });

  return router;
}

function locate(
  deps: HttpDeps,
  path: string,
): { repository: GitRepository; endpoint: UploadPackEndpoint | 'git-receive-pack'; account: string; name: string } {
  // Names are letters, digits and `-._`: a `%`, a backslash or an empty or dot segment is never
  // part of a repository's address, and is refused before anything is looked up.
  if (
    /[%\\]/.test(path) ||
    path
      .split('/')
      .slice(1)
      .some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    throw new HttpError(
      400,
      'bad_request',
      'a git URL is /git/{account}/{repository}.git, without encoded or relative segments',
    );
  }
  const match = GIT_PATH.exec(path);
  if (!match) throw new HttpError(404, 'not_found', 'no such git endpoint: clone /git/{account}/{repository}.git');
  let repository: GitRepository;
  try {
    repository = requireRepository(deps.registry, match[1], match[2]);
  } catch (error) {
    if (deps.hidePrivate && error instanceof ServiceError && error.code === ErrorCode.NotFound)
      throw hiddenFromGit(match[1], match[2]);
    throw error;
  }
  return {
    repository,
    endpoint: match[3] as UploadPackEndpoint | 'git-receive-pack',
    account: match[1],
    name: match[2],
  };
}

/**
 * Under --hide-private an unknown repository and a private one without a token of its own get the
 * same answer: a 401 challenge (not a 404), or git would never send the token a URL or credential
 * helper holds, since it sends credentials only when challenged.
 */
function hiddenFromGit(account: string, name: string): HttpError {
  return new HttpError(
    401,
    'unauthorized',
    `repository ${account}/${name} does not exist, or reading it needs a token of its own: give one as the password`,
  );
}

async function requireVisibleToGit(
  deps: HttpDeps,
  req: Request,
  repository: GitRepository,
  account: string,
  name: string,
): Promise<void> {
  try {
    await requireVisible(deps, req, repository, account, name, basicPassword(req) ?? header(req, 'Client-Token'));
  } catch (error) {
    if (error instanceof ServiceError && error.code === ErrorCode.NotFound) throw hiddenFromGit(account, name);
    throw error;
  }
}

/**
 * The pull rules of the access policy, but every refusal is a 401 challenge, so git asks for (or
 * its helper forgets) the credential instead of stopping at a 403 it cannot act on.
 */
async function checkAccess(policy: AccessPolicy, req: Request, repository: GitRepository): Promise<void> {
  const decision = await policy.decide({
    operation: 'clone',
    account: repository.account,
    repository: repository.name,
    token: basicPassword(req) ?? header(req, 'Client-Token'),
    what: `${req.method} ${req.path}`,
  });
  if (!decision.allowed) throw new HttpError(401, 'unauthorized', decision.reason);
}

/** The token from `Authorization: Basic …`: the password, or the user name when the password is empty. */
function basicPassword(req: Request): string | undefined {
  const value = header(req, 'Authorization');
  const match = value && /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(value);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  return password || user || undefined;
}

/** An error on the git route: plain text that git shows its user, and a Basic challenge on 401. */
export function answerGitError(deps: HttpDeps, res: Response, requestId: string, error: unknown): void {
  const answer = errorAnswer(deps, requestId, error);
  if (res.headersSent) {
    res.destroy(); // mid-stream: cut the answer so git sees a failed transfer, not a short one
    return;
  }
  if (answer.status === 401) res.set('WWW-Authenticate', 'Basic realm="cfghub"');
  res.status(answer.status).type('text/plain; charset=utf-8').send(`cfghub: ${answer.message}\n`);
}
