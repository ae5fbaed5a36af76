/**
 * `git clone`, `git fetch` and `git push` over HTTP: `/git/{account}/{repository}.git/…`, served by
 * git's own `git http-backend` (smart HTTP, protocol v2 when the client asks for it). Access
 * follows the pull rules for a fetch and the push rules for a push, with the token as the password
 * of HTTP Basic (any user name), so git's own credential prompt and helpers work: a private
 * repository, or one without token-free pull, answers 401 with a Basic challenge until a token of
 * its own is given; a token that may only read gets 403 on a push. A push runs in a staging
 * repository and lands only through the server (service/write/gitPush.ts).
 *
 * Nothing reads the request body before this handler: the body streams into git as it arrives.
 * Errors here are plain text (git shows a text/plain body to its user as `remote: …` lines).
 */
import type { Request, Response } from 'express';
import { withoutPaths } from '../../domain/reasons.js';
import { AccessPolicy } from '../../service/access/accessPolicy.js';
import { ServiceError } from '../../service/errors.js';
import { requireRepository } from '../../service/admin/repositories.js';
import { serveGitService, type UploadPackEndpoint } from '../../disk/gitCli/gitHttpBackend.js';
import { stageReceive, type HookVerdict } from '../../disk/gitCli/receivePack.js';
import { ObjectStore } from '../../disk/objects/objectStore.js';
import {
  acceptPushedCommits,
  endPushTurn,
  parseRefCommands,
  takePushTurn,
  type GitPushCaller,
} from '../../service/write/gitPush.js';
import type { AccessGrant } from '../../service/access/accessPolicy.js';
import type { GitRepository } from '../../disk/repository.js';
import type { HttpDeps } from '../deps.js';
import type { Serving } from '../routeTable.js';
import { errorAnswer } from '../answer/errorAnswer.js';
import { HttpError } from '../answer/errors.js';
import { header } from '../answer/headers.js';
import { ErrorCode } from '../../domain/errors.js';
import { closeAfterDraining } from '../body/lingeringClose.js';

const GIT_ROUTE_PREFIX = '/git';

/** `/{account}/{name}.git/{endpoint}` (the `.git` may be left out), below the prefix. */
const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
/** A `Git-Protocol` header as git sends it (`version=2`); anything else is not passed on. */
const GIT_PROTOCOL = /^[A-Za-z0-9=:._,-]{1,100}$/;

/** How long one push may take, from its first byte to its answer. */
export const PUSH_TIME_LIMIT_MS = 120_000;

