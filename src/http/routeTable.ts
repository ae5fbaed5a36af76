/**
 * The one HTTP route table: every endpoint of the server is one entry here, with its method and
 * path, its OpenAPI description (summary, headers, body and answer schemas from src/api, errors)
 * and its handler. The front (app.ts) compiles the paths once into one matcher on plain
 * node:http (routeMatcher.ts) and serves each request by its entry's handler; the OpenAPI
 * document (openapi.ts) is generated from the same entries. A handler comes from a room of
 * routes (rooms.ts), opened once per front and closed with it.
 *
 * A handler is `plain` (node:http's request and response: the reads, pushes, Spring and OFREP,
 * which skip express for their speed, see app.ts) or `express` (express's request and response
 * wrappers, body helpers and res.locals, as a handler-level adapter: express does no routing).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { readRecordAnswer, repositoryRecord } from '../api/admin.js';
import {
  diffSchema,
  explainAnswerSchema,
  exportAnswerSchema,
  historySchema,
  infoAnswerSchema,
  keyFieldsSchema,
  pullAnswerSchema,
} from '../api/answers.js';
import { pushBodyDescription } from '../api/pushBody.js';
import { READ_ENDPOINTS } from '../service/answers/answers.js';
import { sendJson } from './answer/headers.js';
import { answerMetrics } from './metrics.js';
import type { Rooms } from './rooms.js';
import type { RouteMatch } from './routeMatcher.js';
import { ACCESS_ADMIN_ROUTES } from './routes/adminAccessRoutes.js';
import { ADMIN_ROUTES, type AdminRouteOf } from './routes/adminRoutes.js';
import { CHANGE_ROUTES } from './routes/changeRoutes.js';
import { epochSchema } from './routes/haRoutes.js';
import { answerReadiness } from './routes/readiness.js';
import { feedSchema } from './routes/replicationRoutes.js';
import { rollbackBodySchema } from './routes/rollbackRoutes.js';
import { WEBHOOK_ROUTES } from './routes/webhookRoutes.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * Serves a request the matcher found on plain node:http: its route, path and the path's
 * parameters as sent (the handler decodes them). Returning false leaves the request to the
 * route's `express` handler (a push with a compressed body, which express's body parser inflates).
 */
export type PlainHandler = (req: IncomingMessage, res: ServerResponse, match: RouteMatch) => boolean | void;

/** How a route is served: on plain node:http, through express's wrappers, or the first and else the second. */
export interface Serving {
  readonly plain?: PlainHandler;
  /** Gets express's request and response, `req.params` decoded and `res.locals.requestId` set. */
  readonly express?: RequestHandler;
  /** How an error of the express handler is answered, when not as JSON (answerError): git's text. */
  readonly answerError?: (res: ServerResponse, requestId: string, error: unknown) => void;
}

/** What a route is as a path: its template and how the matcher weighs it (routeMatcher.ts). */
interface RoutePath {
  readonly method: Method;
  /** Express-style template: `:name` is a path parameter, `*name` the rest of the path. */
  readonly path: string;
  /** Any method is served here (the handler answers a wrong one itself); `method` is the documented one. */
  readonly anyMethod?: boolean;
  /** The path's case matters (the protocols served with their own clients' paths). */
  readonly exactCase?: boolean;
  /** No final slash but the template's own. */
  readonly strict?: boolean;
  /** The route as the request log and the metrics name it, when not `path`. */
  readonly label?: string;
  /** The handler, from the front's rooms (rooms.ts): bound once, when the front is made. */
  serve(rooms: Rooms): Serving;
}

/** A route as OpenAPI describes it. */
export interface RouteDoc {
  readonly summary: string;
  readonly tag: string;
  readonly headers: readonly string[];
  /** Query parameters, by name. */
  readonly query?: Record<string, string>;
  readonly body?: z.ZodType;
  readonly ok: {
    status: number;
    description: string;
    schema?: z.ZodType;
    mediaType?: string;
    headers?: Record<string, string>;
  };
  readonly others?: Record<number, string>;
  readonly errors: readonly number[];
  readonly security?: 'admin' | 'metrics';
}

/** An entry of the table: a documented route, or one OpenAPI cannot describe (the reason given). */
export type HttpRoute = RoutePath & (RouteDoc | { readonly undocumented: string });

type Route = RoutePath & RouteDoc;

const anyObject = (description: string) => z.looseObject({}).describe(description);

