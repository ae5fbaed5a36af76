/**
 * What an operator watches (items 3 to 5): `/metrics` parsed with a Prometheus text
 * parser, moving with pushes and reads; `/readyz` turning 503 when the repositories folder goes
 * away and 200 when it returns; `/openapi.json` valid OpenAPI 3.1 (checked by a validator) and
 * describing exactly the routes the server registers.
 */
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import pino from 'pino';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpOptions } from '../../../src/http/deps.js';
import { describedRoutes, openApiPath } from '../../../src/http/openapi.js';
import { ROUTE_TABLE, type HttpRoute } from '../../../src/http/routeTable.js';
import { startServer } from '../../../src/http/server.js';
import { TokenService } from '../../../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { TokenStore } from '../../../src/disk/records/tokenStore.js';
import { HELD_PACKS_BYTES } from '../../../src/disk/objects/heldPacks.js';
import { cliOk, createOpenRepository, getJson, pushTo, serverForFile } from '../../support/harness.js';

const REPO = 'acme/ops';

const fixture = serverForFile();

beforeAll(() => {
  createOpenRepository(fixture.repos, REPO);
});

async function scrapeText(url = fixture.server.url, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(`${url}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

async function scrape(url = fixture.server.url, headers: Record<string, string> = {}): Promise<Family[]> {
  return parsePrometheusTextFormat(await scrapeText(url, headers));
}

/** The value of a counter or gauge sample whose labels include `labels`; 0 when absent. */
function valueOf(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(sample?.value ?? sample?.count ?? 0);
}

const set = (key: string, value: string) => ({ key, values: [{ context: '*;*', value }] });

describe('GET /metrics', () => {
  it('counts pushes (applied, unchanged, refused by class), commits, fsyncs, requests and cache hits', async () => {
    const beforeText = await scrapeText();
    const before = parsePrometheusTextFormat(beforeText);
    const applied = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
      enableKeyCreation: true,
      data: [set('a', '1')],
    });
    expect(applied.status).toBe(200);
    expect((await pushTo(fixture.server.url, `/rest/push/${REPO}`, { data: [set('a', '1')] })).status).toBe(200); // unchanged
    expect((await pushTo(fixture.server.url, `/rest/push/${REPO}`, { data: [set('missing', '1')] })).status).toBe(304);
    for (let i = 0; i < 2; i++)
      expect((await getJson(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Production;web' })).status).toBe(200);
    const afterText = await scrapeText();
    const after = parsePrometheusTextFormat(afterText);

    const delta = (name: string, labels?: Record<string, string>) =>
      valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(delta('cfghub_pushes_total', { outcome: 'applied' })).toBe(1);
    expect(delta('cfghub_pushes_total', { outcome: 'unchanged' })).toBe(1);
    expect(delta('cfghub_pushes_total', { outcome: 'refused' })).toBe(1);
    expect(delta('cfghub_push_refusals_total', { reason: 'missing' })).toBe(1);
    expect(delta('cfghub_commit_duration_seconds')).toBe(1);
    expect(delta('cfghub_fsync_duration_seconds')).toBeGreaterThan(0);
    expect(
      delta('cfghub_http_requests_total', { route: '/rest/push/:account/:repository', status: '200', method: 'POST' }),
    ).toBe(2);
    expect(
      delta('cfghub_http_requests_total', { route: '/rest/push/:account/:repository', status: '304', method: 'POST' }),
    ).toBe(1);
    // The parser folds the buckets of a labelled histogram together, so its count is read from the text.
    const pullLatency = (text: string) =>
      Number(
        /^cfghub_http_request_duration_seconds_count\{method="GET",route="\/rest\/pull\/:account\/:repository"\} (\d+)$/m.exec(
          text,
        )?.[1] ?? 0,
      );
    expect(pullLatency(afterText) - pullLatency(beforeText)).toBe(2);
    expect(delta('cfghub_read_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(delta('cfghub_read_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'cfghub_snapshot_load_duration_seconds')).toBeGreaterThan(0);
    expect(valueOf(after, 'cfghub_repositories')).toBe(1);
    expect(valueOf(after, 'cfghub_watchers')).toBe(0);
    expect(valueOf(after, 'cfghub_open_pack_bytes')).toBeGreaterThan(0); // the repository's packs, opened by the push's reads
    expect(valueOf(after, 'cfghub_open_pack_budget_bytes')).toBe(HELD_PACKS_BYTES); // one process: the whole budget
    // Process health from prom-client's defaults: event-loop delay and memory.
    expect(after.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'nodejs_eventloop_lag_p99_seconds',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
      ]),
    );
  });

  it('counts tokens, and labels an unknown path by no more than "unmatched"', async () => {
    cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'counted');
    await getJson(fixture.server.url, '/no/such/path/12345');
    const families = await scrape();
    expect(valueOf(families, 'cfghub_client_tokens')).toBe(1);
    expect(
      valueOf(families, 'cfghub_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(families)).not.toContain('12345');
  });

  it('answers only with the metrics token when one is set', async () => {
    const deps: HttpOptions = {
      registry: new RepositoryRegistry(fixture.repos),
      tokens: new TokenService(new TokenStore(fixture.repos)),
      logger: pino({ level: 'silent' }),
      bodyLimit: 1024,
      metricsToken: 's3cret-metrics',
    };
    const running = await startServer(deps, 0, '127.0.0.1');
    try {
      const refused = await getJson(running.url, '/metrics');
      expect(refused.status).toBe(401);
      expect(refused.json).toMatchObject({ error: 'unauthorized' });
      expect((await getJson(running.url, '/metrics', { Authorization: 'Bearer wrong' })).status).toBe(401);
      expect((await scrape(running.url, { Authorization: 'Bearer s3cret-metrics' })).length).toBeGreaterThan(0);
    } finally {
      await running.close();
      deps.registry.close();
      deps.tokens.close();
    }
  });
});

describe('GET /readyz', () => {
  it('turns 503 naming the reason when the repositories folder disappears, and 200 when it returns', async () => {
    const ready = await getJson(fixture.server.url, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ready', problems: [], unreadable: [] });
    const aside = `${fixture.repos}-aside`;
    renameSync(fixture.repos, aside);
    try {
      const gone = await getJson(fixture.server.url, '/readyz');
      expect(gone.status).toBe(503);
      expect(gone.json.status).toBe('unready');
      expect(gone.json.problems).toEqual(['the repositories folder does not exist']);
      expect(gone.text).not.toContain(fixture.repos);
      expect((await getJson(fixture.server.url, '/healthz')).status).toBe(200); // the process still answers
    } finally {
      renameSync(aside, fixture.repos);
    }
    expect((await getJson(fixture.server.url, '/readyz')).status).toBe(200);
  });

  it('names an unreadable repository without turning unready', async () => {
    mkdirSync(join(fixture.repos, 'acme', 'broken.git'));
    try {
      const answer = await getJson(fixture.server.url, '/readyz');
      expect(answer.status).toBe(200);
      expect(answer.json.unreadable).toEqual([expect.objectContaining({ repository: 'acme/broken' })]);
    } finally {
      renameSync(join(fixture.repos, 'acme', 'broken.git'), join(fixture.repos, 'broken-aside'));
    }
  });

  it('is 503 while start-up work is not finished', async () => {
    let starting: string | undefined = 'start-up recovery is not finished';
    const deps: HttpOptions = {
      registry: new RepositoryRegistry(fixture.repos),
      tokens: new TokenService(new TokenStore(fixture.repos)),
      logger: pino({ level: 'silent' }),
      bodyLimit: 1024,
      starting: () => starting,
    };
    const running = await startServer(deps, 0, '127.0.0.1');
    try {
      const early = await getJson(running.url, '/readyz');
      expect(early.status).toBe(503);
      expect(early.json.problems).toEqual(['start-up recovery is not finished']);
      starting = undefined;
      expect((await getJson(running.url, '/readyz')).status).toBe(200);
    } finally {
      await running.close();
      deps.registry.close();
      deps.tokens.close();
    }
  });
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const answer = await getJson(fixture.server.url, '/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.json.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(answer.json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes exactly the routes the server dispatches from, but those named undocumented, and every route answers', async () => {
    const described = describedRoutes();
    const entry = (route: HttpRoute) => `${route.method.toUpperCase()} ${route.path}`;
    // What OpenAPI cannot describe is said in the table, each with its reason: these and no others.
    expect(ROUTE_TABLE.filter((route) => 'undocumented' in route).map(entry)).toEqual([
      'GET /spring/*rest',
      'POST /ofrep/v1/evaluate/flags',
      'POST /ofrep/v1/evaluate/flags/:key',
      'POST /openfeature/:account/:repository/ofrep/v1/evaluate/flags',
      'POST /openfeature/:account/:repository/ofrep/v1/evaluate/flags/:key',
      'GET /git/*rest',
    ]);
    expect([...described].sort()).toEqual(
      ROUTE_TABLE.filter((route) => !('undocumented' in route))
        .map(entry)
        .sort(),
    );
    expect(new Set(ROUTE_TABLE.map(entry)).size).toBe(ROUTE_TABLE.length);
    // Every route of the table is dispatched to its handler: none falls through to "no such endpoint".
    for (const route of ROUTE_TABLE) {
      const url = route.path
        .replace(/:account/, 'acme')
        .replace(/:repository/, 'ops')
        .replace(/[:*][A-Za-z]+/g, 'x');
      const response = await fetch(`${fixture.server.url}${url}`, {
        method: route.method,
        headers: { 'Content-Type': 'application/json' },
        body: route.method === 'get' ? undefined : '{}',
      });
      expect(await response.text(), entry(route)).not.toContain('no such endpoint');
    }
    const document = (await getJson(fixture.server.url, '/openapi.json')).json;
    for (const described of describedRoutes()) {
      const [method, path] = described.split(' ');
      expect(document.paths[openApiPath(path)]?.[method.toLowerCase()], described).toBeDefined();
    }
  });

  it('answers a path no route has, or a method its path does not answer, 404 naming both', async () => {
    for (const [method, path] of [
      ['GET', '/rest/nosuch/acme/ops'],
      ['DELETE', '/rest/pull/acme/ops'],
      ['GET', '/rest/push/acme/ops'],
      ['PUT', '/rest/admin/repositories'],
    ]) {
      const response = await fetch(`${fixture.server.url}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(await response.json()).toMatchObject({
        error: 'not_found',
        message: `no such endpoint: ${method} ${path}`,
      });
    }
  });
});
