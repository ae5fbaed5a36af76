/**
 * Pull throughput: `GET /rest/pull` of a 1,000-key repository for a fully
 * qualified context, against three references serving the same data:
 *  - `GET /static` answering the very same bytes from the same server process;
 *  - a bare node:http server in a process of its own answering those bytes;
 *  - an etcd range read of the same resolved values through etcd's HTTP gateway, when
 *    etcd is installed.
 * Loaded by wrk or the Node fallback (load.ts) with 1 and with 16 keep-alive connections.
 *
 * The endpoints are measured in short slices in rotating order (pull, static, bare, etcd, then
 * static, bare, etcd, pull, …), so a noisy second on the shared machine hits all alike, and each
 * round of slices gives one ratio per reference; the reported ratio is their median.
 */
import { createHash } from 'node:crypto';
import { startBareHttpServer, type BareHttpServer } from '../bareHttpServer.js';
import { coreWorkers } from '../../src/server/serveConfig.js';
import { serveQuietInChild } from '../serveProcess.js';
import type { EtcdServer } from '../etcd.js';
import type { Log, ReadFixture } from '../fixtures.js';
import { startLoadGenerator, type LoadGenerator, type SliceResult } from '../load.js';
import type { PullPlan } from '../plan.js';
import { PullServerProcess } from '../pullServer.js';
import { residentOfTree } from '../serveProcess.js';
import type { Measurement, ScenarioResult } from '../results.js';
import { median, mergeHistograms, summarizeLoad } from '../stats.js';

export const PULL = 'cfghub pull';
/** The same pull from `cfghub serve` as a user starts it: its default, one worker per core. */
export const PULL_WORKERS = `cfghub pull, serve --workers auto (${coreWorkers()} workers)`;
export const STATIC = 'static bytes, same server';
export const BARE_HTTP = 'bare node:http process';
export const ETCD_RANGE = 'etcd range read';

export function pullScenarioId(connections: number): string {
  return `pull-c${connections}`;
}

interface Endpoint {
  readonly name: string;
  readonly url: string;
  /** A POST body (etcd's range read); GET when absent. */
  readonly body?: string;
  /** The least size of its answer. */
  readonly bodyBytes: number;
}

/** The HTTP endpoints must answer 200 with byte-identical bodies, or the comparison is void. */
async function checkSameBytes(endpoints: readonly Endpoint[], headers: Record<string, string>): Promise<Buffer> {
  const bodies = await Promise.all(
    endpoints.map(async ({ name, url }) => {
      const response = await fetch(url, { headers });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200)
        throw new Error(`${name} (${url}) answered ${response.status}: ${body.toString('utf8', 0, 300)}`);
      return body;
    }),
  );
  const digests = bodies.map((body) => createHash('sha1').update(body).digest('hex'));
  if (new Set(digests).size !== 1)
    throw new Error(`the pull and static endpoints answered different bytes (${digests.join(' vs ')})`);
  return bodies[0];
}

/**
 * Another server's answer to the same pull: the same bytes but for `generatedOn`, the second its
 * answer was made (of the same length).
 */
async function checkSameAnswer(endpoint: Endpoint, expected: Buffer, headers: Record<string, string>): Promise<void> {
  const response = await fetch(endpoint.url, { headers });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200)
    throw new Error(`${endpoint.name} (${endpoint.url}) answered ${response.status}: ${body.toString('utf8', 0, 300)}`);
  const content = (bytes: Buffer) => ({ ...(JSON.parse(bytes.toString('utf8')) as object), generatedOn: undefined });
  if (body.length !== expected.length || JSON.stringify(content(body)) !== JSON.stringify(content(expected))) {
    throw new Error(
      `${endpoint.name} answered another pull than the single-process server (${body.length} vs ${expected.length} bytes)`,
    );
  }
}

