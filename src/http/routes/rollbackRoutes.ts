/**
 * `POST /rest/revert` and `POST /rest/restore`, each also as
 * `…/{account}/{repository}`, with the access rules of a push. The commit to revert (`Commit`) or
 * the point to restore (`To`: a commit id, tag or date) and the `Change-Comment` come as headers
 * or in an optional JSON body (`{"commit"|"to": …, "changeComment": …}`). The answer is a push's:
 * 200 with the new commit (or, when nothing changes, the head) as the `ETag`; a revert that later
 * commits conflict with is a 409 naming the key or file, and nothing changes.
 */
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { restore } from '../../service/history/restore.js';
import { revert, type RollbackCaller, type RollbackResult } from '../../service/history/revert.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Writer } from '../../service/write/writeGuard.js';
import type { HttpDeps } from '../deps.js';
import { badRequest } from '../answer/errors.js';
import { clientVersion, header } from '../answer/headers.js';
import { bodyReader, parseJson, requireJsonContentType } from '../body/jsonBody.js';
import { pushAccess, type WriteAccess } from '../access/pushAccess.js';
import { readerKeyRing } from '../access/securityProfile.js';
import { KeyRing } from '../../service/security/keyRing.js';
import type { GroupKey } from '../../service/security/sealing.js';
import { LayoutError } from '../../layout/errors.js';

/**
 * The groups the caller unlocked at the head (Security-Profile-Auth, the token's groups), derived
 * here, outside the repository's queue; none when the head cannot be read (a restore repairing it
 * then involves no group).
 */
async function callerRing(req: Request, repository: GitRepository, tokenKeys: readonly GroupKey[]): Promise<KeyRing> {
  try {
    return await readerKeyRing(req, repository, repository.head(), tokenKeys);
  } catch (error) {
    if (error instanceof LayoutError) return KeyRing.EMPTY;
    throw error;
  }
}

export const rollbackBodySchema = z.strictObject({
  commit: z.string().optional(),
  to: z.string().optional(),
  changeComment: z.string().nullable().optional(),
});

interface Operation {
  /** The header and body field naming what to roll back. */
  readonly header: 'Commit' | 'To';
  readonly field: 'commit' | 'to';
  readonly describe: string;
  run(repository: GitRepository, target: string, caller: RollbackCaller & Writer): Promise<RollbackResult>;
}

const OPERATIONS: Record<string, Operation> = {
  revert: { header: 'Commit', field: 'commit', describe: 'the full id of the commit to revert', run: revert },
  restore: { header: 'To', field: 'to', describe: 'the commit id, tag or ISO 8601 date to restore', run: restore },
};

export function rollbackRoutes(deps: HttpDeps): Router {
  const router = express.Router();
  const readBody = bodyReader(deps.bodyLimit);

  /** The optional JSON body: empty, or an object of the schema's shape sent as application/json. */
  const bodyOf = async (req: Request, res: Response): Promise<z.infer<typeof rollbackBodySchema>> => {
    const raw = await readBody(req, res);
    if (raw.length === 0) return {};
    requireJsonContentType(req, 'a body');
    const parsed = rollbackBodySchema.safeParse(parseJson(raw));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw badRequest(`the body is malformed: ${issue.path.join('.') || 'body'}: ${issue.message}`);
    }
    return parsed.data;
  };

  const handle = (name: string, operation: Operation, access: WriteAccess) => async (req: Request, res: Response) => {
    const version = clientVersion(req);
    const { repository, token, groupKeys } = await access(req);
    const body = await bodyOf(req, res);
    const target = header(req, operation.header) ?? body[operation.field];
    if (target === undefined)
      throw badRequest(
        `the ${operation.header} header (or "${operation.field}" in the body) is required: ${operation.describe}`,
      );
    const result = await operation.run(repository, target, {
      comment: header(req, 'Change-Comment') ?? body.changeComment ?? undefined,
      tokenLabel: token?.label,
      ruleSet: token?.ruleSet,
      applicationName: header(req, 'Application-Name'),
      clientVersion: version,
      ring: await callerRing(req, repository, groupKeys ?? []),
    });
    deps.logger.info({
      reqId: res.locals.requestId,
      event: name,
      repository: repository.fullName,
      outcome: result.kind,
      commit: result.commitId,
    });
    res.status(200).set('ETag', `"${result.commitId}"`).set('Content-Length', '0').end();
  };

  const { byToken, byPath } = pushAccess(deps);
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    router.post(`/rest/${name}`, handle(name, operation, byToken));
    router.post(`/rest/${name}/:account/:repository`, handle(name, operation, byPath));
  }
  return router;
}
