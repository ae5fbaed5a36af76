/**
 * A replica's follower (issue 21): keeps the mirrors under its repositories folder and its token
 * file in step with a primary, and says how current it is.
 *
 * The loop: ask for the primary's state (GET /rest/replication/state), make the folder match it
 * (fetch the repositories whose head differs, mirror new ones, remove gone ones, replace the
 * token records), then wait on the change feed (POST /rest/replication/feed) with the heads now on
 * disk. The feed answers as soon as anything differs, or after its hold time (the periodic full
 * check: the whole state compared with the disk again). While it waits the primary sends a
 * heartbeat line each second meaning "still the same": that is what "confirmed current" means, and
 * the lag is the time since the last confirmation. When the primary cannot be reached the loop
 * retries with a growing pause (at most RETRY_MAX_MS) and the replica serves what it has.
 *
 * The replica never writes a repository itself: only git fetch does, on the primary's word.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { withoutPaths } from '../../domain/reasons.js';
import { readRef } from '../../disk/refs.js';
import { BRANCH_REF } from '../../layout/layout.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { tokenRecordSchema } from '../../disk/tokenStore.js';
import type { TokenService } from '../tokens.js';
import { createMirror, fetchMirror, removeMirror, type MirrorSource } from './mirror.js';
import { awaitCommit, MIN_COMMIT_WAIT_MS } from './replicaLink.js';
import { tokensDigest, type HeldState, type ReplicationState } from './state.js';

/** What /readyz and the metrics report about a replica (issue 19 can call `Replicator.status()`). */
export interface ReplicaStatus {
  readonly role: 'replica';
  readonly primary: string;
  /** The last exchange with the primary succeeded. */
  readonly connected: boolean;
  /** Seconds since the replica last confirmed it held what the primary holds; null before the first time. */
  readonly lagSeconds: number | null;
  readonly lastConfirmed: string | null;
  /** Why the last exchange or fetch failed, without paths or tokens; null after a success. */
  readonly lastError: string | null;
  readonly repositories: number;
  readonly fetches: number;
  readonly fetchFailures: number;
}

export interface ReplicatorOptions {
  readonly source: MirrorSource;
  readonly registry: RepositoryRegistry;
  readonly tokens: TokenService;
  readonly logger: Logger;
  /** How long the primary holds a feed request with nothing new: the period of the full check. */
  readonly holdMs?: number;
}

/** Fetches at once, at most: each is a git process. */
const FETCH_CONCURRENCY = 4;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;
/** A feed that sends nothing (not even a heartbeat) for this long is taken as a dead primary. */
const FEED_SILENCE_MS = 5_000;
const STATE_TIMEOUT_MS = 10_000;
/** The largest state a primary may send (about 150 bytes a repository, 400 a token). */
const MAX_STATE_BYTES = 64 * 1024 * 1024;
export { MIN_COMMIT_WAIT_MS };

const stateSchema = z.object({
  repositories: z.array(z.object({ account: z.string(), name: z.string(), head: z.string() })),
  tokens: z.array(tokenRecordSchema),
  tokensDigest: z.string(),
});

export class Replicator {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private abort = new AbortController();
  private confirmedAt: number | undefined;
  private connected = false;
  private lastError: string | null = null;
  private fetches = 0;
  private fetchFailures = 0;
  private repositoryCount = 0;
  private pauseTimer: { timer: NodeJS.Timeout; done: () => void } | undefined;

  constructor(private readonly options: ReplicatorOptions) {}

