/**
 * A replica following a hostile or broken primary: a real `cfghub serve --replica-of` process
 * follows a fake primary (node:http in this process) that forwards to a real primary while sane,
 * and otherwise sends an endless state body, a feed line that never ends, a state naming more
 * repositories than a replica follows, or a feed dripping a byte now and then. Through each the
 * replica answers /healthz and reads promptly, serves what it has, keeps its memory bounded and
 * says why in its log; when the primary is sane again it follows again. And a real primary holding
 * more repositories than a replica follows refuses to name them.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, getJson, pushTo, tempDir } from '../../support/harness.js';
import { until } from '../../support/poll.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';
import { MAX_STATE_BYTES, STATE_TIMEOUT_MS } from '../../../src/service/replication/replicator.js';
import { MAX_REPLICATED_REPOSITORIES } from '../../../src/service/replication/state.js';
import { expectWithin } from '../../support/wallClock.js';

const APP = 'acme/app';
const MiB = 1024 * 1024;
/** The most a hostile answer sends (far past the bound): without a bound the replica would hold all of it. */
const HOSTILE_BYTES = 6 * MAX_STATE_BYTES;
/** How long /healthz or a read may take while the replica is under attack (a loaded test machine included). */
const PROMPT_MS = 1_500;
/** A replica's peak memory may grow by this much over the whole attack: about two bounds' worth. */
const MEMORY_GROWTH = 3 * MAX_STATE_BYTES;

type Mode = 'sane' | 'endless-state' | 'endless-line' | 'too-many' | 'drip';

const dirs = { primary: tempDir(), replica: tempDir(), crowded: tempDir() };
let primary: ServerProcess;
let replica: ServerProcess;
let fake: http.Server;
let fakeUrl: string;
let token: string;
let mode: Mode = 'sane';
/** Answers in progress: cut when the mode changes, so the replica asks again. */
const inFlight = new Set<http.ServerResponse>();
const sent = { state: 0, line: 0 };

