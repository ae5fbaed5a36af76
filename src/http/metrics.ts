/**
 * `GET /metrics` in Prometheus' text format, made with prom-client. Per server (one
 * registry per HTTP front, held in its ServerParts): requests by route and status, latency per route, pushes by outcome
 * and refusals by reason class, repositories, tokens, watchers. Process-wide, from the telemetry
 * listeners of the layers below: commit and fsync durations, snapshot loads, read-cache hits and
 * misses; open HTTP connections; and prom-client's default process metrics (event-loop delay,
 * memory, CPU, file descriptors) but those that walk every handle (see PER_HANDLE_METRICS).
 *
 * With `serve --workers N` each worker counts its own, and a scrape answers the sum
 * of all (prom-client's AggregatorRegistry.aggregate): counters, histograms and the watchers are
 * summed; the repository and token counts, the same in every worker, are aggregated with `max`.
 *
 * Labels are bounded: a route is the pattern it matched (`/rest/push/:account/:repository`),
 * never the path asked for; a refusal is one of a few classes, never its text.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { REFUSAL_KINDS, type RefusalKind } from '../domain/applyPush.js';
import { AdminTokenService } from '../service/admin/adminTokens.js';
import { AdminTokenStore } from '../disk/records/adminTokenStore.js';
import { listen } from '../lib/telemetry.js';
import { heldPackBytes, heldPacksBudget } from '../disk/objects/heldPacks.js';
import type { HttpDeps, HttpOptions } from './deps.js';
import type { ServerParts } from './parts.js';
import { HttpError } from './answer/errors.js';
import { header, sendBytes } from './answer/headers.js';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DISK_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * prom-client's default metrics whose every scrape walks a list as long as the connections open:
 * every libuv handle (`process._getActiveHandles`), every active resource, every entry of
 * /proc/self/fd (listed on the event loop). With 10,000 held watches a scrape held the loop 20 to
 * 60 ms, with 18,000 connections 38 to 80 ms, and it grows with every connection. They are
 * dropped; `process_open_fds` is counted again at a cost that does not grow (openDescriptors), and
 * `cfghub_http_connections` says how many connections are open.
 */
const PER_HANDLE_METRICS = [
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
  'process_open_fds',
];

/**
 * The process's open file descriptors: the size Linux (6.2 and later) reports for /proc/self/fd,
 * which is their count, else the folder's entries listed in the thread pool (one of which is the
 * listing's own). Undefined where there is no /proc.
 */
async function openDescriptors(): Promise<number | undefined> {
  try {
    const { size } = await fs.stat('/proc/self/fd');
    return size > 0 ? size : (await fs.readdir('/proc/self/fd')).length - 1;
  } catch {
    return undefined;
  }
}

/** Where a request that matched no route pattern is counted. */
const GIT_PATH = /^\/git\//;