/**
 * git's smart HTTP: one handler reads the path itself (the `.git` may be left out), answers a
 * wrong method 405 and every error as text git shows its user (gitRoutes.ts).
 */
const GIT_MATCHING = {
  anyMethod: true,
  exactCase: true,
  label: '/git/:account/:repository.git/*',
  serve: (rooms: Rooms): Serving => rooms.git,
} as const;

/** Which form of a route: the repository named by the token, or by the path. */
type Form = 'token' | 'path';

/** A route taking the repository from the token, and the same with `/:account/:repository`. */
function bothForms({ serve, ...route }: Omit<Route, 'serve'> & { serve(rooms: Rooms, form: Form): Serving }): Route[] {
  return [
    { ...route, serve: (rooms) => serve(rooms, 'token') },
    { ...route, path: `${route.path}/:account/:repository`, serve: (rooms) => serve(rooms, 'path') },
  ];
}

const READ_HEADERS: Record<
  (typeof READ_ENDPOINTS)[number],
  { headers: string[]; summary: string; mediaType?: string; schema?: z.ZodType }
> = {
  pull: {
    headers: ['Context', 'Include-Comments', 'Include-Value-Context', 'No-Properties', 'No-Files', 'Wait', 'Accept'],
    summary: 'the keys and files resolved for a context',
    schema: pullAnswerSchema,
  },
  rawFile: {
    headers: ['Context', 'File'],
    summary: "one file's content resolved for a context",
    mediaType: 'text/plain',
  },
  info: {
    headers: ['Context-Elements', 'Context-Labels', 'Files', 'Files-Glob', 'Tags'],
    summary: 'what the repository holds: levels, context items, files, tags',
    schema: infoAnswerSchema,
  },
  keyData: { headers: ['KeyName'], summary: 'one key with all its values', schema: keyFieldsSchema },
  export: {
    headers: ['Omit-Values', 'Omit-Files'],
    summary: 'everything, in the form a push takes',
    schema: exportAnswerSchema,
  },
};

/** The history reads (historyRoutes.ts): their own headers, each also taken as the query parameter of its name in lower case. */
const HISTORY_READS = {
  history: {
    summary: 'commits, newest first, with what each changed',
    headers: ['Limit', 'Before', 'Key', 'File'],
    description: 'a page of history',
    schema: historySchema,
  },
  diff: {
    summary: 'what changed between two points',
    headers: ['From', 'To', 'Context'],
    description: 'the changes',
    schema: diffSchema,
  },
} as const;

const COMMON_READ = [
  'Client-Token',
  'Client-Version',
  'Tag',
  'Repository-Date',
  'Pretty',
  'If-None-Match',
  'Application-Name',
];

/**
 * A route between the nodes of an HA cluster (`/rest/ha/<name>`, haRoutes.ts): the cluster's
 * replication token in `Authorization`, an answer of a few fields; a write takes a JSON body
 * (415 otherwise), or a record in the body (413 over its bound).
 */
function haRoute(
  method: 'get' | 'post',
  name: keyof Rooms['ha'],
  summary: string,
  [description, fields]: [string, string],
  more: { headers?: readonly string[]; body?: z.ZodType; others?: Record<number, string> } = {},
): Route {
  return {
    method,
    path: `/rest/ha/${name}`,
    serve: (rooms) => ({ express: rooms.ha[name] }),
    summary,
    tag: 'ha',
    headers: ['Authorization', ...(more.headers ?? [])],
    body: more.body,
    ok: { status: 200, description, schema: anyObject(fields) },
    others: more.others,
    errors: method === 'get' ? [401, 403, 404] : [400, 401, 403, 404, more.body ? 415 : 413],
  };
}

/** A route of the web console (uiRoutes.ts): reads no header; `/ui` and `/ui/` are different paths (strict). */
function consoleRoute(
  path: string,
  handler: keyof Rooms['ui'],
  summary: string,
  ok: RouteDoc['ok'],
  errors: readonly number[] = [],
): Route {
  return {
    method: 'get',
    path,
    strict: true,
    serve: (rooms) => ({ express: rooms.ui[handler] }),
    summary,
    tag: 'console',
    headers: [],
    ok,
    errors,
  };
}