/** Writes `piece` until `total` bytes or the replica hangs up, waiting for the socket to drain (no buffering here). */
async function pour(res: http.ServerResponse, piece: Buffer, total: number, counter: 'state' | 'line'): Promise<void> {
  let written = 0;
  while (written < total && !res.destroyed) {
    written += piece.length;
    sent[counter] += piece.length;
    if (!res.write(piece))
      await new Promise<void>((resolve) => {
        const go = () => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
  }
}

function forward(req: http.IncomingMessage, res: http.ServerResponse): void {
  const upstream = http.request(
    new URL(req.url ?? '/', primary.url),
    { method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

async function realState(): Promise<{ origin: unknown; repositories: unknown[] }> {
  return (await getJson(primary.url, '/rest/replication/state', { 'Client-Token': token })).json;
}

async function hostile(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const isState = req.url === '/rest/replication/state';
  const isFeed = req.url === '/rest/replication/feed';
  if (mode === 'endless-state' && isState) {
    const { origin } = await realState();
    res.writeHead(200, { 'Content-Type': 'application/json' }); // chunked: no length announced
    res.write(`{"origin":${JSON.stringify(origin)},"repositories":[`);
    const entry = `{"account":"acme","name":"padding","head":"","refs":""},`;
    await pour(res, Buffer.from(entry.repeat(Math.ceil(MiB / entry.length))), HOSTILE_BYTES, 'state');
    res.end();
    return;
  }
  if (mode === 'too-many' && isState) {
    const state = await realState();
    for (let i = state.repositories.length; i <= MAX_REPLICATED_REPOSITORIES; i++)
      state.repositories.push({ account: 'acme', name: `extra-${i}`, head: '', refs: '' });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(state));
    return;
  }
  if ((mode === 'endless-state' || mode === 'too-many') && isFeed) {
    res.writeHead(503).end();
    return;
  }
  if (mode === 'endless-line' && isFeed) {
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    res.write('{"same":true}\n{"state":{"padding":"');
    await pour(res, Buffer.alloc(MiB, 'x'), HOSTILE_BYTES, 'line');
    res.end();
    return;
  }
  if (mode === 'drip' && isFeed) {
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    res.write('{"same":true}\n{"sa');
    const drip = setInterval(() => res.write('a'), 500);
    res.on('close', () => clearInterval(drip));
    return;
  }
  forward(req, res);
}

function setMode(next: Mode): void {
  mode = next;
  for (const res of inFlight) res.destroy();
}

const replicaLog = () => replica.output().split('\n');
const logged = (problem: RegExp) =>
  replicaLog().some((line) => line.includes('"event":"replication-failed"') && problem.test(line));

/** Peak resident memory of the replica process so far, in bytes. */
function peakMemory(): number {
  const status = fs.readFileSync(`/proc/${replica.pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

/** Times /healthz and a read of the replica until `done`; returns the slowest answer, in ms. */
async function slowestWhile(done: () => boolean, what: string, timeoutMs: number): Promise<number> {
  let slowest = 0;
  await until(
    async () => {
      for (const path of ['/healthz', `/rest/pull/${APP}`]) {
        const started = performance.now();
        const answer = await fetch(`${replica.url}${path}`, {
          headers: { Context: 'Prod' },
          signal: AbortSignal.timeout(30_000),
        });
        const text = await answer.text();
        slowest = Math.max(slowest, performance.now() - started);
        expect(answer.status).toBe(200);
        if (path !== '/healthz') expect(text).toContain('one');
      }
      return done();
    },
    what,
    timeoutMs,
  );
  return slowest;
}

let baseline: number;

beforeAll(async () => {
  cliOk(dirs.primary.path, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull');
  token = cliOk(dirs.primary.path, 'token', 'create', '--replication').trim();
  primary = await startServerProcess(dirs.primary.path);
  const pushed = await pushTo(primary.url, `/rest/push/${APP}`, {
    enableKeyCreation: true,
    data: [{ key: 'feature.flag', values: [{ context: '*', value: 'one' }] }],
  });
  expect(pushed.status).toBe(200);
  fake = http.createServer((req, res) => {
    inFlight.add(res);
    res.on('close', () => inFlight.delete(res));
    hostile(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  replica = await startServerProcess(
    dirs.replica.path,
    { CFGHUB_REPLICATION_TOKEN: token },
    [],
    ['--replica-of', fakeUrl],
  );
  await until(
    async () => (await getJson(replica.url, `/rest/pull/${APP}`, { Context: 'Prod' })).text.includes('one'),
    'the replica serving one',
    20_000,
  );
  baseline = peakMemory();
});

afterAll(async () => {
  await replica?.kill();
  await primary?.kill();
  for (const res of inFlight) res.destroy();
  fake?.closeAllConnections();
  await new Promise((resolve) => fake?.close(resolve));
  for (const dir of Object.values(dirs)) dir.remove();
});

describe('a replica whose primary is hostile', () => {
  it('refuses an endless state body at its bound, answering promptly, its memory bounded', async () => {
    setMode('endless-state');
    const slowest = await slowestWhile(
      () => logged(new RegExp(`state is larger than ${MAX_STATE_BYTES} bytes`)),
      'the refusal of the endless state in the log',
      30_000,
    );
    expectWithin(slowest, PROMPT_MS, 'the slowest /healthz or read meanwhile');
    expect(peakMemory() - baseline).toBeLessThan(MEMORY_GROWTH);
  });

  it('refuses a feed line with no end at its bound, looking at each byte once', async () => {
    setMode('endless-line');
    const slowest = await slowestWhile(
      () => logged(new RegExp(`a line of the feed is larger than ${MAX_STATE_BYTES} bytes`)),
      'the refusal of the endless line in the log',
      60_000,
    );
    expectWithin(slowest, PROMPT_MS, 'the slowest /healthz or read meanwhile');
    expect(sent.line).toBeGreaterThan(MAX_STATE_BYTES);
    expect(peakMemory() - baseline).toBeLessThan(MEMORY_GROWTH);
  });

  it(`refuses a state naming more than ${MAX_REPLICATED_REPOSITORIES} repositories`, async () => {
    setMode('too-many');
    const slowest = await slowestWhile(
      () =>
        logged(
          new RegExp(
            `names ${MAX_REPLICATED_REPOSITORIES + 1} repositories, more than the ${MAX_REPLICATED_REPOSITORIES} a replica follows`,
          ),
        ),
      'the refusal of the crowded state in the log',
      30_000,
    );
    expectWithin(slowest, PROMPT_MS, 'the slowest /healthz or read meanwhile');
    const status = (await getJson(replica.url, '/readyz')).json;
    expect(status.replica.repositories).toBe(1);
    expect(status.replica.lastError).toMatch(/more than the 10000 a replica follows/);
  });

  it('drops a feed that drips a byte now and then without finishing a line', async () => {
    setMode('drip');
    const started = performance.now();
    const slowest = await slowestWhile(
      () => logged(new RegExp(`completed no feed line in ${STATE_TIMEOUT_MS / 1000} s`)),
      'the dripping feed dropped',
      3 * STATE_TIMEOUT_MS,
    );
    expectWithin(slowest, PROMPT_MS, 'the slowest /healthz or read meanwhile');
    expect(performance.now() - started).toBeGreaterThanOrEqual(STATE_TIMEOUT_MS);
  });

  it('follows again when the primary is sane again', async () => {
    setMode('sane');
    const pushed = await pushTo(primary.url, `/rest/push/${APP}`, {
      data: [{ key: 'feature.flag', values: [{ context: '*', value: 'two' }] }],
    });
    expect(pushed.status).toBe(200);
    await until(
      async () => (await getJson(replica.url, `/rest/pull/${APP}`, { Context: 'Prod' })).text.includes('two'),
      'the replica serving two',
      30_000,
    );
    await until(async () => (await getJson(replica.url, '/readyz')).json.replica.lastError === null, 'no error left');
    expect(peakMemory() - baseline).toBeLessThan(MEMORY_GROWTH);
  });
});

describe(`a primary holding more than ${MAX_REPLICATED_REPOSITORIES} repositories`, () => {
  it('refuses the state and the feed, saying why', async () => {
    cliOk(dirs.crowded.path, 'repo', 'create', APP, '--context', 'Env');
    const crowdedToken = cliOk(dirs.crowded.path, 'token', 'create', '--replication').trim();
    for (let i = 0; i < MAX_REPLICATED_REPOSITORIES; i++) fs.mkdirSync(join(dirs.crowded.path, 'acme', `r${i}.git`));
    const crowded = await startServerProcess(dirs.crowded.path);
    try {
      const headers = { 'Client-Token': crowdedToken };
      const state = await getJson(crowded.url, '/rest/replication/state', headers);
      expect(state.status).toBe(409);
      expect(state.text).toContain(
        `holds ${MAX_REPLICATED_REPOSITORIES + 1} repositories, more than the ${MAX_REPLICATED_REPOSITORIES}`,
      );
      const feed = await fetch(`${crowded.url}/rest/replication/feed`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ refs: {}, tokensDigest: '', adminTokensDigest: '' }),
      });
      expect(feed.status).toBe(409);
      expect(await feed.text()).toContain(`more than the ${MAX_REPLICATED_REPOSITORIES} a replica follows`);
    } finally {
      await crowded.kill();
    }
  });
});