/** git's routes (every path under /git/, see routeTable.ts): the handler, and errors answered as text for git. */
export function gitRoutes(deps: HttpDeps): Serving {
  const policy = new AccessPolicy(deps.registry, deps.tokens, { hidePrivate: deps.hidePrivate });

  // The path is read here, whole (the `.git` may be left out; a wrong method is answered 405).
  const handle = async (req: Request, res: Response) => {
    const [path, query = ''] = req.url.slice(GIT_ROUTE_PREFIX.length).split(/\?(.*)/s);
    const { repository, endpoint, account, name } = locate(deps, path);
    if (!(await policy.isVisible(repository, basicPassword(req) ?? header(req, 'Client-Token'))))
      throw hiddenFromGit(account, name);
    const service = new URLSearchParams(query).get('service');
    if (endpoint === 'git-receive-pack' || (endpoint === 'info/refs' && service === 'git-receive-pack')) {
      await servePush(deps, policy, req, res, repository, endpoint);
      return;
    }
    if (endpoint === 'info/refs' && service !== 'git-upload-pack') {
      throw new HttpError(403, 'forbidden', "only git's smart HTTP protocol is served: use git 1.6.6 or later");
    }
    const method = endpoint === 'info/refs' ? 'GET' : 'POST';
    if (req.method !== method) throw new HttpError(405, 'method_not_allowed', `${endpoint} answers ${method} only`);
    await checkAccess(policy, req, repository);
    const outcome = await serveGitService(
      {
        service: 'git-upload-pack',
        endpoint: endpoint as UploadPackEndpoint,
        ...backendRequest(req, repository.gitdir, method),
      },
      res,
    );
    logProblem(deps, res, repository, outcome.stderr);
  };
  return {
    express: handle,
    answerError: (res, requestId, error) => answerGitError(deps, res as Response, requestId, error),
  };
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

function backendRequest(req: Request, gitdir: string, method: 'GET' | 'POST') {
  const protocol = header(req, 'Git-Protocol');
  return {
    gitdir,
    method,
    contentType: header(req, 'Content-Type'),
    contentEncoding: header(req, 'Content-Encoding'),
    contentLength: header(req, 'Content-Length'),
    gitProtocol: protocol && GIT_PROTOCOL.test(protocol) ? protocol : undefined,
    remoteAddr: req.socket.remoteAddress,
    body: req,
  };
}

function logProblem(deps: HttpDeps, res: Response, repository: GitRepository, stderr: string): void {
  if (!stderr) return;
  deps.logger.warn({
    reqId: res.locals.requestId,
    event: 'git-http-backend',
    repository: repository.fullName,
    problem: withoutPaths(stderr.split('\n')[0]),
  });
}

/**
 * A push: the ref advertisement (GET info/refs?service=git-receive-pack) or the push itself
 * (POST git-receive-pack), for a token that may write. Both run in a staging repository at the
 * head; the push is decided by the server when git runs the staging repository's hook.
 */
async function servePush(
  deps: HttpDeps,
  policy: AccessPolicy,
  req: Request,
  res: Response,
  repository: GitRepository,
  endpoint: 'info/refs' | 'git-receive-pack',
): Promise<void> {
  const method = endpoint === 'info/refs' ? 'GET' : 'POST';
  if (req.method !== method) throw new HttpError(405, 'method_not_allowed', `${endpoint} answers ${method} only`);
  const grant = await checkWriteAccess(policy, req, repository);
  const length = Number(header(req, 'Content-Length') ?? 0);
  if (length > deps.bodyLimit) {
    closeAfterDraining(req, res);
    throw new HttpError(
      413,
      'payload_too_large',
      `a push's pack may hold at most ${deps.bodyLimit} bytes; this one has ${length}: push fewer commits at a time`,
    );
  }
  // The pusher whose advertisement took a turn in the writers' queue (gitPush.ts): its token, or its address.
  const pusher = grant.token ? `token ${grant.token.hash}` : `address ${req.socket.remoteAddress}`;
  const caller: GitPushCaller = {
    forceKeyPush: grant.token?.forceKeyPush ?? false,
    ruleSet: grant.token?.ruleSet,
    tokenLabel: grant.token?.label,
    groupKeys: grant.groupKeys,
    pusher,
  };
  let decided: { ok: boolean; reason?: string; commitId?: string } | undefined;
  const decide = async (commands: string, quarantine: string): Promise<HookVerdict> => {
    const parsed = parseRefCommands(commands);
    if (!parsed) return { ok: false, message: 'cfghub: push refused: the ref updates could not be read\n' };
    const incoming = new ObjectStore(repository.gitdir, quarantine);
    try {
      const outcome = await acceptPushedCommits(repository, parsed, incoming, caller);
      if (!outcome.ok) {
        decided = { ok: false, reason: outcome.reason };
        return { ok: false, message: `cfghub: push refused: ${outcome.reason}\n` };
      }
      decided = { ok: true, commitId: outcome.commitId };
      staged.moveStagedHead(parsed[0].old);
      return {
        ok: true,
        message: `cfghub: main is now ${outcome.commitId} (${outcome.commits} commit${outcome.commits === 1 ? '' : 's'} checked)\n`,
      };
    } catch (error) {
      const answer = errorAnswer(deps, res.locals.requestId as string, error);
      decided = { ok: false, reason: answer.message };
      return { ok: false, message: `cfghub: push refused: ${answer.message}\n` };
    } finally {
      incoming.resetCache();
    }
  };
  // The advertisement takes the pusher's turn: the head it shows stays the head until the push is decided.
  const head = endpoint === 'info/refs' ? await takePushTurn(repository, pusher) : repository.head();
  const staged = await stageReceive(
    repository.gitdir,
    head,
    deps.bodyLimit,
    endpoint === 'git-receive-pack' ? decide : undefined,
  );
  try {
    const outcome = await serveGitService(
      {
        service: 'git-receive-pack',
        endpoint,
        env: staged.env,
        ...backendRequest(req, staged.gitdir, method),
        maxBodyBytes: deps.bodyLimit + 1024 * 1024,
        timeLimitMs: PUSH_TIME_LIMIT_MS,
      },
      res,
    );
    logProblem(deps, res, repository, outcome.stderr && !decided ? outcome.stderr : '');
    if (decided)
      deps.logger.info({
        reqId: res.locals.requestId,
        event: 'git-push',
        repository: repository.fullName,
        token: caller.tokenLabel,
        outcome: decided.ok ? 'applied' : 'refused',
        ...(decided.commitId ? { commit: decided.commitId } : {}),
        ...(decided.reason ? { reason: decided.reason } : {}),
      });
  } finally {
    staged.remove();
    if (endpoint === 'git-receive-pack') endPushTurn(repository, pusher);
  }
}

/** The push rules of the access policy: a missing or unknown token is challenged (401), a token that may only read is refused (403). */
async function checkWriteAccess(policy: AccessPolicy, req: Request, repository: GitRepository): Promise<AccessGrant> {
  const token = basicPassword(req) ?? header(req, 'Client-Token');
  const decision = await policy.decide({
    operation: 'write',
    account: repository.account,
    repository: repository.name,
    token,
    what: `${req.method} ${req.path}`,
  });
  if (decision.allowed) return decision;
  // git sends its credential only when challenged: without one, every refusal is the challenge.
  if (decision.status === 'unauthorized' || token === undefined)
    throw new HttpError(401, 'unauthorized', decision.reason);
  if (decision.status === 'not_found') throw new HttpError(404, 'not_found', decision.reason);
  throw new HttpError(403, 'forbidden', decision.reason);
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
