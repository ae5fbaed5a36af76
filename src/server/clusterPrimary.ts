/**
 * The primary process of `serve --workers N`. It has done the one-time work already
 * (serve.ts: the folder, start-up recovery, the demo), then:
 *  - forks N workers (node:cluster; each re-reads the same flags, environment and config file)
 *    and logs `listening` once every one listens on the shared port; connections are handed to
 *    the workers in turn (node's round-robin scheduling, the default on Linux);
 *  - a worker that fails to start fails the whole start, with its error, reported once;
 *  - a worker that dies later is logged and replaced (after a pause growing to RESTART_MAX_MS
 *    when replacements keep dying young);
 *  - sums the workers' metrics for a scrape (prom-client's AggregatorRegistry.aggregate), with
 *    its own: the workers alive and the replacements made;
 *  - runs the loops that must run once: a read replica's follower (one set of git fetches, one
 *    change feed), whose status it sends to the workers for `Replica-Lag` and `Min-Commit`;
 *  - on SIGINT or SIGTERM, tells every worker to drain (in-flight requests finish, held watches
 *    answer) and waits for all to exit, then stops the follower.
 * The other background work runs where it belongs: pack merges and repacks are scheduled by the
 * worker whose commit or new head triggered them, under the repository's locks, which keep out
 * the other workers as they keep out plain git; the primary's change feed for replicas is held by
 * the worker a replica's request reached.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, Counter, Gauge, Registry } from 'prom-client';
import type { Replicator } from '../service/replication/replicator.js';
import { TokenService } from '../service/admin/tokens.js';
import { RepositoryRegistry } from '../disk/registry.js';
import { TokenStore } from '../disk/records/tokenStore.js';
import {
  DELIVERS_WEBHOOKS,
  isClusterMessage,
  startError,
  type MetricsJson,
  type ToPrimary,
  type ToWorker,
} from './clusterMessages.js';
import { startReplicator } from './replica.js';
import { exitOnUncaughtException, replayJournalsLogged } from './processRuntime.js';
import type { ServeOptions } from './serveOptions.js';
import { problemOf } from '../disk/storageFaults.js';

/** A worker that has not exited this long after `stop` (its drain takes at most 10 s) is killed. */
const STOP_DEADLINE_MS = 15_000;
/** A scrape waits this long for the workers' own metrics, then sums those that came. */
const GATHER_MS = 3_000;
/** A worker dying within this long of its start counts as dying young: its replacement waits. */
const YOUNG_MS = 5_000;
const RESTART_MIN_MS = 100;
const RESTART_MAX_MS = 5_000;
/** How often the follower's status is compared with what the workers were last sent. */
const REPLICA_STATUS_MS = 100;

interface Member {
  readonly worker: Worker;
  readonly startedAt: number;
  listening: boolean;
  /** The worker this one replaces, if any. */
  readonly replaces?: number;
}

function tell(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message);
}

