/**
 * The admin API: `/rest/admin/…` does what the CLI does on the repositories folder,
 * through the same operations (LocalAdministration), so it validates and answers alike. Every
 * request needs an admin token (`Authorization: Bearer <token>`, made with `cfghub admin-token
 * create` on the server's host). Passwords travel only in JSON bodies, never in a URL, and no
 * body is ever logged.
 *
 * The routes are a table: the OpenAPI description (openapi.ts) is generated from the same table.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { withoutPaths } from '../../domain/reasons.js';
import { LocalAdministration, type Administration } from '../../service/admin/administration.js';
import type { AdminTokenService } from '../../service/admin/adminTokens.js';
import * as s from '../../api/admin.js';
import type { HttpDeps } from '../deps.js';
import { badRequest } from '../answer/errors.js';
import { booleanHeader, dryRunContexts, header, sendJson } from '../answer/headers.js';
import { bodyReader, parseJson, requireJsonContentType } from '../body/jsonBody.js';

type Params = Record<string, string>;

/** An admin route working on `T` (the Administration, or another service of the server). */
export interface AdminRouteOf<T> {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express path; `:name` segments are path parameters. */
  readonly path: string;
  readonly summary: string;
  readonly body?: z.ZodType;
  readonly status: 200 | 201;
  readonly answer: z.ZodType;
  /** Error statuses besides 400, 401 and 503, which every admin route can answer. */
  readonly errors: readonly number[];
  // The body as the route's own schema parsed it: each route's run knows its shape.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  run(target: T, params: Params, body: any, req: Request): Promise<unknown>;
}

export type AdminRoute = AdminRouteOf<Administration>;

/** The path of one repository in the admin API, and the repository its parameters name. */
export const REPO = '/rest/admin/repositories/:account/:repository';
export const fullName = (p: Params) => `${p.account}/${p.repository}`;

export const ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: 'get',
    path: '/rest/admin/repositories',
    summary: 'the records of every readable repository, and apart the ones that cannot be read (cfghub repo list)',
    status: 200,
    answer: s.listing,
    errors: [],
    run: (admin) => admin.listRepositories(),
  },
  {
    method: 'post',
    path: '/rest/admin/repositories',
    summary: 'create a repository with a first commit holding its settings (cfghub repo create)',
    body: s.newRepositoryBody,
    status: 201,
    answer: s.repositoryRecord,
    errors: [409, 415],
    run: (admin, _p, b: z.infer<typeof s.newRepositoryBody>) => {
      const { context, ...rest } = b;
      return admin.createRepository({ ...rest, levels: context });
    },
  },
  {
    method: 'get',
    path: REPO,
    summary: "one repository's record",
    status: 200,
    answer: s.listingRecord,
    errors: [404],
    run: (admin, p) => admin.repositoryRecord(fullName(p)),
  },
  {
    method: 'patch',
    path: REPO,
    summary: "change a repository's settings, in one commit (cfghub repo settings)",
    body: s.settingsChangeBody,
    status: 200,
    answer: s.listingRecord,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.settingsChangeBody>) => admin.changeSettings(fullName(p), b),
  },
  {
    method: 'delete',
    path: REPO,
    summary: 'move a repository aside, out of service, and revoke its tokens (cfghub repo delete)',
    status: 200,
    answer: s.deletedRepository,
    errors: [404],
    run: (admin, p) => admin.deleteRepository(fullName(p)),
  },
  {
    method: 'get',
    path: `${REPO}/tokens`,
    summary: 'label, created, expires and flags of each client token; never the token (cfghub token list)',
    status: 200,
    answer: s.tokenInfo.array(),
    errors: [404],
    run: (admin, p) => admin.listTokens(fullName(p)),
  },
  {
    method: 'post',
    path: `${REPO}/tokens`,
    summary: 'a new client token, shown once (cfghub token create)',
    body: s.newTokenBody,
    status: 201,
    answer: s.createdToken,
    errors: [403, 404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newTokenBody>) => admin.createToken(fullName(p), b),
  },
  {
    method: 'delete',
    path: `${REPO}/tokens/:label`,
    summary: 'revoke a client token at once (cfghub token revoke)',
    status: 200,
    answer: s.revokedToken,
    errors: [404],
    run: (admin, p) => admin.revokeToken(fullName(p), p.label),
  },
  {
    method: 'get',
    path: `${REPO}/tags`,
    summary: 'the tags, sorted by name (cfghub tag list)',
    status: 200,
    answer: s.tagRecord.array(),
    errors: [404, 409],
    run: (admin, p) => admin.listTags(fullName(p)),
  },
  {
    method: 'post',
    path: `${REPO}/tags`,
    summary: "tag the repository's head (cfghub tag create)",
    body: s.newTagBody,
    status: 201,
    answer: s.tagRecord,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newTagBody>) => admin.createTag(fullName(p), b.name, b.comment),
  },
  {
    method: 'delete',
    path: `${REPO}/tags/:tag`,
    summary: 'delete a tag (cfghub tag delete)',
    status: 200,
    answer: s.deletedTag,
    errors: [404],
    run: (admin, p) => admin.deleteTag(fullName(p), p.tag),
  },
  {
    method: 'get',
    path: `${REPO}/groups`,
    summary: 'the security groups with how many keys and files each holds (cfghub group list)',
    status: 200,
    answer: s.groupInfo.array(),
    errors: [404, 409],
    run: (admin, p) => admin.listGroups(fullName(p)),
  },
  {
    method: 'post',
    path: `${REPO}/groups`,
    summary: 'create a security group, as a commit (cfghub group create)',
    body: s.newGroupBody,
    status: 201,
    answer: s.groupCommit,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newGroupBody>) => admin.createGroup(fullName(p), b.name, b.password),
  },
  {
    method: 'post',
    path: `${REPO}/groups/:group/password`,
    summary: "change a group's password and re-encrypt it, in one commit (cfghub group passwd)",
    body: s.passwordChangeBody,
    status: 200,
    answer: s.groupCommit,
    errors: [403, 404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.passwordChangeBody>) =>
      admin.changePassword(fullName(p), p.group, b.current, b.new),
  },
  {
    method: 'delete',
    path: `${REPO}/groups/:group`,
    summary: 'delete a security group no key or file uses, as a commit (cfghub group delete)',
    status: 200,
    answer: s.deletedGroup,
    errors: [404, 409],
    run: (admin, p) => admin.deleteGroup(fullName(p), p.group),
  },
  {
    method: 'post',
    path: `${REPO}/revert`,
    summary:
      'a new commit that undoes one commit (cfghub revert); with Dry-Run: true, what it would do, nothing written',
    body: s.revertBody,
    status: 200,
    answer: s.rollbackOrPreview,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.revertBody>, req) => {
      const rollback = { comment: b.comment, applicationName: header(req, 'Application-Name') };
      return booleanHeader(req, 'Dry-Run')
        ? admin.previewRevert(fullName(p), b.commit, rollback, dryRunContexts(req))
        : admin.revert(fullName(p), b.commit, rollback);
    },
  },
  {
    method: 'post',
    path: `${REPO}/restore`,
    summary:
      'a new commit whose keys and files equal those of a tag, commit or date (cfghub restore); with Dry-Run: true, what it would do, nothing written',
    body: s.restoreBody,
    status: 200,
    answer: s.rollbackOrPreview,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.restoreBody>, req) => {
      const rollback = {
        comment: b.comment,
        applicationName: header(req, 'Application-Name'),
        securityGroup: b.securityGroup,
        password: b.password,
      };
      return booleanHeader(req, 'Dry-Run')
        ? admin.previewRestore(fullName(p), b.to, rollback, dryRunContexts(req))
        : admin.restore(fullName(p), b.to, rollback);
    },
  },
  {
    method: 'get',
    path: `${REPO}/schemas`,
    summary: "the repository's schemas document: key schemas, file schemas, context rules (cfghub schemas show)",
    status: 200,
    answer: s.schemasAnswer,
    errors: [404, 409],
    run: async (admin, p) => ({ schemas: await admin.schemas(fullName(p)) }),
  },
  {
    method: 'post',
    path: `${REPO}/schemas`,
    summary:
      'replace the schemas document, in one commit; refused listing what existing content breaks (cfghub schemas set); with Dry-Run: true, what it would do, nothing written',
    body: s.schemasBody,
    status: 200,
    answer: s.schemasChangeOrPreview,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.schemasBody>, req) =>
      booleanHeader(req, 'Dry-Run')
        ? admin.previewSchemas(fullName(p), b.schemas)
        : admin.setSchemas(fullName(p), b.schemas, {
            comment: b.comment,
            applicationName: header(req, 'Application-Name'),
          }),
  },
];

