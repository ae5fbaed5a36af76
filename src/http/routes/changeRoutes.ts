/**
 * Change requests over HTTP (service/changes/): `POST /rest/changes/{account}/{repository}` takes
 * a push body with a `title` and stores it as a change request; list, show (with what applying it
 * would do now, context by context), approve, apply and close. A repository token
 * (`Client-Token`) acts as its label, and so does an admin token (`Authorization: Bearer`); the
 * access policy decides as for a push (writes) or a pull (list, show), --hide-private included.
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { findLimitProblemSteps } from '../../domain/pushRequest.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { GitRepository } from '../../disk/repository.js';
import type { AdminTokenService } from '../../service/admin/adminTokens.js';
import { requireRepository } from '../../service/admin/repositories.js';
import {
  applyChangeRequest,
  approveChangeRequest,
  closeChangeRequest,
  createChangeRequest,
  createRollbackChangeRequest,
  listChangeRequests,
  showChangeRequest,
  type ChangeActor,
  type ChangeStatus,
  type RollbackRequest,
} from '../../service/changes/changeRequests.js';
import type { HttpDeps } from '../deps.js';
import { badRequest, HttpError } from '../answer/errors.js';
import { clientVersion, header, sendJson } from '../answer/headers.js';
import { bodyReader, requireJsonContentType } from '../body/jsonBody.js';
import { parseJsonInSlices } from '../body/jsonBodyInSlices.js';
import { parsePushBodySteps, pushBodyDescription } from '../../api/pushBody.js';
import { plainWriteAccess } from '../access/pushAccess.js';
import { readAccess } from '../access/readAccess.js';
import { bearer } from './adminRoutes.js';

/** The body of a new change request: a push body and its title; or, instead of the push body, a revert or restore. */
export const changeRequestBody = pushBodyDescription.extend({
  title: z.string().describe('one line naming the change'),
  revert: z
    .string()
    .optional()
    .describe('instead of a push body: the commit to revert (with only title and changeComment beside it)'),
  restore: z
    .string()
    .optional()
    .describe(
      'instead of a push body: the commit id, tag or date to restore (with only title and changeComment beside it)',
    ),
});

const event = z.object({ by: z.string(), at: z.string() });
export const changeRequestRecord = z.object({
  id: z.number().int(),
  title: z.string(),
  comment: z.string(),
  author: z.string(),
  created: z.string(),
  status: z.enum(['open', 'applied', 'closed']),
  approvals: z.array(event),
  base: z.string(),
  commit: z.string(),
  closed: event.optional(),
  applied: event.extend({ commit: z.string() }).optional(),
});

/** What a change route does: its handler's name in changeRoutes. */
type ChangeAction = 'create' | 'list' | 'show' | 'approve' | 'close' | 'apply';

export interface ChangeRoute {
  readonly action: ChangeAction;
  readonly method: 'get' | 'post';
  readonly path: string;
  readonly summary: string;
  readonly operation: 'read' | 'write';
  readonly status: number;
  readonly body?: z.ZodType;
  readonly answer: z.ZodType;
  readonly query?: Record<string, string>;
  readonly errors: readonly number[];
}

const BASE = '/rest/changes/:account/:repository';

export const CHANGE_ROUTES: readonly ChangeRoute[] = [
  {
    action: 'create',
    method: 'post',
    path: BASE,
    summary: 'a change request: a push body with a title, kept under refs/changes/<n> until applied or closed',
    operation: 'write',
    status: 201,
    body: changeRequestBody,
    answer: changeRequestRecord,
    errors: [400, 401, 403, 404, 409, 413, 415, 503],
  },
  {
    action: 'list',
    method: 'get',
    path: BASE,
    summary: 'the change requests, newest first',
    operation: 'read',
    status: 200,
    query: { status: 'only those open, applied or closed' },
    answer: z.object({ account: z.string(), repository: z.string(), changes: z.array(changeRequestRecord.partial()) }),
    errors: [400, 401, 403, 404],
  },
  {
    action: 'show',
    method: 'get',
    path: `${BASE}/:id`,
    summary: 'one change request, with what applying it would do on the current head, context by context',
    operation: 'read',
    status: 200,
    answer: changeRequestRecord.extend({
      requiredApprovals: z.object({ rules: z.array(z.string()), needed: z.number().int(), approved: z.boolean() }),
      preview: z.looseObject({}).optional().describe('a dry run of the apply (as Dry-Run: true answers a push)'),
    }),
    errors: [400, 401, 403, 404, 409],
  },
  ...(['approve', 'close'] as const).map((action): ChangeRoute => ({
    action,
    method: 'post',
    path: `${BASE}/:id/${action}`,
    summary:
      action === 'approve'
        ? "approve a change request (not the author's own)"
        : 'close a change request without applying it',
    operation: 'write',
    status: 200,
    answer: changeRequestRecord,
    errors: [400, 401, 403, 404, 409, 503],
  })),
  {
    action: 'apply',
    method: 'post',
    path: `${BASE}/:id/apply`,
    summary:
      'apply a change request: merged onto the head key by key and context by context, with Approved-By trailers; a conflict is refused naming each key and context',
    operation: 'write',
    status: 200,
    answer: z.object({ change: changeRequestRecord, commit: z.string() }),
    errors: [400, 401, 403, 404, 409, 503],
  },
];

