/**
 * The OpenAPI 3.1 description of the server, served at `GET /openapi.json`. Bodies and answers are
 * generated from the zod schemas of src/api (zod 4's `z.toJSONSchema`, JSON Schema 2020-12,
 * which OpenAPI 3.1 uses as it is); routes, headers and errors come from the tables below and
 * the admin API's own table. A test checks the description against the routes the server
 * registers, both ways, so neither can drift from the other.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ADMIN_ROUTES, type AdminRouteOf } from './routes/adminRoutes.js';
import { WEBHOOK_ROUTES } from './routes/webhookRoutes.js';
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
import { errorBodySchema } from '../api/errorBody.js';
import { pushBodyDescription } from '../api/pushBody.js';
import { READ_ENDPOINTS } from '../service/answers/answers.js';
import { epochSchema } from './routes/haRoutes.js';
import { feedSchema } from './routes/replicationRoutes.js';
import { rollbackBodySchema } from './routes/rollbackRoutes.js';
import { CHANGE_ROUTES } from './routes/changeRoutes.js';

/** Every request header a route reads, with what it means. */
const HEADERS: Record<string, string> = {
  'Client-Token': 'a client token of the repository; names the repository in the forms without {account}/{repository}',
  'Client-Version': 'the API version the client speaks, like v1.0; absent means the latest v1',
  'Application-Name':
    'writes: who makes the change, recorded in the commit message; reads: who reads, in the read log and the read record',
  Pretty: 'true: indented JSON',
  Context: 'the context, one item per level separated by ";" (reads: required for pull and rawFile)',
  Tag: 'read the repository as of this tag',
  'Repository-Date': 'read the repository as of this ISO 8601 instant',
  'Include-Comments': 'true: key and value comments in the answer',
  'Include-Value-Context': 'true: each value with its context',
  'No-Properties': 'true: no keys in the answer',
  'No-Files': 'true: no files in the answer',
  File: 'the file path (rawFile; history: only commits that touched it)',
  'Context-Elements': 'info: list the context items of each level',
  'Context-Labels': 'info: list the context labels',
  Files: 'info: list the files',
  'Files-Glob': 'info: only files matching this glob',
  Tags: 'info: list the tags',
  KeyName: 'keyData: the key',
  'Omit-Values': 'export: keys without their values',
  'Omit-Files': 'export: no files',
  'If-None-Match': 'an ETag from an earlier answer: 304 when it still matches',
  Wait: 'pull: with If-None-Match, hold the answer up to this many seconds until the content changes (a watch)',
  Accept:
    'pull: application/json, application/yaml, text/x-java-properties or text/plain (dotenv); the format query parameter wins',
  'If-Match': 'the commit id the head must be (optimistic concurrency); "*" matches any',
  'Dry-Run':
    'true: write nothing; answer 200 with JSON saying what the write would do (would commit, unchanged or the refusal) and what each context would read before and after',
  'Dry-Run-Contexts': 'with Dry-Run: contexts to weigh besides those the repository names, comma-separated',
  Commit: 'revert: the full id of the commit to undo',
  To: 'restore: the commit id, tag or ISO 8601 date to restore; diff: the newer side (default: the head)',
  From: 'diff: the older side, a commit id, tag or ISO 8601 date',
  'Change-Comment': 'the comment of the new commit',
  Limit: 'history: how many commits (header, or the query parameter limit)',
  Before: 'history: commits older than this commit id (the next page)',
  Key: 'history: only commits that touched this key',
  Authorization:
    'Bearer <admin token> (admin API; change requests, acting as its label) or Bearer <metrics token> (metrics, when one is set)',
  'Git-Protocol': 'git protocol version, as git sends it (version=2)',
  'Cfghub-Epoch': "HA records: the sending leader's epoch; a member refuses a record of an older epoch than it knows",
  'Cfghub-Leader': 'HA records: the node id of the sending leader',
  'X-Request-Id': 'an id for the request (letters, digits, . _ -, up to 64): sent back and logged',
};

const ERROR_MEANING: Record<number, string> = {
  400: 'bad request: a header, a parameter or the body is malformed',
  401: 'no valid token',
  403: 'the token may not do this',
  404: 'no such repository (or tag, commit, token, group)',
  409: 'conflict: exists already, or the repository content must be mended first',
  412: 'precondition failed: the head is not the If-Match commit',
  413: 'the body is larger than the limit',
  415: 'the body is not sent as application/json',
  500: 'internal error (logged, without paths)',
  503: 'unavailable: the repository stayed locked by another writer, or git is missing',
};

