/**
 * A worker of `serve --workers N`: serves HTTP on the port the primary process shares
 * among the workers (node:cluster hands each new connection to one worker in turn), with its own
 * registry and caches. What it does not do, the primary does once for all: start-up recovery, the
 * demo repository, a replica's follower (the worker is sent its status), the sum of the metrics.
 *
 * Why commits stay safe with several workers writing: every commit takes the ref's lock file and
 * swaps the ref only from the parent it was made on (refs.ts), as with plain git or a second
 * server; and reads see other workers' commits at once through the head watch (changeWatch.ts).
 */
import cluster from 'node:cluster';
import type { Metrics } from '../http/metrics.js';
import { ServiceError } from '../service/errors.js';
import { ReplicaView } from '../service/replication/replicaLink.js';
import { withoutPaths } from '../domain/reasons.js';
import { DELIVERS_WEBHOOKS, isClusterMessage, type ToPrimary, type ToWorker } from './clusterMessages.js';
import { createLogger } from './logger.js';
import { startServing, type Serving } from './serve.js';
import { exitOnUncaughtException } from './processRuntime.js';
import type { ServeOptions } from './serveOptions.js';

/** A scrape waits this long for the primary to sum the workers' metrics, then answers 503. */
const METRICS_WAIT_MS = 10_000;

function send(message: ToPrimary): void {
  if (process.connected) process.send!(message);
}

export async function serveAsWorker(options: ServeOptions): Promise<void> {
  const logger = createLogger(options.logLevel, options.logFormat).child({ worker: cluster.worker!.id });
  const replica = options.replicaOf ? new ReplicaView(options.replicaOf.primary) : undefined;
  const asks = new Map<number, (text: string) => void>();
  let nextAsk = 0;
  let metrics: Metrics | undefined;
  let serving: Serving | undefined;
  let stopping = false;

  const clusterMetrics = () =>
    new Promise<string>((resolve, reject) => {
      const ask = nextAsk++;
      const timer = setTimeout(() => {
        asks.delete(ask);
        reject(
          new ServiceError(
            'unavailable',
            `the workers' metrics were not summed within ${METRICS_WAIT_MS / 1000} s; try again`,
          ),
        );
      }, METRICS_WAIT_MS);
      asks.set(ask, (text) => {
        clearTimeout(timer);
        asks.delete(ask);
        resolve(text);
      });
      send({ cfghub: 'metrics-request', ask });
    });

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await serving?.stop();
    process.exit(0);
  };

  process.on('message', (message: unknown) => {
    if (!isClusterMessage<ToWorker>(message)) return;
    switch (message.cfghub) {
      case 'stop':
        void stop();
        break;
      case 'metrics-ask':
        // Before the server is up there is nothing counted yet.
        void (metrics ? metrics.registry.getMetricsAsJSON() : Promise.resolve([])).then(
          (metrics) => send({ cfghub: 'metrics-own', gather: message.gather, metrics }),
          () => send({ cfghub: 'metrics-own', gather: message.gather, metrics: [] }),
        );
        break;
      case 'metrics-total':
        asks.get(message.ask)?.(message.text);
        break;
      case 'replica':
        replica?.update(message.status);
        break;
    }
  });
  // A signal sent to this worker alone (or to the whole process group, as Ctrl-C in a terminal
  // does) drains it as the primary's `stop` does; a second signal changes nothing.
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  try {
    serving = await startServing(options, logger, {
      replica,
      clusterMetrics,
      workers: options.workers,
      deliversWebhooks: process.env[DELIVERS_WEBHOOKS] === '1',
    });
    metrics = serving.metrics;
  } catch (error) {
    // The primary reports it once for all workers, and exits with its code (program.ts).
    const code = error instanceof ServiceError ? error.code : undefined;
    send({
      cfghub: 'failed',
      code,
      message: error instanceof Error ? (code ? error.message : withoutPaths(error.message)) : String(error),
    });
    process.exit(1);
  }
  exitOnUncaughtException(logger);
  if (stopping) return; // stopped while starting: stop() awaits nothing more and exits
  send({ cfghub: 'listening', url: serving.url });
  await new Promise<never>(() => undefined); // until stop() exits the process
}