/** A change request's revert or restore: one of the two, beside only the title and a changeComment. */
function rollbackOf(revert: unknown, restore: unknown, rest: Record<string, unknown>): RollbackRequest {
  if (revert !== undefined && restore !== undefined)
    throw badRequest('the change request is malformed: revert and restore: name one of them');
  const [kind, target] = revert !== undefined ? (['revert', revert] as const) : (['restore', restore] as const);
  if (typeof target !== 'string' || !target.trim())
    throw badRequest(
      `the change request is malformed: ${kind}: a commit${kind === 'restore' ? ', tag or date' : ''} (text) is required`,
    );
  const { changeComment, ...others } = rest;
  const other = Object.keys(others)[0];
  if (other !== undefined)
    throw badRequest(
      `the change request is malformed: ${other}: a ${kind} change request takes only title and changeComment`,
    );
  if (changeComment !== undefined && changeComment !== null && typeof changeComment !== 'string')
    throw badRequest('the change request is malformed: changeComment: text is required');
  return { kind, target, comment: changeComment ?? undefined };
}

function changeId(req: Request): number {
  const text = String(req.params.id);
  if (!/^[1-9][0-9]{0,8}$/.test(text))
    throw badRequest(`the change request id must be a positive whole number, not ${text}`);
  return Number(text);
}

const STATUSES = ['open', 'applied', 'closed'];

/** The change routes' handlers, by their action (CHANGE_ROUTES). */
export function changeRoutes(deps: HttpDeps, adminTokens: AdminTokenService): Record<ChangeAction, RequestHandler> {
  const readBody = bodyReader(deps.bodyLimit);
  const writes = plainWriteAccess(deps);
  const reads = readAccess(deps);

  /** The repository and who acts: an admin token as its label, else the access policy's grant. */
  const access = async (
    req: Request,
    operation: 'read' | 'write',
  ): Promise<{ repository: GitRepository; actor: ChangeActor }> => {
    const provenance = { applicationName: header(req, 'Application-Name'), clientVersion: clientVersion(req) };
    const admin = bearer(req);
    const account = String(req.params.account);
    const name = String(req.params.repository);
    if (admin !== undefined) {
      const label = adminTokens.authenticate(admin);
      return { repository: requireRepository(deps.registry, account, name), actor: { identity: label, ...provenance } };
    }
    const named = { pathname: req.path, account, repository: name };
    const grant = operation === 'write' ? await writes(req, named) : await reads(req, named);
    const token = grant.token;
    return {
      repository: grant.repository,
      actor: {
        identity: token?.label ?? '',
        ruleSet: token?.ruleSet,
        forceKeyPush: token?.forceKeyPush,
        groupKeys: grant.groupKeys,
        ...provenance,
      },
    };
  };

  const log = (res: Response, action: string, repository: GitRepository, id: number, extra = {}) =>
    deps.logger.info({
      reqId: res.locals.requestId,
      event: 'change-request',
      action,
      repository: repository.fullName,
      change: id,
      ...extra,
    });

  const create = async (req: Request, res: Response) => {
    const { repository, actor } = await access(req, 'write');
    requireJsonContentType(req, 'a change request');
    const slices = new TimeSlices();
    const body = await parseJsonInSlices(await readBody(req, res), slices);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('the change request is malformed: (body): the body must be a JSON object');
    const { title, revert, restore, ...push } = body as Record<string, unknown>;
    if (typeof title !== 'string')
      throw badRequest('the change request is malformed: title: a title (text) is required');
    if (revert !== undefined || restore !== undefined) {
      const change = await createRollbackChangeRequest(repository, rollbackOf(revert, restore, push), title, actor);
      log(res, 'create', repository, change.id, { commit: change.commit });
      return sendJson(req, res, 201, change);
    }
    const parsed = await slices.run(parsePushBodySteps(push));
    if (!parsed.ok)
      throw badRequest(
        `the change request is malformed: ${parsed.problems[0].path}: ${parsed.problems[0].message}`,
        parsed.problems,
      );
    const limit = await slices.run(findLimitProblemSteps(parsed.request));
    if (limit) throw new HttpError(413, 'payload_too_large', `${limit.path}: ${limit.message}`, [limit]);
    const change = await createChangeRequest(repository, parsed.request, title, actor);
    log(res, 'create', repository, change.id, { commit: change.commit });
    sendJson(req, res, 201, change);
  };

  const list = async (req: Request, res: Response) => {
    const { repository } = await access(req, 'read');
    const status = req.query.status === undefined ? undefined : String(req.query.status);
    if (status !== undefined && !STATUSES.includes(status))
      throw badRequest(`status must be one of ${STATUSES.join(', ')}`);
    const changes = await listChangeRequests(repository, status as ChangeStatus | undefined);
    sendJson(req, res, 200, { account: repository.account, repository: repository.name, changes });
  };

  const show = async (req: Request, res: Response) => {
    const id = changeId(req);
    const { repository, actor } = await access(req, 'read');
    sendJson(req, res, 200, await showChangeRequest(repository, id, actor));
  };

  const decision =
    (action: 'approve' | 'close', run: typeof approveChangeRequest) => async (req: Request, res: Response) => {
      const id = changeId(req);
      const { repository, actor } = await access(req, 'write');
      const change = await run(repository, id, actor);
      log(res, action, repository, id, { by: actor.identity });
      sendJson(req, res, 200, change);
    };

  const apply = async (req: Request, res: Response) => {
    const id = changeId(req);
    const { repository, actor } = await access(req, 'write');
    const applied = await applyChangeRequest(repository, id, actor);
    log(res, 'apply', repository, id, { commit: applied.commit, by: actor.identity });
    res.setHeader('ETag', `"${applied.commit}"`);
    sendJson(req, res, 200, applied);
  };
  return {
    create,
    list,
    show,
    approve: decision('approve', approveChangeRequest),
    close: decision('close', closeChangeRequest),
    apply,
  };
}
