/**
 * Webhook deliveries, in the background: a bounded queue, at most `maxInFlight` POSTs at once,
 * each failed attempt (no answer within `attemptTimeoutMs`, a connection error, any status but
 * 2xx) tried again after a delay doubling from `firstRetryMs` up to `maxRetryMs`, `maxAttempts`
 * attempts in all. Nothing here runs on a push's path: a commit only adds deliveries to the queue.
 *
 * Bounds: at most `maxQueued` deliveries wait (new, or between attempts); one more drops the
 * oldest waiting, which the log marks `dropped`. The log keeps the last `logSize` deliveries (those
 * still waiting or in flight always). Everything is in memory: deliveries waiting when the
 * process stops are not made (docs/webhooks.md says so).
 *
 * The secret is read from the hook at each attempt and used only to sign; it is never in a
 * delivery record, an error or a log line.
 */
import { telemetry } from '../../lib/telemetry.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { SIGNATURE_HEADER, signatureOf } from './signature.js';
import type { OpenedHook } from './hooks.js';

export interface DeliveryLimits {
  readonly maxInFlight: number;
  readonly maxQueued: number;
  readonly maxAttempts: number;
  readonly firstRetryMs: number;
  readonly maxRetryMs: number;
  readonly attemptTimeoutMs: number;
  readonly logSize: number;
}

export const DEFAULT_DELIVERY_LIMITS: DeliveryLimits = {
  maxInFlight: 4,
  maxQueued: 1_000,
  maxAttempts: 8,
  firstRetryMs: 1_000,
  maxRetryMs: 5 * 60_000,
  attemptTimeoutMs: 10_000,
  logSize: 1_000,
};

export type DeliveryStatus = 'queued' | 'in-flight' | 'retrying' | 'delivered' | 'failed' | 'dropped';

/** A delivery as the admin API lists it. */
export interface DeliveryRecord {
  readonly id: string;
  readonly hook: string;
  readonly repository: string;
  readonly event: 'commit';
  readonly commit: string;
  status: DeliveryStatus;
  attempts: number;
  /** The HTTP status of the last answer, when there was one. */
  lastStatus?: number;
  lastError?: string;
  readonly created: string;
  lastAttempt?: string;
  nextAttempt?: string;
  readonly redeliveryOf?: string;
}

/** What a delivery POSTs: the commit's event body, made once per commit. */
export interface DeliveryContent {
  readonly repository: string;
  readonly commit: string;
  readonly body: string;
}

interface LiveDelivery {
  readonly record: DeliveryRecord;
  readonly content: DeliveryContent;
  due: number;
}

const WAITING = new Set<DeliveryStatus>(['queued', 'retrying']);

/** Why an attempt failed, in words that name no secret and no path. */
function failureOf(error: unknown): string {
  const err = error as { name?: string; cause?: { code?: string }; code?: string };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'no answer within the attempt timeout';
  const code = err?.cause?.code ?? err?.code;
  return code ? `connection failed (${code})` : 'connection failed';
}

