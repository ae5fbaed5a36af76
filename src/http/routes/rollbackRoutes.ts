/**
 * `POST /rest/revert` and `POST /rest/restore`, each also as
 * `…/{account}/{repository}`, with the access rules of a push. The commit to revert (`Commit`) or
 * the point to restore (`To`: a commit id, tag or date) and the `Change-Comment` come as headers
 * or in an optional JSON body (`{"commit"|"to": …, "changeComment": …}`). The answer is a push's:
 * 200 with the new commit (or, when nothing changes, the head) as the `ETag`; a revert that later
 * commits conflict with is a 409 naming the key or file, and nothing changes. `If-Match` names the
 * head the write must be made on (412 otherwise). With `Dry-Run: true` (and `Dry-Run-Contexts`)
 * nothing is written and the answer is a push's dry run: 200 with what it would do, context by
 * context (docs/schemas.md).
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { dryRunRestore, restore } from '../../service/history/restore.js';
import { dryRunRevert, revert, type RollbackCaller, type RollbackResult } from '../../service/history/revert.js';
import type { DryRunResult } from '../../service/write/dryRun.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Writer } from '../../service/write/writeGuard.js';
import type { HttpDeps } from '../deps.js';
import { badRequest } from '../answer/errors.js';
import { booleanHeader, clientVersion, dryRunContexts, header, ifMatch, sendJson } from '../answer/headers.js';
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
  /** The same, run dry: nothing written. */
  dryRun(
    repository: GitRepository,
    target: string,
    caller: RollbackCaller & Writer,
    contexts: readonly string[],
  ): Promise<DryRunResult>;
}

const OPERATIONS: Record<'revert' | 'restore', Operation> = {
  revert: {
    header: 'Commit',
    field: 'commit',
    describe: 'the full id of the commit to revert',
    run: revert,
    dryRun: dryRunRevert,
  },
  restore: {
    header: 'To',
    field: 'to',
    describe: 'the commit id, tag or ISO 8601 date to restore',
    run: restore,
    dryRun: dryRunRestore,
  },
};

/** The handler of `/rest/revert` and `/rest/restore`, in the form naming the repository by its token or by the path. */
export function rollbackRoutes(deps: HttpDeps): (name: 'revert' | 'restore', form: 'token' | 'path') => RequestHandler {
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
    const caller = {
      comment: header(req, 'Change-Comment') ?? body.changeComment ?? undefined,
      tokenLabel: token?.label,
      ruleSet: token?.ruleSet,
      applicationName: header(req, 'Application-Name'),
      clientVersion: version,
      ring: await callerRing(req, repository, groupKeys ?? []),
      ifMatch: ifMatch(req),
    };
    if (booleanHeader(req, 'Dry-Run')) {
      const answer = await operation.dryRun(repository, target, caller, dryRunContexts(req));
      deps.logger.info({
        reqId: res.locals.requestId,
        event: `${name}-dry-run`,
        repository: repository.fullName,
        outcome: answer.outcome,
      });
      sendJson(req, res, 200, answer);
      return;
    }
    const result = await operation.run(repository, target, caller);
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
  return (name, form) => handle(name, OPERATIONS[name], form === 'token' ? byToken : byPath);
}