  get primary(): string {
    return this.options.source.primary;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.pauseTimer) {
      clearTimeout(this.pauseTimer.timer);
      this.pauseTimer.done();
    }
    await this.loop;
  }

  /** Seconds since the replica last confirmed it was current; undefined before the first time. */
  lagSeconds(now = Date.now()): number | undefined {
    return this.confirmedAt === undefined ? undefined : Math.max(0, now - this.confirmedAt) / 1000;
  }

  status(): ReplicaStatus {
    const lag = this.lagSeconds();
    return {
      role: 'replica',
      primary: this.primary,
      connected: this.connected,
      lagSeconds: lag === undefined ? null : Math.round(lag * 10) / 10,
      lastConfirmed: this.confirmedAt === undefined ? null : new Date(this.confirmedAt).toISOString(),
      lastError: this.lastError,
      repositories: this.repositoryCount,
      fetches: this.fetches,
      fetchFailures: this.fetchFailures,
    };
  }

  /** The head to read for a request with `Min-Commit` (see replicaLink.ts). */
  awaitCommit(repository: GitRepository, commit: string, waitMs = MIN_COMMIT_WAIT_MS): Promise<string> {
    return awaitCommit(repository, commit, () => this.lagSeconds(), waitMs);
  }

  private async run(): Promise<void> {
    let follow = false;
    let retry = RETRY_MIN_MS;
    while (!this.stopped) {
      try {
        const { state, at } = follow ? await this.follow() : await this.askState();
        this.connected = true;
        const complete = await this.apply(state);
        if (complete) {
          this.confirmedAt = at;
          this.lastError = null;
          retry = RETRY_MIN_MS;
        }
        follow = complete;
        if (!complete) await this.pause(retry);
      } catch (error) {
        if (this.stopped) break;
        this.connected = false;
        const problem = this.describe(error);
        if (problem !== this.lastError) this.options.logger.warn({ event: 'replication-failed', primary: this.primary, problem });
        this.lastError = problem;
        follow = false;
        await this.pause(retry);
        retry = Math.min(RETRY_MAX_MS, retry * 2);
      }
    }
  }

  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((done) => {
      this.pauseTimer = {
        timer: setTimeout(() => {
          this.pauseTimer = undefined;
          done();
        }, ms),
        done,
      };
    });
  }

  private describe(error: unknown): string {
    const text = error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}` : String(error);
    return withoutPaths(text.split(this.options.source.token).join('…'));
  }

  private url(path: string): string {
    return `${this.primary.replace(/\/+$/, '')}${path}`;
  }

  private headers(): Record<string, string> {
    return { 'Client-Token': this.options.source.token };
  }

  private async askState(): Promise<{ state: ReplicationState; at: number }> {
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(STATE_TIMEOUT_MS)]);
    const answer = await fetch(this.url('/rest/replication/state'), { headers: this.headers(), signal });
    const text = await answer.text();
    if (answer.status !== 200) throw new Error(`the primary answered the state request with ${answer.status}: ${text.slice(0, 200)}`);
    if (text.length > MAX_STATE_BYTES) throw new Error('the primary sent a state larger than the limit');
    return { state: stateSchema.parse(JSON.parse(text)), at: Date.now() };
  }

  /** Waits on the change feed with what is on disk now; heartbeats confirm the replica current. */
  private async follow(): Promise<{ state: ReplicationState; at: number }> {
    const held = this.held();
    const silence = new AbortController();
    let watchdog = setTimeout(() => silence.abort(), FEED_SILENCE_MS);
    try {
      const answer = await fetch(this.url('/rest/replication/feed'), {
        method: 'POST',
        headers: { ...this.headers(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...held, holdMs: this.options.holdMs }),
        signal: AbortSignal.any([this.abort.signal, silence.signal]),
      });
      if (answer.status !== 200 || !answer.body) throw new Error(`the primary answered the feed request with ${answer.status}: ${(await answer.text()).slice(0, 200)}`);
      const decoder = new TextDecoder();
      let pending = '';
      for await (const chunk of answer.body) {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => silence.abort(), FEED_SILENCE_MS);
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        if (pending.length > MAX_STATE_BYTES) throw new Error('the primary sent a feed line larger than the limit');
        let end: number;
        while ((end = pending.indexOf('\n')) >= 0) {
          const line = JSON.parse(pending.slice(0, end)) as { same?: boolean; state?: unknown };
          pending = pending.slice(end + 1);
          if (line.state !== undefined) return { state: stateSchema.parse(line.state), at: Date.now() };
          if (line.same === true) this.confirmedAt = Date.now();
        }
      }
      throw new Error('the primary ended the feed without a state');
    } catch (error) {
      if (silence.signal.aborted && !this.abort.signal.aborted) throw new Error(`the primary sent nothing for ${FEED_SILENCE_MS / 1000} s`);
      throw error;
    } finally {
      clearTimeout(watchdog);
    }
  }

  /** The heads on disk now and the local token set's digest: what the feed compares. */
  private held(): HeldState {
    const heads: Record<string, string> = {};
    for (const location of this.options.registry.locations()) {
      heads[`${location.account}/${location.name}`] = readRef(location.gitdir, BRANCH_REF) ?? '';
    }
    for (const offered of this.lastOffered) heads[offered] ??= ''; // offered without a head: nothing to fetch yet
    return { heads, tokensDigest: tokensDigest(this.options.tokens.records()) };
  }

  private lastOffered: string[] = [];

  /** Makes the folder match a state; true when everything matched (no fetch failed). */
  private async apply(state: ReplicationState): Promise<boolean> {
    const { registry } = this.options;
    const local = new Map(registry.locations().map((location) => [`${location.account}/${location.name}`, location]));
    const offered = new Set<string>();
    const jobs: Array<{ what: string; run: () => Promise<void> }> = [];
    this.lastOffered = [];
    for (const repository of state.repositories) {
      const key = `${repository.account}/${repository.name}`;
      offered.add(key);
      if (!repository.head) {
        if (!local.has(key)) this.lastOffered.push(key);
        continue;
      }
      const location = local.get(key);
      if (!location) jobs.push({ what: key, run: () => createMirror(registry.root, this.options.source, repository.account, repository.name) });
      else if (readRef(location.gitdir, BRANCH_REF) !== repository.head) {
        jobs.push({ what: key, run: () => fetchMirror(location.gitdir, this.options.source, repository.account, repository.name) });
      }
    }
    for (const [key, location] of local) {
      if (!offered.has(key)) jobs.push({ what: key, run: () => removeMirror(registry.root, location.gitdir) });
    }
    this.repositoryCount = state.repositories.length;

    // Tokens first: a revocation must not wait behind fetches.
    if (tokensDigest(this.options.tokens.records()) !== state.tokensDigest) await this.options.tokens.replaceAll(state.tokens);

    let failures = 0;
    const queue = [...jobs];
    const worker = async () => {
      for (let job = queue.shift(); job && !this.stopped; job = queue.shift()) {
        this.fetches++;
        try {
          await job.run();
        } catch (error) {
          failures++;
          this.fetchFailures++;
          this.lastError = this.describe(error);
          this.options.logger.warn({ event: 'replication-fetch-failed', repository: job.what, problem: this.lastError });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, jobs.length) }, worker));

    return failures === 0 && !this.stopped;
  }
}