export const ROUTE_TABLE: readonly HttpRoute[] = [
  {
    method: 'get',
    path: '/healthz',
    serve: () => ({ express: (req, res) => sendJson(req, res, 200, { status: 'ok' }) }),
    summary: 'the process answers',
    tag: 'operations',
    headers: [],
    ok: { status: 200, description: 'ok', schema: z.object({ status: z.literal('ok') }) },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
    serve: (rooms) => ({ express: (req, res) => answerReadiness(rooms.deps, req, res) }),
    summary: 'whether the server can do its job; unreadable repositories are named',
    tag: 'operations',
    headers: [],
    ok: {
      status: 200,
      description: 'ready',
      schema: z.object({
        status: z.enum(['ready', 'unready']),
        problems: z.array(z.string()),
        unreadable: z.array(z.object({ repository: z.string(), error: z.string(), message: z.string() })),
      }),
    },
    others: { 503: 'unready: the problems say why (same body as 200)' },
    errors: [],
  },
  {
    method: 'get',
    path: '/metrics',
    serve: (rooms) => ({ express: (req, res) => answerMetrics(rooms.deps, req, res) }),
    summary: "Prometheus' text format",
    tag: 'operations',
    headers: ['Authorization'],
    ok: { status: 200, description: 'the metrics', mediaType: 'text/plain', schema: z.string() },
    errors: [401],
    security: 'metrics',
  },
  {
    method: 'get',
    path: '/openapi.json',
    serve: (rooms) => ({ express: rooms.openApi }),
    summary: 'this description',
    tag: 'operations',
    headers: [],
    ok: { status: 200, description: 'OpenAPI 3.1', schema: anyObject('the OpenAPI document') },
    errors: [],
  },
  {
    method: 'get',
    path: '/rest/info/all',
    serve: (rooms) => ({ express: rooms.info }),
    summary: 'the records of every repository',
    tag: 'reads',
    headers: ['Client-Version', 'Pretty'],
    ok: { status: 200, description: 'the records', schema: repositoryRecord.array() },
    errors: [400],
  },
  ...READ_ENDPOINTS.flatMap((name) =>
    bothForms({
      method: 'get',
      path: `/rest/${name}`,
      summary: READ_HEADERS[name].summary,
      tag: 'reads',
      headers: [...COMMON_READ, ...READ_HEADERS[name].headers],
      ...(name === 'pull' ? { query: { format: 'json, yaml, properties or env' } } : {}),
      ok: {
        status: 200,
        description: 'the answer; its ETag changes with the commit read',
        mediaType: READ_HEADERS[name].mediaType,
        schema: READ_HEADERS[name].schema ?? z.string(),
        headers: { ETag: 'names the commit and options read' },
      },
      others: { 304: 'If-None-Match matched' },
      errors: [400, 401, 403, 404, 409, 503],
      serve: (rooms) => ({ plain: rooms.reads.serve(name) }),
    }),
  ),
  // Spring Cloud Config's reads (spring.ts): its paths split names at a `-` and a `.`, which a template cannot say.
  {
    method: 'get',
    path: '/spring/*rest',
    exactCase: true,
    label: '/spring',
    undocumented: "Spring Cloud Config Server's protocol, described by Spring (docs/protocols.md)",
    serve: (rooms) => ({ plain: rooms.spring }),
  },
  // OpenFeature's remote evaluation protocol (ofrep.ts), with the repository from the token or the path.
  ...['', '/openfeature/:account/:repository'].flatMap((prefix) =>
    ['', '/:key'].map((key): HttpRoute => ({
      method: 'post',
      path: `${prefix}/ofrep/v1/evaluate/flags${key}`,
      exactCase: true,
      undocumented: "OpenFeature's remote evaluation protocol, described by OpenFeature (docs/protocols.md)",
      serve: (rooms) => ({ plain: rooms.ofrep }),
    })),
  ),
  ...(['history', 'diff'] as const).flatMap((name) =>
    bothForms({
      method: 'get',
      path: `/rest/${name}`,
      summary: HISTORY_READS[name].summary,
      tag: 'reads',
      headers: ['Client-Token', 'Client-Version', ...HISTORY_READS[name].headers, 'Pretty'],
      query: Object.fromEntries(
        HISTORY_READS[name].headers.map((header) => [header.toLowerCase(), `as the ${header} header`]),
      ),
      ok: { status: 200, description: HISTORY_READS[name].description, schema: HISTORY_READS[name].schema },
      errors: [400, 401, 403, 404, 409, 503],
      serve: (rooms) => ({ express: rooms.history[name] }),
    }),
  ),
  ...bothForms({
    method: 'post',
    path: '/rest/push',
    summary: 'change keys and files in one commit',
    tag: 'writes',
    headers: ['Client-Token', 'Client-Version', 'Application-Name', 'If-Match', 'Dry-Run', 'Dry-Run-Contexts'],
    body: pushBodyDescription,
    ok: {
      status: 200,
      description:
        'applied (or unchanged): the ETag is the new head; with Dry-Run: true, what the push would do (JSON)',
      headers: { ETag: 'the commit id' },
    },
    others: { 304: 'refused: the ETag holds the reason, naming the element' },
    errors: [400, 401, 403, 404, 409, 412, 413, 415, 503],
    serve: (rooms) => rooms.push,
  }),
  ...(['revert', 'restore'] as const).flatMap((name) =>
    bothForms({
      method: 'post',
      path: `/rest/${name}`,
      summary:
        name === 'revert'
          ? 'a new commit that undoes one commit'
          : 'a new commit whose keys and files equal those of a point',
      tag: 'writes',
      headers: [
        'Client-Token',
        'Client-Version',
        'Application-Name',
        'Change-Comment',
        name === 'revert' ? 'Commit' : 'To',
        'If-Match',
        'Dry-Run',
        'Dry-Run-Contexts',
      ],
      body: rollbackBodySchema,
      ok: {
        status: 200,
        description: `the ETag is the new head (or the head, when nothing changes); with Dry-Run: true, what the ${name} would do (JSON, as a push's dry run)`,
        headers: { ETag: 'the commit id' },
      },
      errors: [400, 401, 403, 404, 409, 412, 415, 503],
      serve: (rooms, form) => ({ express: rooms.rollback(name, form) }),
    }),
  ),
  ...CHANGE_ROUTES.map((route): Route => ({
    method: route.method,
    path: route.path,
    serve: (rooms) => ({ express: rooms.changes[route.action] }),
    summary: route.summary,
    tag: 'changes',
    headers:
      route.operation === 'write'
        ? ['Client-Token', 'Authorization', 'Client-Version', 'Application-Name', 'Pretty']
        : ['Client-Token', 'Authorization', 'Pretty'],
    ...(route.query ? { query: route.query } : {}),
    ...(route.body ? { body: route.body } : {}),
    ok: { status: route.status, description: 'done', schema: route.answer },
    errors: route.errors,
  })),
  // Which value of a key wins for a context and why; with a token, whether it could change it.
  {
    method: 'get',
    path: '/rest/explain/:account/:repository',
    serve: (rooms) => ({ express: rooms.explain }),
    summary:
      'which value of KeyName wins for Context, and why; with a Client-Token, whether that token could change it',
    tag: 'reads',
    headers: ['Client-Token', 'Client-Version', 'KeyName', 'Context', 'Pretty'],
    ok: { status: 200, description: 'the explanation', schema: explainAnswerSchema },
    errors: [400, 401, 403, 404, 409, 503],
  },
  // What a read replica follows; answered only to a replication token.
  {
    method: 'get',
    path: '/rest/replication/state',
    serve: (rooms) => ({ express: rooms.replication.state }),
    summary: "every repository's head and the token records (hashes only), for a read replica",
    tag: 'replication',
    headers: ['Authorization'],
    ok: {
      status: 200,
      description: 'the state',
      schema: anyObject('repositories (account, name, head) and tokens (hashes only)'),
    },
    errors: [401, 403],
  },
  {
    method: 'post',
    path: '/rest/replication/feed',
    serve: (rooms) => ({ express: rooms.replication.feed }),
    summary:
      'held until a head or the token set differs from the heads sent, then the new state (heartbeat lines meanwhile)',
    tag: 'replication',
    headers: ['Authorization'],
    body: feedSchema,
    ok: {
      status: 200,
      description: 'newline-delimited JSON: {"same": true} heartbeats, then {"state": …}',
      mediaType: 'application/x-ndjson',
      schema: z.string(),
    },
    errors: [400, 401, 403, 415, 503],
  },
  // Between the nodes of an HA cluster; answered only to the cluster's replication token, 404 on other servers.
  haRoute(
    'post',
    'records',
    "one push's journal record from the leader (the body, application/octet-stream), answered once the member holds it durably",
    ['applied, or held already', 'outcome: applied or already'],
    {
      headers: ['Cfghub-Epoch', 'Cfghub-Leader'],
      others: { 409: 'stale_epoch: the member knows a newer leader; or behind: it lacks an earlier record' },
    },
  ),
  haRoute(
    'post',
    'epoch',
    "a new leader's epoch, announced to a member before it sends records",
    ['taken', 'outcome'],
    {
      body: epochSchema,
      others: { 409: 'stale_epoch: the member knows a newer leader' },
    },
  ),
  haRoute(
    'post',
    'sync',
    "the leader's confirmation before it answers a write other than a push: answered once the member holds the leader's repositories, tags and token records",
    ['held', 'outcome'],
    {
      body: epochSchema,
      others: { 409: 'stale_epoch: the member knows a newer leader; or behind: it could not bring itself in line' },
    },
  ),
  haRoute('get', 'heads', "the node's head of every repository, with their digest", [
    'the heads',
    'node, epoch, headsDigest, heads by account/name',
  ]),
  haRoute('get', 'status', "the node's view of its cluster (what cfghub ha status shows)", [
    'the view',
    'role, epoch, leader, sync set, problem',
  ]),
  ...(['info/refs', 'git-upload-pack', 'git-receive-pack'] as const).map((endpoint): Route => ({
    method: endpoint === 'info/refs' ? 'get' : 'post',
    path: `/git/:account/:repository.git/${endpoint}`,
    ...GIT_MATCHING,
    summary:
      endpoint === 'git-upload-pack'
        ? 'git smart HTTP (git-upload-pack): clone and fetch; the token is the HTTP Basic password'
        : endpoint === 'git-receive-pack'
          ? 'git smart HTTP (git-receive-pack): git push, for a token that may write; each pushed commit is checked as a REST push is, a refusal is a rejected ref with its reason'
          : 'git smart HTTP (info/refs): the ref advertisement of a fetch (service=git-upload-pack) or a push (service=git-receive-pack)',
    tag: 'git',
    headers: ['Authorization', 'Git-Protocol'],
    ok: { status: 200, description: "git's answer", mediaType: 'application/octet-stream', schema: z.string() },
    errors: endpoint === 'git-receive-pack' ? [401, 403, 404, 413, 503] : [401, 403, 404, 503],
  })),
  {
    method: 'get',
    path: '/git/*rest',
    ...GIT_MATCHING,
    undocumented:
      "the paths git builds from a URL given without .git, and any other path under /git/ (git's handler answers them)",
  },
  // The web console's files.
  consoleRoute('/', 'root', 'redirects to the web console', { status: 302, description: 'to /ui/' }),
  consoleRoute('/ui', 'redirect', 'redirects to /ui/', { status: 301, description: 'to /ui/' }),
  consoleRoute('/ui/', 'page', "the web console's page", {
    status: 200,
    description: 'HTML',
    mediaType: 'text/html',
    schema: z.string(),
  }),
  consoleRoute(
    '/ui/:name',
    'file',
    "one of the web console's built files",
    { status: 200, description: 'the file', mediaType: 'application/octet-stream', schema: z.string() },
    [404],
  ),
  // Who reads what: kept in the serving process's memory.
  {
    method: 'get',
    path: '/rest/clients/:account/:repository',
    serve: (rooms) => ({ express: rooms.clients }),
    summary:
      'the read record: per Application-Name and context, the commit last served, when, and how many reads (cfghub clients)',
    tag: 'admin',
    headers: ['Authorization'],
    ok: { status: 200, description: 'the record', schema: readRecordAnswer },
    errors: [400, 401, 404],
    security: 'admin',
  },
  ...[...ADMIN_ROUTES, ...ACCESS_ADMIN_ROUTES].map((route) => adminEntry(route, (rooms) => rooms.admin(route))),
  ...WEBHOOK_ROUTES.map((route) => adminEntry(route, (rooms) => rooms.webhooks(route))),
];

/** An admin route (adminRoutes.ts runs them all alike) as an entry of the table. */
function adminEntry<T>(route: AdminRouteOf<T>, handler: (rooms: Rooms) => RequestHandler): Route {
  return {
    method: route.method,
    path: route.path,
    serve: (rooms) => ({ express: handler(rooms) }),
    summary: route.summary,
    tag: 'admin',
    headers: [
      'Authorization',
      ...(route.path.endsWith('/revert') || route.path.endsWith('/restore')
        ? ['Application-Name', 'Dry-Run', 'Dry-Run-Contexts']
        : []),
      ...(route.path.endsWith('/schemas') && route.method === 'post' ? ['Dry-Run'] : []),
    ],
    body: route.body,
    ok: { status: route.status, description: 'done', schema: route.answer },
    errors: [...new Set([400, 401, ...route.errors, 503])].sort(),
    security: 'admin',
  };
}