interface Route {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Express-style path: `:name` segments are path parameters. */
  readonly path: string;
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

const anyObject = (description: string) => z.looseObject({}).describe(description);

/** A route taking the repository from the token, and the same with `/:account/:repository`. */
function bothForms(route: Route): Route[] {
  return [route, { ...route, path: `${route.path}/:account/:repository` }];
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

const COMMON_READ = [
  'Client-Token',
  'Client-Version',
  'Tag',
  'Repository-Date',
  'Pretty',
  'If-None-Match',
  'Application-Name',
];

const ROUTES: readonly Route[] = [
  {
    method: 'get',
    path: '/healthz',
    summary: 'the process answers',
    tag: 'operations',
    headers: [],
    ok: { status: 200, description: 'ok', schema: z.object({ status: z.literal('ok') }) },
    errors: [],
  },
  {
    method: 'get',
    path: '/readyz',
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
    summary: 'this description',
    tag: 'operations',
    headers: [],
    ok: { status: 200, description: 'OpenAPI 3.1', schema: anyObject('the OpenAPI document') },
    errors: [],
  },
  {
    method: 'get',
    path: '/rest/info/all',
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
    }),
  ),
  ...bothForms({
    method: 'get',
    path: '/rest/history',
    summary: 'commits, newest first, with what each changed',
    tag: 'reads',
    headers: ['Client-Token', 'Client-Version', 'Limit', 'Before', 'Key', 'File', 'Pretty'],
    query: {
      limit: 'as the Limit header',
      before: 'as the Before header',
      key: 'as the Key header',
      file: 'as the File header',
    },
    ok: { status: 200, description: 'a page of history', schema: historySchema },
    errors: [400, 401, 403, 404, 409, 503],
  }),
  ...bothForms({
    method: 'get',
    path: '/rest/diff',
    summary: 'what changed between two points',
    tag: 'reads',
    headers: ['Client-Token', 'Client-Version', 'From', 'To', 'Context', 'Pretty'],
    query: { from: 'as the From header', to: 'as the To header', context: 'as the Context header' },
    ok: { status: 200, description: 'the changes', schema: diffSchema },
    errors: [400, 401, 403, 404, 409, 503],
  }),
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
    }),
  ),
  ...CHANGE_ROUTES.map((route): Route => ({
    method: route.method,
    path: route.path,
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
  {
    method: 'post',
    path: '/rest/ha/records',
    summary:
      "one push's journal record from the leader (the body, application/octet-stream), answered once the member holds it durably",
    tag: 'ha',
    headers: ['Authorization', 'Cfghub-Epoch', 'Cfghub-Leader'],
    ok: { status: 200, description: 'applied, or held already', schema: anyObject('outcome: applied or already') },
    others: { 409: 'stale_epoch: the member knows a newer leader; or behind: it lacks an earlier record' },
    errors: [400, 401, 403, 404, 413],
  },
  {
    method: 'post',
    path: '/rest/ha/epoch',
    summary: "a new leader's epoch, announced to a member before it sends records",
    tag: 'ha',
    headers: ['Authorization'],
    body: epochSchema,
    ok: { status: 200, description: 'taken', schema: anyObject('outcome') },
    others: { 409: 'stale_epoch: the member knows a newer leader' },
    errors: [400, 401, 403, 404, 415],
  },
  {
    method: 'post',
    path: '/rest/ha/sync',
    summary:
      "the leader's confirmation before it answers a write other than a push: answered once the member holds the leader's repositories, tags and token records",
    tag: 'ha',
    headers: ['Authorization'],
    body: epochSchema,
    ok: { status: 200, description: 'held', schema: anyObject('outcome') },
    others: { 409: 'stale_epoch: the member knows a newer leader; or behind: it could not bring itself in line' },
    errors: [400, 401, 403, 404, 415],
  },
  {
    method: 'get',
    path: '/rest/ha/heads',
    summary: "the node's head of every repository, with their digest",
    tag: 'ha',
    headers: ['Authorization'],
    ok: { status: 200, description: 'the heads', schema: anyObject('node, epoch, headsDigest, heads by account/name') },
    errors: [401, 403, 404],
  },
  {
    method: 'get',
    path: '/rest/ha/status',
    summary: "the node's view of its cluster (what cfghub ha status shows)",
    tag: 'ha',
    headers: ['Authorization'],
    ok: { status: 200, description: 'the view', schema: anyObject('role, epoch, leader, sync set, problem') },
    errors: [401, 403, 404],
  },
  ...(['info/refs', 'git-upload-pack', 'git-receive-pack'] as const).map((endpoint): Route => ({
    method: endpoint === 'info/refs' ? 'get' : 'post',
    path: `/git/:account/:repository.git/${endpoint}`,
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
  // The web console's files.
  {
    method: 'get',
    path: '/',
    summary: 'redirects to the web console',
    tag: 'console',
    headers: [],
    ok: { status: 302, description: 'to /ui/' },
    errors: [],
  },
  {
    method: 'get',
    path: '/ui',
    summary: 'redirects to /ui/',
    tag: 'console',
    headers: [],
    ok: { status: 301, description: 'to /ui/' },
    errors: [],
  },
  {
    method: 'get',
    path: '/ui/',
    summary: "the web console's page",
    tag: 'console',
    headers: [],
    ok: { status: 200, description: 'HTML', mediaType: 'text/html', schema: z.string() },
    errors: [],
  },
  {
    method: 'get',
    path: '/ui/:name',
    summary: "one of the web console's built files",
    tag: 'console',
    headers: [],
    ok: { status: 200, description: 'the file', mediaType: 'application/octet-stream', schema: z.string() },
    errors: [404],
  },
  // Who reads what: kept in the serving process's memory.
  {
    method: 'get',
    path: '/rest/clients/:account/:repository',
    summary:
      'the read record: per Application-Name and context, the commit last served, when, and how many reads (cfghub clients)',
    tag: 'admin',
    headers: ['Authorization'],
    ok: { status: 200, description: 'the record', schema: readRecordAnswer },
    errors: [400, 401, 404],
    security: 'admin',
  },
  ...[...ADMIN_ROUTES, ...WEBHOOK_ROUTES].map((route: AdminRouteOf<unknown>): Route => ({
    method: route.method,
    path: route.path,
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
  })),
];

/** `/rest/push/:account/:repository` as OpenAPI writes it: `/rest/push/{account}/{repository}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

function schemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}

function operation(route: Route): Record<string, unknown> {
  const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const headers = [...route.headers, 'X-Request-Id'].map((name) => ({
    name,
    in: 'header',
    required: false,
    description: HEADERS[name],
    schema: { type: 'string' },
  }));
  const query = Object.entries(route.query ?? {}).map(([name, description]) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema: { type: 'string' },
  }));
  const requestId = { 'X-Request-Id': { description: HEADERS['X-Request-Id'], schema: { type: 'string' } } };
  const responses: Record<string, unknown> = {
    [route.ok.status]: {
      description: route.ok.description,
      headers: {
        ...requestId,
        ...Object.fromEntries(
          Object.entries(route.ok.headers ?? {}).map(([name, description]) => [
            name,
            { description, schema: { type: 'string' } },
          ]),
        ),
      },
      ...(route.ok.schema
        ? { content: { [route.ok.mediaType ?? 'application/json']: { schema: schemaOf(route.ok.schema) } } }
        : {}),
    },
  };
  for (const [status, description] of Object.entries(route.others ?? {}))
    responses[status] = { description, headers: requestId };
  for (const status of route.errors) {
    responses[status] = {
      description: ERROR_MEANING[status],
      headers: requestId,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  responses.default = {
    description: ERROR_MEANING[500],
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
  return {
    operationId: `${route.method}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: route.summary,
    tags: [route.tag],
    parameters: [...params, ...headers, ...query],
    ...(route.body
      ? {
          requestBody: {
            required: route.tag === 'admin' || route.path.startsWith('/rest/push'),
            content: { 'application/json': { schema: schemaOf(route.body) } },
          },
        }
      : {}),
    responses,
    ...(route.security === 'admin'
      ? { security: [{ adminToken: [] }] }
      : route.security === 'metrics'
        ? { security: [{}, { metricsToken: [] }] }
        : {}),
  };
}

/** The routes described, as `METHOD path` with express-style paths (the test compares them with the server's). */
export function describedRoutes(): string[] {
  return ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path}`);
}

let built: Record<string, unknown> | undefined;

/** The package's version (src/http and dist/http are both two folders below package.json). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

export function openApiDocument(): Record<string, unknown> {
  if (built) return built;
  const version = packageVersion();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) (paths[openApiPath(route.path)] ??= {})[route.method] = operation(route);
  built = {
    openapi: '3.1.0',
    info: {
      title: 'cfghub',
      version,
      description: "A configuration service where every repository is a bare git repository; speaks ConfigHub's API.",
    },
    paths,
    components: {
      schemas: { Error: schemaOf(errorBodySchema) },
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'an admin token (cfghub admin-token create)' },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'the metrics token (serve --metrics-token), when one is set',
        },
      },
    },
  };
  return built;
}