export class DeliveryQueue {
  private readonly log = new Map<string, DeliveryRecord>();
  private readonly waiting: LiveDelivery[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly controllers = new Set<AbortController>();
  /** Called once when a delivery ends for good (delivered, failed, dropped), by its id. */
  private readonly onEnd = new Map<string, () => void>();

  constructor(
    private readonly hookOf: (repository: string, id: string) => OpenedHook | undefined,
    private readonly logger: Logger,
    readonly limits: DeliveryLimits = DEFAULT_DELIVERY_LIMITS,
  ) {}

  /**
   * Queues one delivery of `content` to `hook`; returns its record. Never waits for the network.
   * `ended` is called once, when the delivery ends for good: delivered, failed or dropped.
   */
  add(hook: { id: string }, content: DeliveryContent, redeliveryOf?: string, ended?: () => void): DeliveryRecord {
    const record: DeliveryRecord = {
      id: randomUUID(),
      hook: hook.id,
      repository: content.repository,
      event: 'commit',
      commit: content.commit,
      status: 'queued',
      attempts: 0,
      created: new Date().toISOString(),
      ...(redeliveryOf ? { redeliveryOf } : {}),
    };
    if (ended) this.onEnd.set(record.id, ended);
    if (this.closed) {
      record.status = 'dropped';
      record.lastError = 'the server was stopping';
      telemetry.webhookDelivery('dropped');
      this.remember(record);
      this.ended(record);
      return record;
    }
    this.makeRoom();
    this.waiting.push({ record, content, due: Date.now() });
    this.remember(record);
    this.pump();
    return record;
  }

  /** The log, newest first, of one repository (and one hook). */
  records(repository: string, hook?: string): DeliveryRecord[] {
    return [...this.log.values()]
      .filter((r) => r.repository === repository && (hook === undefined || r.hook === hook))
      .reverse()
      .map((r) => ({ ...r }));
  }

  find(id: string): DeliveryRecord | undefined {
    return this.log.get(id);
  }

  /** Stops: no new attempt starts, attempts in flight are cut, waiting ones are dropped. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const controller of this.controllers) controller.abort();
    for (const live of this.waiting.splice(0)) {
      live.record.status = 'dropped';
      live.record.lastError = 'the server was stopping';
      telemetry.webhookDelivery('dropped');
      this.ended(live.record);
    }
  }

  private ended(record: DeliveryRecord): void {
    const call = this.onEnd.get(record.id);
    this.onEnd.delete(record.id);
    call?.();
  }

  private remember(record: DeliveryRecord): void {
    this.log.set(record.id, record);
    if (this.log.size <= this.limits.logSize) return;
    for (const [id, old] of this.log) {
      if (this.log.size <= this.limits.logSize) break;
      if (!WAITING.has(old.status) && old.status !== 'in-flight') this.log.delete(id);
    }
  }

  /** Starts the due deliveries the in-flight bound allows; sets a timer for the next one due. */
  private pump(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    while (this.inFlight < this.limits.maxInFlight) {
      const index = this.waiting.findIndex((live) => live.due <= now);
      if (index < 0) break;
      const [live] = this.waiting.splice(index, 1);
      this.inFlight++;
      void this.attempt(live).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
    if (this.waiting.length > 0 && this.inFlight < this.limits.maxInFlight) {
      const next = Math.min(...this.waiting.map((live) => live.due));
      this.timer = setTimeout(() => this.pump(), Math.max(0, next - now));
      this.timer.unref();
    }
  }

  private async attempt(live: LiveDelivery): Promise<void> {
    const { record, content } = live;
    const hook = this.hookOf(record.repository, record.hook);
    record.attempts++;
    record.lastAttempt = new Date().toISOString();
    record.nextAttempt = undefined;
    if (!hook) {
      record.status = 'failed';
      record.lastError = 'the webhook was removed, or its secret no longer opens';
      telemetry.webhookDelivery('failed');
      this.ended(record);
      return;
    }
    record.status = 'in-flight';
    const controller = new AbortController();
    this.controllers.add(controller);
    const timeout = setTimeout(
      () => controller.abort(Object.assign(new Error('timeout'), { name: 'TimeoutError' })),
      this.limits.attemptTimeoutMs,
    );
    try {
      const response = await fetch(hook.url, {
        method: 'POST',
        body: content.body,
        redirect: 'manual',
        signal: controller.signal,
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'cfghub-webhook',
          'X-Cfghub-Event': 'commit',
          'X-Cfghub-Delivery': record.id,
          'X-Cfghub-Hook-Id': hook.id,
          [SIGNATURE_HEADER]: signatureOf(content.body, hook.secret),
        },
      });
      await response.body?.cancel().catch(() => undefined); // the answer's body is not needed
      record.lastStatus = response.status;
      if (response.status >= 200 && response.status < 300) {
        record.status = 'delivered';
        record.lastError = undefined;
      } else this.failed(live, `the receiver answered ${response.status}`);
    } catch (error) {
      this.failed(live, this.closed ? 'the server was stopping' : failureOf(error));
    } finally {
      clearTimeout(timeout);
      this.controllers.delete(controller);
    }
    const ended = record.status as DeliveryStatus; // set by failed() too
    telemetry.webhookDelivery(ended === 'delivered' || ended === 'retrying' ? ended : 'failed');
    if (ended !== 'retrying') this.ended(record);
    this.logger.info({
      event: 'webhook-delivery',
      delivery: record.id,
      hook: record.hook,
      repository: record.repository,
      commit: record.commit,
      status: record.status,
      attempts: record.attempts,
      ...(record.lastStatus === undefined ? {} : { httpStatus: record.lastStatus }),
    });
  }

  private failed(live: LiveDelivery, why: string): void {
    const { record } = live;
    record.lastError = why;
    if (this.closed || record.attempts >= this.limits.maxAttempts) {
      record.status = 'failed';
      return;
    }
    const delay = Math.min(this.limits.maxRetryMs, this.limits.firstRetryMs * 2 ** (record.attempts - 1));
    live.due = Date.now() + delay;
    record.status = 'retrying';
    record.nextAttempt = new Date(live.due).toISOString();
    this.makeRoom();
    this.waiting.push(live);
  }

  /** Drops the oldest waiting deliveries until one more fits under `maxQueued`. */
  private makeRoom(): void {
    while (this.waiting.length >= this.limits.maxQueued) {
      const oldest = this.waiting.shift()!;
      oldest.record.status = 'dropped';
      oldest.record.nextAttempt = undefined;
      oldest.record.lastError = `dropped: ${this.limits.maxQueued} deliveries were waiting`;
      telemetry.webhookDelivery('dropped');
      this.ended(oldest.record);
      this.logger.warn({ event: 'webhook-dropped', delivery: oldest.record.id, hook: oldest.record.hook });
    }
  }
}
