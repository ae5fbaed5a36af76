/**
 * The messages between the primary process of `serve --workers N` and its workers,
 * over node:cluster's IPC channel. Every message carries `cfghub` (its kind), so messages of
 * node or prom-client on the same channel are told apart.
 */
import type { Registry } from 'prom-client';
import type { ReplicaStatus } from '../service/replication/replicator.js';
import { ServiceError } from '../service/errors.js';

/** One registry's metrics as prom-client's getMetricsAsJSON gives them (what AggregatorRegistry.aggregate sums). */
/** Set in the environment of the one worker that delivers webhooks. */
export const DELIVERS_WEBHOOKS = 'CFGHUB_DELIVERS_WEBHOOKS';

export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** From the primary to a worker. */
export type ToWorker =
  /** Drain and exit (the server is shutting down). */
  | { readonly cfghub: 'stop' }
  /** Send your own metrics (for the scrape `gather` of some worker asked for). */
  | { readonly cfghub: 'metrics-ask'; readonly gather: number }
  /** The cluster's metrics, summed, that this worker asked for with `ask`. */
  | { readonly cfghub: 'metrics-total'; readonly ask: number; readonly text: string }
  /** The follower's status (a read replica: the follower runs in the primary process). */
  | { readonly cfghub: 'replica'; readonly status: ReplicaStatus };

/** From a worker to the primary. */
export type ToPrimary =
  | { readonly cfghub: 'listening'; readonly url: string }
  /** The worker could not start (its error, for the primary to report once and exit with). */
  | { readonly cfghub: 'failed'; readonly code?: string; readonly message: string }
  /** A scrape of /metrics reached this worker: send the cluster's total. */
  | { readonly cfghub: 'metrics-request'; readonly ask: number }
  | { readonly cfghub: 'metrics-own'; readonly gather: number; readonly metrics: MetricsJson };

export function isClusterMessage<T extends { cfghub: string }>(message: unknown): message is T {
  return (
    typeof message === 'object' && message !== null && typeof (message as { cfghub?: unknown }).cfghub === 'string'
  );
}

/** For the primary: the error a worker failed to start with, as the single process would have thrown it. */
export function startError(failure: { readonly code?: string; readonly message: string }): Error {
  return failure.code
    ? new ServiceError(failure.code as ServiceError['code'], failure.message)
    : new Error(failure.message);
}