/** The bearer token of `Authorization`, if any. */
export function bearer(req: Request): string | undefined {
  const value = header(req, 'Authorization');
  const match = value === undefined ? null : /^Bearer +(\S+)$/i.exec(value);
  return match?.[1];
}

export function adminRoutes(deps: HttpDeps, adminTokens: AdminTokenService): (route: AdminRoute) => RequestHandler {
  const onUnreadable = (res: Response) => (repository: string, error: unknown) =>
    deps.logger.warn({
      reqId: res.locals.requestId,
      event: 'unreadable-repository',
      repository,
      problem: withoutPaths(String((error as Error)?.message ?? error)),
    });
  return adminHandlers(
    deps,
    (res) => new LocalAdministration(deps.registry, deps.tokens, onUnreadable(res)),
    adminTokens,
  );
}

/**
 * The handler of an admin route: each request authenticated by an admin token, its body checked
 * by the route's schema, a change logged (never its body), the answer sent as JSON.
 */
export function adminHandlers<T>(
  deps: HttpDeps,
  targetOf: (res: Response) => T,
  adminTokens: AdminTokenService,
): (route: AdminRouteOf<T>) => RequestHandler {
  const readBody = bodyReader(deps.bodyLimit);
  return (route) => async (req: Request, res: Response) => {
    const admin = adminTokens.authenticate(bearer(req));
    let body: unknown;
    if (route.body) {
      requireJsonContentType(req, 'an admin request');
      const parsed = route.body.safeParse(parseJson(await readBody(req, res)));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw badRequest(`the body is malformed: ${issue.path.join('.') || 'body'}: ${issue.message}`);
      }
      body = parsed.data;
    }
    const result = await route.run(targetOf(res), req.params as Params, body, req);
    if (route.method !== 'get') {
      deps.logger.info({
        reqId: res.locals.requestId,
        event: 'admin',
        admin,
        route: `${route.method.toUpperCase()} ${route.path}`,
      });
    }
    sendJson(req, res, route.status, result);
  };
}
