/**
 * `cfghub serve`: the HTTP server until SIGINT or SIGTERM, then a graceful shutdown and exit 0.
 *
 * With `--workers 1` (the default) one process does everything, as below. With more (`auto` is
 * one per core) this process is the cluster's primary: it does the one-time work first (the
 * folder, start-up recovery, the demo repository), then forks the workers that serve
 * (clusterPrimary.ts); each worker runs `startServing` (clusterWorker.ts).
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { DEFAULT_BODY_LIMIT, type HttpOptions } from '../http/deps.js';
import type { Metrics } from '../http/metrics.js';
import { ensureDemoRepository } from '../service/admin/demo.js';
import type { ReplicaLink } from '../service/replication/replicaLink.js';
import { TokenService } from '../service/admin/tokens.js';
import { onStaleLockRemoved } from '../disk/refs/refs.js';
import { ServiceError } from '../service/errors.js';
import { ClusterNode } from '../service/ha/clusterNode.js';
import { HaStateFile } from '../disk/haState.js';
import { RepositoryRegistry } from '../disk/registry.js';
import { recoverAtStart } from '../disk/startupRecovery.js';
import { TokenStore } from '../disk/records/tokenStore.js';
import { setHeldPacksBudget } from '../disk/objects/heldPacks.js';
import { servePrimary } from './clusterPrimary.js';
import { exitOnUncaughtException, replayJournalsLogged } from './processRuntime.js';
import type { ServeOptions } from './serveOptions.js';
import { createLogger } from './logger.js';
import { listenError, prepareReposFolder } from './serveChecks.js';
import { checkFolderRole, startReplicator } from './replica.js';

export async function serve(options: ServeOptions): Promise<void> {
  // The HTTP stack is loaded only by the processes that serve: the primary of `serve --workers N`
  // never does: 62 to 75 MiB resident instead of 66 to 82 (the bench's memory figure counts it).
  if (cluster.isWorker) return (await import('./clusterWorker.js')).serveAsWorker(options);
  const logger = createLogger(options.logLevel, options.logFormat);
  await prepareOnce(options, logger);
  if ((options.workers ?? 1) > 1) return servePrimary(options, logger);

  const serving = await startServing(options, logger, {});
  exitOnUncaughtException(logger);
  const signalled = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ event: 'shutting-down', signal });
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  // Said once a stop signal is handled: whoever starts the server and signals it on this line gets
  // a graceful stop, never the default action of a signal that arrived before the handler.
  logger.info({ event: 'listening', url: serving.url });
  await signalled;
  await serving.stop();
  logger.info({ event: 'stopped' });
  // Everything is closed; a connection a peer or etcd still holds open must not keep the process.
  setTimeout(() => process.exit(process.exitCode ?? 0), 1_000).unref();
}

/**
 * What is done once, before anything serves (and, with workers, before they are forked): the
 * folder made and named, what crashed writers left cleaned (startupRecovery.ts), the demo made.
 */
async function prepareOnce(options: ServeOptions, logger: Logger): Promise<void> {
  const created = prepareReposFolder(options.reposDir);
  // The folder is named at start: `./repos` depends on where the server was started.
  logger.info({ event: 'repositories', folder: options.reposDir, ...(created ? { created: true } : {}) });
  onStaleLockRemoved((report) => logger.warn({ event: 'stale-lock-removed', ...report }));
  // Pushes whose files a power cut took are restored from the push journals (journalReplay.ts),
  // then what crashed writers left is cleaned (or reported), before the first request (startupRecovery.ts).
  await replayJournalsLogged(options.reposDir, logger);
  // A node of an HA cluster leads or follows as etcd decides: its folder may follow a leader now and lead later.
  await checkFolderRole(options.reposDir, options.replicaOf, logger, options.cluster !== undefined);
  for (const finding of await recoverAtStart(options.reposDir))
    logger.warn({ event: 'recovered-at-start', ...finding });
  if (options.cluster && options.replicaOf)
    throw new ServiceError(
      'invalid_argument',
      'a node of an HA cluster follows its elected leader: leave out --replica-of',
    );
  if (options.demo && !options.replicaOf && !options.cluster) {
    const registry = new RepositoryRegistry(options.reposDir, { looseObjectLimit: options.looseObjectLimit });
    try {
      if (await ensureDemoRepository(registry)) logger.info({ event: 'demo-created', repository: 'demo/HowItWorks' });
    } finally {
      registry.close();
    }
  }
}

export interface Serving {
  readonly url: string;
  /** The server's metrics (a worker of `serve --workers N` sends them to the primary). */
  readonly metrics: Metrics;
  /** Drains the server (in-flight requests finish, watches answer), then closes what it holds. */
  stop(): Promise<void>;
}

/**
 * One process's server: its registry, tokens and listener. `replica`: the follower's view a worker
 * is given (the follower itself runs in the primary process); a single process starts its own.
 * `extra`: what a worker adds to the context (the cluster's metrics, its share of the caches).
 */
export async function startServing(
  options: ServeOptions,
  logger: Logger,
  extra: { replica?: ReplicaLink } & Pick<HttpOptions, 'clusterMetrics' | 'workers' | 'deliversWebhooks'>,
): Promise<Serving> {
  let node: ClusterNode | undefined;
  const registry = new RepositoryRegistry(options.reposDir, {
    looseObjectLimit: options.looseObjectLimit,
    journal: true,
    replicate: options.cluster ? (entry) => node!.replicate(entry) : undefined,
  });
  setHeldPacksBudget(extra.workers); // this process's share of the server's budget for open packs
  // A single process registered this in prepareOnce; a worker is a process of its own.
  if (cluster.isWorker) onStaleLockRemoved((report) => logger.warn({ event: 'stale-lock-removed', ...report }));
  const tokens = new TokenService(new TokenStore(options.reposDir));
  if (options.cluster) {
    tokens.acceptClusterSecret(options.cluster.token);
    const { name, etcd, advertise, token, strict, leaseSeconds } = options.cluster;
    node = new ClusterNode(
      { cluster: name, etcd, advertise, token, strict, leaseSeconds },
      await HaStateFile.open(options.reposDir),
      registry,
      tokens,
      logger,
    );
  }
  const follower = extra.replica
    ? undefined
    : options.replicaOf && startReplicator(options.replicaOf, registry, tokens, logger);
  const deps: HttpOptions = {
    registry,
    tokens,
    logger,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    maxWatchers: options.maxWatchers,
    hidePrivate: options.hidePrivate,
    replica: extra.replica ?? follower ?? node,
    cluster: node,
    metricsToken: options.metricsToken,
    clusterMetrics: extra.clusterMetrics,
    workers: extra.workers,
    deliversWebhooks: extra.deliversWebhooks,
  };
  const { startServer } = await import('../http/server.js');
  const running = await startServer(deps, options.port, options.host).catch(async (error: unknown) => {
    await follower?.stop();
    await node?.stop();
    registry.close();
    tokens.close();
    throw listenError(error, options);
  });
  node?.start();
  return {
    url: running.url,
    metrics: running.metrics,
    async stop() {
      await running.close();
      await node?.stop(); // after the drain: pushes in flight finish as the leader, then another node leads
      await follower?.stop();
      await registry.settle(); // a pack merge's removals end whole (see consolidatePacks)
      await registry.flushJournal();
      registry.close();
      tokens.close();
    },
  };
}