export async function servePrimary(options: ServeOptions, logger: Logger): Promise<void> {
  const count = options.workers ?? 1;
  const members = new Map<number, Member>();
  let stopping = false;
  let restartDelay = 0;
  // Replays one after another: workers dying together would otherwise replay the same journals twice at once.
  let replaying: Promise<void> = Promise.resolve();

  const own = new Registry();
  new Gauge({
    name: 'cfghub_workers',
    help: 'Worker processes serving (serve --workers)',
    aggregator: 'max',
    registers: [own],
    collect() {
      this.set([...members.values()].filter((m) => m.listening).length);
    },
  });
  const restarts = new Counter({
    name: 'cfghub_worker_restarts_total',
    help: 'Workers replaced after they died',
    registers: [own],
  });
  restarts.inc(0);

  // A read replica's follower runs here, once (see replicaLink.ts for the workers' side).
  let follower: Replicator | undefined;
  let followerStore: { registry: RepositoryRegistry; tokens: TokenService } | undefined;
  let replicaTimer: NodeJS.Timeout | undefined;
  let lastStatus = '';
  if (options.replicaOf) {
    followerStore = {
      registry: new RepositoryRegistry(options.reposDir),
      tokens: new TokenService(new TokenStore(options.reposDir)),
    };
    follower = startReplicator(options.replicaOf, followerStore.registry, followerStore.tokens, logger);
    replicaTimer = setInterval(() => {
      const status = follower!.status();
      const text = JSON.stringify(status);
      if (text === lastStatus) return;
      lastStatus = text;
      for (const { worker } of members.values()) tell(worker, { cfghub: 'replica', status });
    }, REPLICA_STATUS_MS);
  }

  // Scrapes: a worker asks (`ask`), every worker sends its own (`gather`), the sum goes back.
  let nextGather = 0;
  const gathers = new Map<number, { waiting: Set<number>; metrics: MetricsJson[]; done: () => void }>();
  const answerScrape = async (asker: Worker, ask: number) => {
    const gather = nextGather++;
    const metrics: MetricsJson[] = [];
    await new Promise<void>((done) => {
      const alive = [...members.values()].filter((m) => m.worker.isConnected());
      const timer = setTimeout(finish, GATHER_MS);
      function finish(): void {
        clearTimeout(timer);
        gathers.delete(gather);
        done();
      }
      gathers.set(gather, { waiting: new Set(alive.map((m) => m.worker.id)), metrics, done: finish });
      for (const { worker } of alive) tell(worker, { cfghub: 'metrics-ask', gather });
      if (alive.length === 0) finish();
    });
    metrics.push(await own.getMetricsAsJSON());
    tell(asker, { cfghub: 'metrics-total', ask, text: await AggregatorRegistry.aggregate(metrics).metrics() });
  };

  let started: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const allListening = new Promise<void>((resolve, reject) => (started = { resolve, reject }));

  // One worker delivers webhooks (each sees every commit); the one replacing it takes its part.
  let deliverer: number | undefined;
  const fork = (replaces?: number) => {
    const delivers = deliverer === undefined || deliverer === replaces;
    const worker = cluster.fork(delivers ? { [DELIVERS_WEBHOOKS]: '1' } : {});
    if (delivers) deliverer = worker.id;
    members.set(worker.id, { worker, startedAt: Date.now(), listening: false, replaces });
    if (follower && lastStatus) tell(worker, { cfghub: 'replica', status: JSON.parse(lastStatus) });
  };

  cluster.on('message', (worker, message: unknown) => {
    if (!isClusterMessage<ToPrimary>(message)) return;
    const member = members.get(worker.id);
    switch (message.cfghub) {
      case 'listening':
        if (!member) return;
        member.listening = true;
        if (member.replaces !== undefined)
          logger.info({
            event: 'worker-restarted',
            worker: worker.id,
            pid: worker.process.pid,
            replaces: member.replaces,
          });
        else if ([...members.values()].every((m) => m.listening)) {
          logger.info({
            event: 'listening',
            url: message.url,
            workers: members.size,
            pids: [...members.values()].map((m) => m.worker.process.pid),
          });
          started?.resolve();
        }
        break;
      case 'failed':
        started?.reject(startError(message));
        break;
      case 'metrics-request':
        void answerScrape(worker, message.ask);
        break;
      case 'metrics-own': {
        const gather = gathers.get(message.gather);
        if (!gather) return;
        if (!gather.waiting.delete(worker.id)) return;
        gather.metrics.push(message.metrics);
        if (gather.waiting.size === 0) gather.done();
        break;
      }
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const member = members.get(worker.id);
    members.delete(worker.id);
    // A scrape waiting for this worker's figures sums the others' without them.
    for (const gather of gathers.values())
      if (gather.waiting.delete(worker.id) && gather.waiting.size === 0) gather.done();
    if (stopping || !member) return;
    if (!member.listening && member.replaces === undefined) {
      started?.reject(new Error(`a worker exited (${signal ?? code}) before it served`));
      return;
    }
    logger.warn({
      event: 'worker-exited',
      worker: worker.id,
      pid: worker.process.pid,
      ...(signal ? { signal } : { code }),
    });
    // Its push journal is replayed now, not at the next start: the files of its last pushes are
    // made durable while the machine still has them (journalReplay.ts).
    replaying = replaying
      .then(() => replayJournalsLogged(options.reposDir, logger))
      .catch((error: unknown) => logger.warn({ event: 'journal-replay-failed', problem: problemOf(error) }));
    restarts.inc();
    const young = Date.now() - member.startedAt < YOUNG_MS;
    restartDelay = young ? Math.min(RESTART_MAX_MS, Math.max(RESTART_MIN_MS, restartDelay * 2)) : 0;
    setTimeout(() => {
      if (!stopping) fork(worker.id);
    }, restartDelay);
  });

  const stopAll = async () => {
    stopping = true;
    const exits = [...members.values()].map(
      ({ worker }) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          worker.once('exit', () => resolve());
          const deadline = setTimeout(() => worker.process.kill('SIGKILL'), STOP_DEADLINE_MS);
          worker.once('exit', () => clearTimeout(deadline));
          tell(worker, { cfghub: 'stop' });
        }),
    );
    await Promise.all(exits);
    if (replicaTimer) clearInterval(replicaTimer);
    await follower?.stop();
    followerStore?.registry.close();
    followerStore?.tokens.close();
  };

  for (let i = 0; i < count; i++) fork();
  try {
    await allListening;
  } catch (error) {
    await stopAll();
    throw error;
  }
  started = undefined;
  exitOnUncaughtException(logger);

  await new Promise<void>((resolve) => {
    let signalled = false;
    const stop = (signal: string) => {
      if (signalled) return;
      signalled = true;
      logger.info({ event: 'shutting-down', signal, workers: members.size });
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await stopAll();
  logger.info({ event: 'stopped' });
}
