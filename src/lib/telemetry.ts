/**
 * Where the layers below HTTP tell how long their work took, for the metrics:
 * commits, fsyncs, snapshot loads, read-cache lookups. A set of listeners with no dependency,
 * so the store and services never import a metrics library; with no listener (the CLI), each
 * call costs a loop over an empty set. Process-wide: servers in one process see each other's work.
 */
export interface TelemetryListener {
  commit?(seconds: number): void;
  fsync?(seconds: number): void;
  snapshotLoad?(seconds: number): void;
  /** A read answer looked up: found, not found (made), or carried from the previous head (a push that did not reach it). */
  readCache?(result: ReadCacheResult): void;
  /** A webhook delivery's attempt ended (delivered, failed and retried later, failed for good), or a waiting delivery was dropped. */
  webhookDelivery?(outcome: WebhookOutcome): void;
}

export type WebhookOutcome = 'delivered' | 'retrying' | 'failed' | 'dropped';

export type ReadCacheResult = 'hit' | 'miss' | 'carried';

const listeners = new Set<TelemetryListener>();

export function listen(listener: TelemetryListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const telemetry = {
  commit(seconds: number): void {
    for (const l of listeners) l.commit?.(seconds);
  },
  fsync(seconds: number): void {
    for (const l of listeners) l.fsync?.(seconds);
  },
  snapshotLoad(seconds: number): void {
    for (const l of listeners) l.snapshotLoad?.(seconds);
  },
  readCache(result: ReadCacheResult): void {
    for (const l of listeners) l.readCache?.(result);
  },
  webhookDelivery(outcome: WebhookOutcome): void {
    for (const l of listeners) l.webhookDelivery?.(outcome);
  },
  /** Whether anyone listens: callers skip taking the time when no one does. */
  get active(): boolean {
    return listeners.size > 0;
  },
};

/** Seconds since `started` (a process.hrtime.bigint()). */
export function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}
