/**
 * `cfghub serve --workers 2` as a real process tree: pushes handled by both workers
 * land in order with none lost (checked with git), a watch held by one worker is woken by a push
 * another handled, /metrics answers the sum of both, SIGTERM drains both, and a worker killed is
 * replaced. Each request goes on a connection of its own (rawRequest sends `Connection: close`),
 * and node:cluster hands new connections to the workers in turn; which worker answered is read
 * from the request's log line (`"worker": id`, found by its X-Request-Id).
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import { cliOk, git, gitdirOf, tempDir } from '../../support/harness.js';
import { until } from '../../support/poll.js';
import { rawRequest, type RawAnswer } from '../../support/rawHttp.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';
import { HELD_PACKS_BYTES } from '../../../src/disk/objects/heldPacks.js';

const REPO = 'acme/shared';
let dir: ReturnType<typeof tempDir>;
let server: ServerProcess;
let counter = 0;

interface LogEntry {
  readonly worker?: number;
  readonly reqId?: string;
  readonly event?: string;
  readonly pid?: number;
  readonly pids?: number[];
  readonly [field: string]: unknown;
}

function logOf(target: ServerProcess): LogEntry[] {
  return target
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogEntry);
}

/** A request on a connection of its own, with a request id to find its log line by. */
async function send(
  target: ServerProcess,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<RawAnswer & { id: string }> {
  const id = `w-${process.pid}-${++counter}`;
  const answer = await rawRequest(target.url, {
    method,
    path,
    headers: { 'X-Request-Id': id, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body,
  });
  return { ...answer, id };
}

/** The worker that answered a request (its log line is written when the answer ends). */
async function workerOf(target: ServerProcess, id: string): Promise<number> {
  let entry: LogEntry | undefined;
  await until(
    () => (entry = logOf(target).find((e) => e.reqId === id && e.status !== undefined)) !== undefined,
    `the log line of request ${id}`,
  );
  expect(entry!.worker).toEqual(expect.any(Number));
  return entry!.worker!;
}

const push = (target: ServerProcess, key: string, value: string, comment: string) =>
  send(
    target,
    'POST',
    `/rest/push/${REPO}`,
    {},
    { changeComment: comment, enableKeyCreation: true, data: [{ key, values: [{ context: '*;*', value }] }] },
  );

function alive(pid: number): boolean {
  return existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(safeRead(`/proc/${pid}/status`));
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function valueOf(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(sample?.value ?? sample?.count ?? 0);
}

beforeAll(async () => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  server = await startServerProcess(dir.path, {}, [], ['--workers', '2']);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  dir.remove();
});

describe('serve --workers 2', () => {
  it('starts two workers and logs listening once, naming them', () => {
    const listening = logOf(server).filter((e) => e.event === 'listening');
    expect(listening).toHaveLength(1);
    expect(listening[0]).toMatchObject({ workers: 2, pids: [expect.any(Number), expect.any(Number)] });
    expect(listening[0].pids!.every(alive)).toBe(true);
  });

  it('lands pushes handled by both workers in the order they were acknowledged, none lost', async () => {
    const gitdir = gitdirOf(dir.path, REPO);
    const before = Number(git(gitdir, 'rev-list', '--count', 'main').trim());
    // One after the other, each on a new connection: the workers take turns.
    const acknowledged: string[] = [];
    const workers = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const answer = await push(server, 'counter', String(i), `sequential ${i}`);
      expect(answer.status).toBe(200);
      acknowledged.push(answer.headers.etag!.replaceAll('"', ''));
      workers.add(await workerOf(server, answer.id));
    }
    expect(workers.size).toBe(2);
    // git's own log, newest first: exactly these commits, in this order, each the child of the one before.
    expect(git(gitdir, 'log', '--format=%H', '-8', 'main').trim().split('\n').reverse()).toEqual(acknowledged);
    expect(git(gitdir, 'log', '--format=%s', '-8', 'main').trim().split('\n').reverse()).toEqual(
      acknowledged.map((_, i) => `sequential ${i}`),
    );

    // Sixteen at once, into one repository, through both workers: every acknowledged commit is in
    // the history, and every key has its value.
    const concurrent = await Promise.all(
      Array.from({ length: 16 }, (_, i) => push(server, `key${i}`, `v${i}`, `concurrent ${i}`)),
    );
    for (const answer of concurrent) expect(answer.status).toBe(200);
    const history = new Set(git(gitdir, 'rev-list', 'main').trim().split('\n'));
    for (const answer of concurrent) expect(history.has(answer.headers.etag!.replaceAll('"', ''))).toBe(true);
    expect(history.size).toBe(before + 8 + 16);
    expect(git(gitdir, 'rev-list', '--merges', '--count', 'main').trim()).toBe('0');
    expect(new Set(await Promise.all(concurrent.map((a) => workerOf(server, a.id)))).size).toBe(2);
    const pulled = await send(server, 'GET', `/rest/pull/${REPO}`, { Context: 'Prod;web' });
    const values = (pulled.json as { properties: Record<string, { val: string }> }).properties;
    for (let i = 0; i < 16; i++) expect(values[`key${i}`]?.val).toBe(`v${i}`);
    expect(values.counter?.val).toBe('7');
  });

  it('wakes a watch held by one worker when the other worker handles the push', async () => {
    const current = await send(server, 'GET', `/rest/pull/${REPO}`, { Context: 'Prod;web' });
    expect(current.status).toBe(200);
    // Four watches on four connections: the workers take turns, so each holds two.
    const ids: string[] = [];
    const watches = Array.from({ length: 4 }, () => {
      const id = `watch-${process.pid}-${++counter}`;
      ids.push(id);
      return rawRequest(server.url, {
        method: 'GET',
        path: `/rest/pull/${REPO}`,
        headers: { 'X-Request-Id': id, Context: 'Prod;web', 'If-None-Match': current.headers.etag!, Wait: '60' },
      });
    });
    await until(async () => {
      const families = parsePrometheusTextFormat((await send(server, 'GET', '/metrics')).body);
      return valueOf(families, 'cfghub_watchers') === 4;
    }, 'four watches held');
    const pushed = await push(server, 'color', 'blue', 'wake them');
    expect(pushed.status).toBe(200);
    const answers = await Promise.all(watches);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.etag).not.toBe(current.headers.etag);
      expect(answer.json.properties.color).toEqual({ val: 'blue' });
    }
    const pusher = await workerOf(server, pushed.id);
    const watchers = await Promise.all(ids.map((id) => workerOf(server, id)));
    expect(watchers.some((worker) => worker !== pusher)).toBe(true);
  });

  it('answers /metrics with the sum of both workers', async () => {
    const scrape = async () => parsePrometheusTextFormat((await send(server, 'GET', '/metrics')).body);
    const before = await scrape();
    const answered: number[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await send(server, 'GET', '/healthz');
      expect(answer.status).toBe(200);
      answered.push(await workerOf(server, answer.id));
    }
    expect(new Set(answered).size).toBe(2);
    const after = await scrape();
    const healthz = { method: 'GET', route: '/healthz', status: '200' };
    // Whichever worker the scrape reached, it counts the requests both workers answered.
    expect(
      valueOf(after, 'cfghub_http_requests_total', healthz) - valueOf(before, 'cfghub_http_requests_total', healthz),
    ).toBe(10);
    expect(valueOf(after, 'cfghub_workers')).toBe(2);
    expect(valueOf(after, 'cfghub_repositories')).toBe(1); // the same in each worker: not doubled
    // Each worker holds open packs within its share of one budget: together, the server's (not twice it).
    expect(valueOf(after, 'cfghub_open_pack_budget_bytes')).toBe(HELD_PACKS_BYTES);
    expect(valueOf(after, 'cfghub_pushes_total', { outcome: 'applied' })).toBe(8 + 16 + 1);
    expect(valueOf(after, 'cfghub_commit_duration_seconds')).toBe(8 + 16 + 1);
  });

  it('replaces a worker that was killed, and logs it', async () => {
    const [victim, survivor] = logOf(server).find((e) => e.event === 'listening')!.pids!;
    process.kill(victim, 'SIGKILL');
    await until(
      () => logOf(server).some((e) => e.event === 'worker-exited' && e.pid === victim),
      'the worker-exited log line',
    );
    await until(
      () => logOf(server).some((e) => e.event === 'worker-restarted'),
      'the worker-restarted log line',
      30_000,
    );
    const restarted = logOf(server).find((e) => e.event === 'worker-restarted')!;
    expect(restarted.pid).not.toBe(victim);
    expect(alive(restarted.pid!)).toBe(true);
    expect(alive(survivor)).toBe(true);
    expect(logOf(server).find((e) => e.event === 'worker-exited')).toMatchObject({ level: 40, signal: 'SIGKILL' });
    // Both serve again: the new worker answers in its turn.
    const answered = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const answer = await send(server, 'GET', '/healthz');
      expect(answer.status).toBe(200);
      answered.add(await workerOf(server, answer.id));
    }
    expect(answered.has(restarted.worker!)).toBe(true);
    const families = parsePrometheusTextFormat((await send(server, 'GET', '/metrics')).body);
    expect(valueOf(families, 'cfghub_worker_restarts_total')).toBe(1);
    expect(valueOf(families, 'cfghub_workers')).toBe(2);
  });
});

