/**
 * The OpenAPI 3.1 description of the server, served at `GET /openapi.json`. Bodies and answers are
 * generated from the zod schemas of src/api (zod 4's `z.toJSONSchema`, JSON Schema 2020-12,
 * which OpenAPI 3.1 uses as it is); routes, their headers and errors come from the one route
 * table the server dispatches from (routeTable.ts), and the meaning of each header and error
 * from the tables below. A test checks that every header and route is described and answers.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { errorBodySchema } from '../api/errorBody.js';
import { ROUTE_TABLE, type HttpRoute, type RouteDoc } from './routeTable.js';

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

/** The table's routes that OpenAPI describes (each with its method and path). */
type DocumentedRoute = HttpRoute & RouteDoc;

const DOCUMENTED = ROUTE_TABLE.filter((route): route is DocumentedRoute => !('undocumented' in route));

function operation(route: DocumentedRoute): Record<string, unknown> {
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
  return DOCUMENTED.map((route) => `${route.method.toUpperCase()} ${route.path}`);
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
  for (const route of DOCUMENTED) (paths[openApiPath(route.path)] ??= {})[route.method] = operation(route);
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
