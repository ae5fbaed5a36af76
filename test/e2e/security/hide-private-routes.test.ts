/**
 * `serve --hide-private`, route by route: every route of the server (the OpenAPI document's
 * paths, generated from the route table the server dispatches from, so a new route is covered
 * when it is added, and the protocols OpenAPI does not describe) answers a caller without a token of a private repository exactly as it answers about a
 * repository that does not exist: the same status and the same body but for the name, with no
 * token, a token of another repository, and a token that is not one. Routes that name no
 * repository never name the private one (readiness included, where an unreadable repository,
 * which may be private, is not named).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../src/http/openapi.js';
import { cliOk, gitdirOf, startTestServer, tempDir, type TestServer } from '../../support/harness.js';

const dir = tempDir();
let hiding: TestServer;
let plain: TestServer;
let otherToken: string;
const HIDDEN = 'hidden';
const UNKNOWN = 'nosuch';

interface Route {
  readonly method: string;
  /** With `{name}` for each parameter. */
  readonly path: string;
}

/** Every route: the OpenAPI document's, and the route table's undocumented ones by example paths (`:name` written `{name}`). */
function allRoutes(): Route[] {
  const routes = new Map<string, Route>();
  const add = (method: string, path: string) => routes.set(`${method} ${path}`, { method: method.toUpperCase(), path });
  for (const [path, item] of Object.entries(openApiDocument().paths as Record<string, Record<string, unknown>>))
    for (const method of Object.keys(item)) add(method, path);
  // The protocols OpenAPI does not describe (routeTable.ts), by their documented paths: Spring's application is `account.repository`.
  for (const path of [
    '/spring/acme.{repository}/Prod',
    '/spring/acme.{repository}/Prod/main',
    '/spring/acme.{repository}-Prod.yml',
    '/spring/main/acme.{repository}-Prod.properties',
  ])
    add('get', path);
  for (const path of [
    '/openfeature/{account}/{repository}/ofrep/v1/evaluate/flags',
    '/openfeature/{account}/{repository}/ofrep/v1/evaluate/flags/{key}',
  ])
    add('post', path);
  return [...routes.values()];
}

/** The route's URL with every parameter naming `name` (the account stays acme). */
const urlOf = (route: Route, name: string) =>
  route.path.replace(/\{(\w+)\}/g, (_all, param: string) => (param === 'account' ? 'acme' : name));

async function ask(server: TestServer, route: Route, name: string, token: string | undefined) {
  const headers: Record<string, string> = {
    Context: 'Prod',
    KeyName: 'k',
    From: '2000-01-01T00:00:00Z',
    Commit: 'HEAD',
    To: 'HEAD',
  };
  if (token) headers['Client-Token'] = token;
  const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
  if (hasBody) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${server.url}${urlOf(route, name)}`, {
    method: route.method,
    headers,
    body: hasBody ? '{"data":[]}' : undefined,
    redirect: 'manual',
  });
  const body = (await response.text()).replace(/"requestId":"[^"]*"/g, '').replaceAll(name, 'NAME');
  return { status: response.status, body, challenge: response.headers.get('www-authenticate') };
}

beforeAll(async () => {
  cliOk(dir.path, 'repo', 'create', 'acme/open', '--context', 'Environment', '--token-free-pull', '--token-free-push');
  cliOk(
    dir.path,
    'repo',
    'create',
    `acme/${HIDDEN}`,
    '--context',
    'Environment',
    '--private',
    '--token-free-pull',
    '--token-free-push',
  );
  cliOk(dir.path, 'repo', 'create', 'acme/broken', '--context', 'Environment', '--private');
  otherToken = cliOk(dir.path, 'token', 'create', 'acme/open', '--name', 'reader').trim();
  // A head naming a commit that is not there: the repository cannot be read (so it may be private).
  writeFileSync(join(gitdirOf(dir.path, 'acme/broken'), 'refs', 'heads', 'main'), `${'1'.repeat(40)}\n`);
  hiding = await startTestServer(dir.path, { hidePrivate: true });
  plain = await startTestServer(dir.path);
});

afterAll(async () => {
  await hiding?.close();
  await plain?.close();
  dir.remove();
});

describe('serve --hide-private, on every route', () => {
  const routes = allRoutes();

  it('finds the routes (the read endpoints, explain, git, admin, readiness among them)', () => {
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'GET /rest/pull/{account}/{repository}',
      'GET /rest/explain/{account}/{repository}',
      'GET /git/{account}/{repository}.git/info/refs',
      'GET /readyz',
      'DELETE /rest/admin/repositories/{account}/{repository}',
      'GET /spring/acme.{repository}/Prod',
    ]) {
      expect(paths).toContain(expected);
    }
  });

  it('answers about a private repository as about one that does not exist, with no token, a token of another repository or a bad one', async () => {
    const differing: string[] = [];
    for (const route of routes.filter((r) => r.path.includes('{'))) {
      for (const [who, token] of [
        ['no token', undefined],
        ['a token of another repository', otherToken],
        ['a bad token', 'not-a-token'],
      ] as const) {
        const hidden = await ask(hiding, route, HIDDEN, token);
        const unknown = await ask(hiding, route, UNKNOWN, token);
        if (JSON.stringify(hidden) !== JSON.stringify(unknown))
          differing.push(
            `${route.method} ${route.path} with ${who}: ${JSON.stringify(hidden)} but unknown ${JSON.stringify(unknown)}`,
          );
      }
    }
    expect(differing).toEqual([]);
  });

  it('never names a private repository on a route that names none, readiness included', async () => {
    const readyWithout = await fetch(`${plain.url}/readyz`);
    expect(await readyWithout.text()).toContain('acme/broken'); // named when private repositories are not hidden
    for (const route of routes.filter((r) => !r.path.includes('{') && r.method === 'GET')) {
      const answer = await fetch(`${hiding.url}${route.path}`, { redirect: 'manual' });
      const text = await answer.text();
      expect(text, route.path).not.toContain(HIDDEN);
      expect(text, route.path).not.toContain('acme/broken');
    }
  });
});