/** etcd holds each resolved key under /pull/ with its value; its range answer lists them all. */
async function etcdEndpoint(etcd: EtcdServer, fixture: ReadFixture): Promise<Endpoint> {
  const prefix = '/pull/';
  await etcd.load(fixture.context.values.map(({ key, value }) => ({ key: `${prefix}${key}`, value })));
  const { count, bytes } = await etcd.range(prefix);
  if (count !== fixture.context.resolvedKeys)
    throw new Error(`etcd's range read returned ${count} keys, expected ${fixture.context.resolvedKeys}`);
  // The answer's header (revision, term) may differ by a digit from read to read.
  return { name: ETCD_RANGE, url: `${etcd.url}/v3/kv/range`, body: etcd.rangeBody(prefix), bodyBytes: bytes - 16 };
}

function range(values: readonly number[]): string {
  return `${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))}`;
}

export async function runPullScenario(
  fixture: ReadFixture,
  etcd: EtcdServer | undefined,
  plan: PullPlan,
  log: Log,
): Promise<ScenarioResult[]> {
  const server = await PullServerProcess.start({
    reposRoot: fixture.reposRoot,
    pullPath: fixture.pullPath,
    context: fixture.context.text,
  });
  let load: LoadGenerator | undefined;
  let bare: BareHttpServer | undefined;
  let workers: Awaited<ReturnType<typeof serveQuietInChild>> | undefined;
  try {
    workers = await serveQuietInChild(fixture.reposRoot, coreWorkers());
    load = await startLoadGenerator(log);
    // The same request headers go to every endpoint (the references ignore them), so requests are alike.
    const headers = { Context: fixture.context.text };
    const bytes = server.bodyBytes;
    const pullEndpoint: Endpoint = { name: PULL, url: `${server.url}${fixture.pullPath}`, bodyBytes: bytes };
    const staticEndpoint: Endpoint = { name: STATIC, url: `${server.url}/static`, bodyBytes: bytes };
    const body = await checkSameBytes([pullEndpoint, staticEndpoint], headers);
    bare = await startBareHttpServer(body);
    const bareEndpoint: Endpoint = { name: BARE_HTTP, url: bare.url, bodyBytes: bytes };
    await checkSameBytes([pullEndpoint, bareEndpoint], headers);
    const workersEndpoint: Endpoint = {
      name: PULL_WORKERS,
      url: `${workers.url}${fixture.pullPath}`,
      bodyBytes: bytes,
    };
    await checkSameAnswer(workersEndpoint, body, headers);
    const etcdRange = etcd ? [await etcdEndpoint(etcd, fixture)] : [];
    const endpoints = [pullEndpoint, staticEndpoint, bareEndpoint, ...etcdRange, workersEndpoint];
    const references = [STATIC, BARE_HTTP, ...etcdRange.map((e) => e.name)];
    // The multi-worker server's ratios: against the references and the single process.
    const workersReferences = [BARE_HTTP, PULL, ...etcdRange.map((e) => e.name)];
    const results: ScenarioResult[] = [];
    for (const connections of plan.connections) {
      const started = performance.now();
      const slice = (endpoint: Endpoint, seconds: number) =>
        load!.run({
          url: endpoint.url,
          headers,
          connections,
          seconds,
          bodyBytes: endpoint.bodyBytes,
          body: endpoint.body,
        });
      for (const endpoint of endpoints) await slice(endpoint, plan.warmupSeconds);
      const slices = new Map<string, SliceResult[]>(endpoints.map((e) => [e.name, []]));
      for (let i = 0; i < plan.slices; i++) {
        // Rotating order: each endpoint runs first in some rounds, so none always follows another.
        const order = endpoints.map((_, k) => endpoints[(i + k) % endpoints.length]);
        for (const endpoint of order) slices.get(endpoint.name)!.push(await slice(endpoint, plan.sliceSeconds));
      }
      const rps = (name: string) => slices.get(name)!.map((s) => s.requestsPerSecond);
      const measurements: Measurement[] = endpoints.map(({ name }) => {
        const mine = slices.get(name)!;
        const histogram = mergeHistograms(mine.map((s) => s.histogram));
        const seconds = mine.reduce((sum, s) => sum + s.seconds, 0);
        const requests = mine.reduce((sum, s) => sum + s.requests, 0);
        const over = (mine: string, theirs: readonly string[]) =>
          Object.fromEntries(
            theirs.map((reference) => [reference, median(rps(mine).map((value, k) => value / rps(reference)[k]))]),
          );
        const speedups =
          name === PULL
            ? over(PULL, references)
            : name === PULL_WORKERS
              ? over(PULL_WORKERS, workersReferences)
              : undefined;
        return {
          implementation: name,
          samples: [],
          summary: summarizeLoad(histogram, requests, seconds),
          ...(speedups ? { speedups } : {}),
          load: {
            generator: load!.name,
            connections,
            slices: mine.map(({ histogram: _, ...figures }) => figures),
            histogram,
          },
        };
      });
      log(
        `pull vs references, ${connections} connection(s): ${endpoints.length * (plan.slices + 1)} slices in ${Math.round((performance.now() - started) / 1000)} s`,
      );
      const plural = connections === 1 ? '' : 's';
      results.push({
        id: pullScenarioId(connections),
        title: `GET /rest/pull, ${fixture.keyCount.toLocaleString('en-US')} keys (${(bytes / 1024).toFixed(0)} KiB), ${connections} connection${plural}`,
        references,
        measurements,
        notes: [
          `${plan.slices} slices of ${plan.sliceSeconds} s per endpoint after ${plan.warmupSeconds} s of warm-up each, in rotating order; p50 and p99 from the latencies of all the slices pooled; requests per second by slice: ${endpoints.map((e) => `${e.name} ${range(rps(e.name))}`).join(', ')}`,
        ],
      });
    }
    // What holds for both connection counts is said once, ahead of the first one's own note.
    const serverMiB = await server.residentMiB();
    const workersMiB = residentOfTree(workers.pid).map((p) => Math.round(p.kiB / 1024));
    const [first, ...rest] = results;
    const shared = [
      `GET ${fixture.pullPath} with \`Context: ${fixture.context.text}\` (fully qualified; resolves ${fixture.context.resolvedKeys} of ${fixture.keyCount.toLocaleString('en-US')} keys, the most of any such context; ${bytes} bytes of JSON, token-free pull), in a server process started for this scenario (RSS ${server.residentMiBAtStart} MiB at start, ${serverMiB} MiB at the end)`,
      `${STATIC}: GET /static answering those very bytes (checked byte for byte) by plain node:http calls ahead of cfghub's request listener in the same process (no request id, no log call, no route match); ${BARE_HTTP}: bench/bare-http-server.mjs, a process that only answers those bytes (checked byte for byte)`,
      etcd
        ? `${ETCD_RANGE}: POST /v3/kv/range of the ${fixture.context.resolvedKeys} resolved keys with their values (etcd ${etcd.version}, HTTP gateway, one member, answers base64 JSON of about ${Math.round(endpoints[3].bodyBytes / 1024)} KiB)`
        : 'etcd not installed (bench/install-tools.sh): no etcd row',
      `${PULL_WORKERS}: \`cfghub serve\` (the built CLI) with \`--workers auto\`, one worker per core (node:cluster hands each new connection to the next worker), with LOG_LEVEL=warn (no line per request, as the single-process server here logs none), on the same repositories folder, the same answer checked (its \`generatedOn\` aside); RSS at the end ${workersMiB.reduce((a, b) => a + b, 0)} MiB (primary ${workersMiB[0]} MiB, workers ${workersMiB.slice(1).join(' and ')} MiB). ${PULL}, ${STATIC}: one process (the single-worker server)`,
      `load generator: ${load.description}`,
    ];
    return [{ ...first, notes: [...shared, ...first.notes] }, ...rest];
  } finally {
    await load?.close();
    await bare?.close();
    await workers?.close();
    await server.close();
  }
}