export class Metrics {
  readonly registry = new Registry();
  /** How many watchers are open; the read routes set it. */
  watchers: () => number = () => 0;
  /** Answers made for groups of watchers (one per group and new head); the read routes set it. */
  watchAnswersMade: () => number = () => 0;
  /** How many HTTP connections are open; the server (server.ts) sets it. */
  connections: () => number = () => 0;
  private readonly requests = new Counter({
    name: 'cfghub_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'cfghub_http_request_duration_seconds',
    help: 'Time from request to the end of its answer, by method and route pattern',
    labelNames: ['method', 'route'],
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly pushes = new Counter({
    name: 'cfghub_pushes_total',
    help: 'Pushes by outcome: applied (a commit), unchanged (nothing to commit), refused (304)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly refusals = new Counter({
    name: 'cfghub_push_refusals_total',
    help: 'Refused pushes by reason class',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  private readonly stopListening: () => void;

  constructor(deps: HttpOptions, parts: ServerParts) {
    collectDefaultMetrics({ register: this.registry, prefix: '' });
    for (const name of PER_HANDLE_METRICS) this.registry.removeSingleMetric(name);
    for (const outcome of ['applied', 'unchanged', 'refused']) this.pushes.inc({ outcome }, 0);
    for (const reason of REFUSAL_KINDS) this.refusals.inc({ reason }, 0);
    const commits = new Histogram({
      name: 'cfghub_commit_duration_seconds',
      help: 'Time to write a commit: objects, fsyncs and the ref update (process-wide)',
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    const fsyncs = new Histogram({
      name: 'cfghub_fsync_duration_seconds',
      help: 'Time of each fsync of a file or folder (process-wide)',
      buckets: DISK_BUCKETS,
      registers: [this.registry],
    });
    const snapshots = new Histogram({
      name: 'cfghub_snapshot_load_duration_seconds',
      help: 'Snapshot loads (a commit parsed into memory) and their time (process-wide)',
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    const cache = new Counter({
      name: 'cfghub_read_cache_lookups_total',
      help: 'Read-answer cache lookups by result: hit, miss (the answer made), or carried (the answer of the commit before, which the changes since do not reach) (process-wide)',
      labelNames: ['result'],
      registers: [this.registry],
    });
    cache.inc({ result: 'hit' }, 0);
    cache.inc({ result: 'miss' }, 0);
    const webhooks = new Counter({
      name: 'cfghub_webhook_deliveries_total',
      help: 'Webhook delivery attempts by how they ended (delivered, retrying, failed for good), and deliveries dropped while waiting',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    for (const outcome of ['delivered', 'retrying', 'failed', 'dropped']) webhooks.inc({ outcome }, 0);
    this.stopListening = listen({
      webhookDelivery: (outcome) => webhooks.inc({ outcome }),
      commit: (seconds) => commits.observe(seconds),
      fsync: (seconds) => fsyncs.observe(seconds),
      snapshotLoad: (seconds) => snapshots.observe(seconds),
      readCache: (result) => cache.inc({ result }),
    });

    const adminTokens = new AdminTokenService(new AdminTokenStore(deps.registry.root));
    // With `serve --workers N`, what every worker counts alike (the folder, the tokens, the replica's state) is
    // aggregated with max, a worker's own share (its watchers, packs, budget, connections) summed.
    const readGauges: readonly { name: string; help: string; aggregator: 'max' | 'sum'; read: () => number }[] = [
      {
        name: 'cfghub_repositories',
        aggregator: 'max',
        help: 'Repositories in the repositories folder',
        read: () => deps.registry.locations().length,
      },
      {
        name: 'cfghub_client_tokens',
        aggregator: 'max',
        help: 'Active (not revoked, not expired) client tokens',
        read: () => {
          let total = 0;
          for (const count of deps.tokens.activeCounts().values()) total += count;
          return total;
        },
      },
      {
        name: 'cfghub_admin_tokens',
        aggregator: 'max',
        help: 'Active admin tokens',
        read: () => adminTokens.activeCount(),
      },
      {
        name: 'cfghub_replication_refused',
        aggregator: 'max',
        help: "On a read replica: 1 while it refuses its primary's state (another folder, a lower generation, too many removals), else 0",
        read: () => (deps.replica?.status().refused ? 1 : 0),
      },
      {
        name: 'cfghub_replication_rewinds_refused',
        aggregator: 'max',
        help: 'On a read replica: repositories whose branch the primary moved backwards, kept where they were',
        read: () => deps.replica?.status().rewindsRefused.length ?? 0,
      },
      {
        name: 'cfghub_replication_newer_generation',
        aggregator: 'max',
        help: "The primary generation a replica reported above this server's own (another server was promoted since), else 0",
        read: () => parts.replication.newerGeneration() ?? 0,
      },
      {
        name: 'cfghub_schema_broken_repositories',
        aggregator: 'max',
        help: 'Repositories whose head breaks their schemas since a commit made outside cfghub (plain git)',
        read: () => parts.outsideCommits.broken().length,
      },
      {
        name: 'cfghub_watchers',
        aggregator: 'sum',
        help: 'Open watches of clients waiting for a change',
        read: () => this.watchers(),
      },
      {
        name: 'cfghub_open_pack_bytes',
        aggregator: 'sum',
        help: 'Bytes the open packs hold in memory (whole packs, windows read, indexes), within the process budget (heldPacks.ts)',
        read: heldPackBytes,
      },
      {
        name: 'cfghub_open_pack_budget_bytes',
        aggregator: 'sum',
        help: "What the open packs may hold in memory before the least recently read are closed (this process's share of the server's budget)",
        read: heldPacksBudget,
      },
      {
        name: 'cfghub_http_connections',
        aggregator: 'sum',
        help: 'Open HTTP connections to this server (held watches included)',
        read: () => this.connections(),
      },
    ];
    for (const { name, help, aggregator, read } of readGauges)
      new Gauge({
        name,
        help,
        aggregator,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    new Gauge({
      name: 'process_open_fds',
      help: 'Number of open file descriptors.',
      registers: [this.registry],
      async collect() {
        const count = await openDescriptors();
        if (count !== undefined) this.set(count);
      },
    });
    const self = this;
    new Counter({
      name: 'cfghub_watch_answers_made_total',
      help: 'Answers made for groups of watchers that share one (same context, format and options): one per group and new head, however many watchers it holds',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(self.watchAnswersMade());
      },
    });
  }

  /** Counts an answered request; `route` is the pattern it matched, if any. */
  request(
    method: string,
    route: string | undefined,
    path: string,
    status: number,
    seconds: number,
    pushOutcome?: string,
    refusal?: RefusalKind,
  ): void {
    const label = route ?? (GIT_PATH.test(path) ? '/git/:account/:repository.git/*' : 'unmatched');
    this.requests.inc({ method, route: label, status: String(status) });
    this.latency.observe({ method, route: label }, seconds);
    if (pushOutcome !== undefined) {
      this.pushes.inc({ outcome: pushOutcome });
      if (pushOutcome === 'refused' && refusal !== undefined) this.refusals.inc({ reason: refusal });
    }
  }

  close(): void {
    this.stopListening();
  }
}

function sameSecret(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** `GET /metrics`; with a metrics token configured, only with `Authorization: Bearer <it>`. */
export async function answerMetrics(deps: HttpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (deps.metricsToken !== undefined) {
    const presented = /^Bearer +(\S+)$/i.exec(header(req, 'Authorization') ?? '')?.[1];
    if (presented === undefined || !sameSecret(presented, deps.metricsToken)) {
      throw new HttpError(401, 'unauthorized', 'the metrics need the metrics token: Authorization: Bearer <token>');
    }
  }
  const metrics = deps.parts.metrics;
  // A worker of `serve --workers N` answers every worker's figures summed (clusterWorker.ts).
  if (deps.clusterMetrics) {
    sendBytes(res, 200, metrics.registry.contentType, Buffer.from(await deps.clusterMetrics(), 'utf8'));
    return;
  }
  sendBytes(res, 200, metrics.registry.contentType, Buffer.from(await metrics.registry.metrics(), 'utf8'));
}