describe('serve --workers 2, shutdown', () => {
  it('drains both workers on SIGTERM: an in-flight push is applied, held watches answer, every process exits', async () => {
    const own = await startServerProcess(dir.path, {}, [], ['--workers', '2']);
    try {
      const pids = logOf(own).find((e) => e.event === 'listening')!.pids!;
      const current = await send(own, 'GET', `/rest/pull/${REPO}`, { Context: 'Prod;web' });
      const watches = Array.from({ length: 2 }, () =>
        rawRequest(own.url, {
          method: 'GET',
          path: `/rest/pull/${REPO}`,
          headers: { Context: 'Prod;web', 'If-None-Match': current.headers.etag!, Wait: '60' },
        }),
      );
      await until(
        async () =>
          valueOf(parsePrometheusTextFormat((await send(own, 'GET', '/metrics')).body), 'cfghub_watchers') === 2,
        'two watches held',
      );
      // A push whose body is still arriving when SIGTERM comes: `Expect: 100-continue` makes the
      // worker say it has the request's headers, so the request is surely in flight at the signal.
      const body = JSON.stringify({
        changeComment: 'in flight at shutdown',
        enableKeyCreation: true,
        data: [{ key: 'late', values: [{ context: '*;*', value: 'yes' }] }],
      });
      const url = new URL(own.url);
      let headersTaken!: () => void;
      const taken = new Promise<void>((resolve) => (headersTaken = resolve));
      const req = request({
        host: url.hostname,
        port: url.port,
        path: `/rest/push/${REPO}`,
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          Expect: '100-continue',
        },
      });
      const inFlight = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject);
      });
      req.on('continue', () => {
        req.write(body.slice(0, 10));
        headersTaken();
      });
      req.flushHeaders();
      await taken;
      const stopped = own.stop();
      await until(() => logOf(own).some((e) => e.event === 'shutting-down'), 'the shutting-down log line');
      setTimeout(() => req.end(body.slice(10)), 200);
      expect(await inFlight).toBe(200);
      for (const watch of await Promise.all(watches)) expect(watch.status).toBe(304);
      await stopped;
      expect(git(gitdirOf(dir.path, REPO), 'log', '-1', '--format=%s', 'main').trim()).toBe('in flight at shutdown');
      expect(logOf(own).at(-1)).toMatchObject({ event: 'stopped' });
      expect(logOf(own).some((e) => e.event === 'worker-exited')).toBe(false);
      await until(() => !pids.some(alive), 'every worker to exit');
    } finally {
      await own.stop(); // a no-op once it exited; ends it when the test failed before
    }
  }, 60_000);
});
