/**
 * A replica's follower: keeps the mirrors under its repositories folder and its token files in
 * step with a primary, and says how current it is.
 *
 * The loop: ask for the primary's state (GET /rest/replication/state), make the folder match it
 * (fetch the repositories whose branches or tags differ, mirror new ones, set aside gone ones,
 * replace the client and admin token records), then wait on the change feed (POST
 * /rest/replication/feed) with the refs now on disk. The feed answers as soon as anything differs,
 * or after its hold time (the periodic full check: the whole state compared with the disk again).
 * While it waits the primary sends a heartbeat line each second meaning "still the same": that is
 * what "confirmed current" means, and the lag is the time since the last confirmation, measured on
 * the monotonic clock (a wall clock stepped back would show a dead primary as current). When the
 * primary cannot be reached the loop retries with a growing pause (at most RETRY_MAX_MS) and the
 * replica serves what it has.
 *
 * What a replica refuses, serving what it has and saying why (status, `/readyz`, log, metric)
 * until the operator starts it with `--accept-new-primary` (which accepts the next state whole):
 *  - a state of another folder than the one it follows (folderIdentity.ts), or of a lower
 *    generation (an old primary restarted after a promotion);
 *  - a state that would set aside more than MAX_REMOVED_SHARE of its mirrors, and more than one, at
 *    once (a primary started on an empty or restored folder);
 *  - per repository, a branch moving backwards (the repository stays where it is; mirror.ts).
 *
 * The replica never writes a repository itself: only git fetch does, on the primary's word.
 */
import { NO_REDIRECTS, refuseRedirect } from '../../client/redirects.js';
import { LineSplitter, readAtMost } from '../../lib/boundedStreams.js';
import { parseJsonSteps } from '../../lib/jsonParseSteps.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { withoutPaths } from '../../domain/reasons.js';
import type { RepositoryLocation, RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { removeStaleLocks } from '../../disk/startupRecovery.js';
import { adminTokenRecordSchema, AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { deliveredMarkSchema, webhookRecordSchema, WebhookStore } from '../../disk/records/webhookStore.js';
import { tokenRecordSchema } from '../../disk/records/tokenStore.js';
import type { TokenService } from '../admin/tokens.js';
import { folderIdentitySchema, pin, readPin, type FolderIdentity } from '../../disk/records/folderIdentity.js';
import {
  clearUnfinishedMirrors,
  createMirror,
  fetchMirror,
  keepRewoundHeads,
  removeMirror,
  type MirrorSource,
} from './mirror.js';
import { awaitCommit, MIN_COMMIT_WAIT_MS } from './replicaLink.js';
import {
  HEARTBEAT_LINE,
  MAX_REPLICATED_REPOSITORIES,
  recordsDigest,
  webhooksDigest,
  type HeldState,
  type ReplicationState,
} from './state.js';
import { withoutTrailingSlashes } from '../../lib/urls.js';

/** What /readyz and the metrics report about a replica (`Replicator.status()`). */
export interface ReplicaStatus {
  readonly role: 'replica';
  readonly primary: string;
  /** The last exchange with the primary succeeded. */
  readonly connected: boolean;
  /** Seconds since the replica last confirmed it held what the primary holds; null before the first time. */
  readonly lagSeconds: number | null;
  /** When that was, on the wall clock (for display only). */
  readonly lastConfirmed: string | null;
  /** Why the last exchange or fetch failed, without paths or tokens; null after a success. */
  readonly lastError: string | null;
  /** Why the primary's last state was refused (another folder, a lower generation, too many removals); null when it was not. */
  readonly refused: string | null;
  /** Repositories whose branch the primary moved backwards: kept where they are (`account/name`). */
  readonly rewindsRefused: readonly string[];
  /** The primary folder and generation this replica follows; null before the first state. */
  readonly following: FolderIdentity | null;
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
  /** `--accept-new-primary`: the next state is applied whatever it is (another folder, a lower generation, removals, rewinds). */
  readonly acceptNewPrimary?: boolean;
  /**
   * Whether a repository's branches may be moved backwards (when accepting a new primary). An HA
   * cluster's follower says no for a repository whose head came from the current leader's own
   * record: that commit may be acknowledged any moment.
   */
  readonly mayRewind?: (repository: string) => boolean;
  /** Where branches moved backwards are kept (`refs/cfghub/rewound/` by default; an HA node's orphaned commits elsewhere). */
  readonly keptUnder?: string;
  /**
   * How long to wait after a round that found the replica behind before following the feed
   * again (none by default): an HA member receives every push as its leader's record, and would
   * otherwise be woken by each of them only to find it holds it already.
   */
  readonly pauseAfterChangeMs?: number;
}

/** Fetches at once, at most: each is a git process. */
const FETCH_CONCURRENCY = 4;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;
/** A feed that sends nothing (not even a heartbeat) for this long is taken as a dead primary. */
export const FEED_SILENCE_MS = 5_000;
/**
 * The whole state request, and each line of the feed (a heartbeat comes every second, the state
 * line at the end), must arrive within this: a primary sending a byte now and then is not alive.
 */
export const STATE_TIMEOUT_MS = 10_000;
/**
 * The largest state a primary may send, and the longest feed line (about 250 bytes a repository,
 * 400 a token): read as it comes and refused at the chunk that passes it.
 */
export const MAX_STATE_BYTES = 64 * 1024 * 1024;
/** A state may set aside at most this share of the mirrors at once (or one mirror): more is refused. */
export const MAX_REMOVED_SHARE = 0.25;
export { MIN_COMMIT_WAIT_MS };

const stateSchema = z.object({
  origin: folderIdentitySchema,
  repositories: z.array(z.object({ account: z.string(), name: z.string(), head: z.string(), refs: z.string() })),
  tokens: z.array(tokenRecordSchema),
  tokensDigest: z.string(),
  adminTokens: z.array(adminTokenRecordSchema),
  adminTokensDigest: z.string(),
  webhooks: z
    .object({
      hooks: z.array(webhookRecordSchema),
      key: z.string().max(100).optional(),
      delivered: z.array(deliveredMarkSchema),
    })
    .optional(),
  webhooksDigest: z.string().optional(),
});

/** JSON from the primary, parsed in slices of time: a state may be large and must not hold the event loop. */
async function parseSent(text: string, what: string): Promise<unknown> {
  try {
    return await new TimeSlices().run(parseJsonSteps(text));
  } catch {
    throw new Error(`the primary sent ${what} that is not JSON`);
  }
}

/** A state as sent, checked, or refused with the reason. */
function checkState(value: unknown): ReplicationState {
  const repositories = (value as { repositories?: unknown } | null)?.repositories;
  if (Array.isArray(repositories) && repositories.length > MAX_REPLICATED_REPOSITORIES)
    throw new Error(
      `the primary's state names ${repositories.length} repositories, more than the ${MAX_REPLICATED_REPOSITORIES} a replica follows; refused`,
    );
  const parsed = stateSchema.safeParse(value);
  if (!parsed.success)
    throw new Error(`the primary sent a state that is not one: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

export class Replicator {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private abort = new AbortController();
  /** When the replica last confirmed it was current: monotonic (performance.now) for the lag, wall clock for display. */
  private confirmed: { at: number; wall: number } | undefined;
  private connected = false;
  private lastError: string | null = null;
  private refused: string | null = null;
  private readonly rewinds = new Set<string>();
  private accepting: boolean;
  private fetches = 0;
  private fetchFailures = 0;
  private repositoryCount = 0;
  private pauseTimer: { timer: NodeJS.Timeout; done: () => void } | undefined;
  private readonly adminTokens: AdminTokenStore;
  private readonly webhooks: WebhookStore;

  constructor(private readonly options: ReplicatorOptions) {
    this.accepting = options.acceptNewPrimary === true;
    this.adminTokens = new AdminTokenStore(options.registry.root);
    this.webhooks = new WebhookStore(options.registry.root);
  }

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

  /** Seconds since the replica last confirmed it was current (monotonic clock); undefined before the first time. */
  lagSeconds(now = performance.now()): number | undefined {
    return this.confirmed === undefined ? undefined : Math.max(0, now - this.confirmed.at) / 1000;
  }

  status(): ReplicaStatus {
    const lag = this.lagSeconds();
    return {
      role: 'replica',
      primary: this.primary,
      connected: this.connected,
      lagSeconds: lag === undefined ? null : Math.round(lag * 10) / 10,
      lastConfirmed: this.confirmed === undefined ? null : new Date(this.confirmed.wall).toISOString(),
      lastError: this.lastError,
      refused: this.refused,
      rewindsRefused: [...this.rewinds].sort(),
      following: readPin(this.options.registry.root) ?? null,
      repositories: this.repositoryCount,
      fetches: this.fetches,
      fetchFailures: this.fetchFailures,
    };
  }

  /** The head to read for a request with `Min-Commit` (see replicaLink.ts). */
  awaitCommit(repository: GitRepository, commit: string, waitMs = MIN_COMMIT_WAIT_MS): Promise<string> {
    return awaitCommit(repository, commit, () => this.lagSeconds(), waitMs);
  }

  /**
   * One whole round now, after any under way: the primary's state asked and every repository,
   * tag, token and admin-token record brought in line with it. Whether it completed (an HA
   * member answers its leader's confirmation so, see SyncSet.confirm).
   */
  async syncNow(): Promise<boolean> {
    if (this.stopped) return false;
    const complete = await this.apply(await this.askState());
    if (complete) this.confirm();
    return complete;
  }

  /** Rounds one at a time: the loop's and syncNow's. */
  private applying: Promise<unknown> = Promise.resolve();

  private apply(state: ReplicationState): Promise<boolean> {
    const done = this.applying.then(() => this.applyState(state));
    this.applying = done.catch(() => undefined);
    return done;
  }

  private confirm(): void {
    this.confirmed = { at: performance.now(), wall: Date.now() };
  }

  private async run(): Promise<void> {
    await clearUnfinishedMirrors(this.options.registry.root).catch((error: unknown) => {
      this.options.logger.warn({ event: 'replication-work-not-cleared', problem: this.describe(error) });
    });
    let follow = false;
    let retry = RETRY_MIN_MS;
    while (!this.stopped) {
      try {
        const state = follow ? await this.follow() : await this.askState();
        this.connected = true;
        const complete = await this.apply(state);
        if (complete) {
          this.confirm();
          this.lastError = null;
          retry = RETRY_MIN_MS;
        }
        if (complete && follow && this.options.pauseAfterChangeMs) await this.pause(this.options.pauseAfterChangeMs);
        follow = complete;
        if (!complete) {
          await this.pause(retry);
          retry = Math.min(RETRY_MAX_MS, retry * 2);
        }
      } catch (error) {
        if (this.stopped) break;
        this.connected = false;
        const problem = this.describe(error);
        if (problem !== this.lastError)
          this.options.logger.warn({ event: 'replication-failed', primary: this.primary, problem });
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
    const text =
      error instanceof Error
        ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
        : String(error);
    return withoutPaths(text.split(this.options.source.token).join('…'));
  }

  private url(path: string): string {
    return `${withoutTrailingSlashes(this.primary)}${path}`;
  }

  /** A request to the primary, never following a redirect (the replication token would go along). */
  private async ask(path: string, init: RequestInit): Promise<Response> {
    const answer = await fetch(this.url(path), { ...init, ...NO_REDIRECTS });
    await refuseRedirect(answer, this.primary);
    return answer;
  }

  private headers(): Record<string, string> {
    const following = readPin(this.options.registry.root);
    return {
      'Client-Token': this.options.source.token,
      ...(following ? { 'Replica-Generation': String(following.generation) } : {}),
    };
  }

  private async askState(): Promise<ReplicationState> {
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(STATE_TIMEOUT_MS)]);
    const answer = await this.ask('/rest/replication/state', { headers: this.headers(), signal });
    const announced = Number(answer.headers.get('content-length') ?? NaN);
    let text: string;
    try {
      text = await readAtMost(
        answer.body,
        MAX_STATE_BYTES,
        "the primary's state",
        Number.isFinite(announced) ? announced : undefined,
      );
    } catch (error) {
      await answer.body?.cancel().catch(() => undefined);
      if (signal.aborted && !this.abort.signal.aborted)
        throw new Error(`the primary did not send its state within ${STATE_TIMEOUT_MS / 1000} s`);
      throw error;
    }
    if (answer.status !== 200)
      throw new Error(`the primary answered the state request with ${answer.status}: ${text.slice(0, 200)}`);
    return checkState(await parseSent(text, 'a state'));
  }

  /**
   * Waits on the change feed with what is on disk now; heartbeats confirm the replica current.
   * Bounded: FEED_SILENCE_MS without a byte, STATE_TIMEOUT_MS without a whole line, or a line over
   * MAX_STATE_BYTES, and the feed is dropped (the loop asks for the state again after a pause).
   */
  private async follow(): Promise<ReplicationState> {
    const held = this.held();
    const stalled = new AbortController();
    let why = '';
    const timer = (ms: number, reason: string) =>
      setTimeout(() => {
        why = reason;
        stalled.abort();
      }, ms);
    const silent = `the primary sent nothing on the feed for ${FEED_SILENCE_MS / 1000} s`;
    const noLine = `the primary completed no feed line in ${STATE_TIMEOUT_MS / 1000} s`;
    let silence = timer(FEED_SILENCE_MS, silent);
    let lineDeadline = timer(STATE_TIMEOUT_MS, noLine);
    try {
      const answer = await this.ask('/rest/replication/feed', {
        method: 'POST',
        headers: { ...this.headers(), 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...held, holdMs: this.options.holdMs }),
        signal: AbortSignal.any([this.abort.signal, stalled.signal]),
      });
      if (answer.status !== 200 || !answer.body) {
        const text = await readAtMost(answer.body, 4096, 'the refusal').catch(() => '');
        throw new Error(`the primary answered the feed request with ${answer.status}: ${text.slice(0, 200)}`);
      }
      const lines = new LineSplitter(MAX_STATE_BYTES, 'a line of the feed');
      for await (const chunk of answer.body) {
        clearTimeout(silence);
        silence = timer(FEED_SILENCE_MS, silent);
        for (const text of lines.add(chunk as Uint8Array)) {
          clearTimeout(lineDeadline);
          lineDeadline = timer(STATE_TIMEOUT_MS, noLine);
          if (text === HEARTBEAT_LINE) {
            this.confirm();
            continue;
          }
          const line = (await parseSent(text, 'a feed line')) as { same?: boolean; state?: unknown } | null;
          if (line?.state !== undefined) return checkState(line.state);
          if (line?.same === true) this.confirm();
        }
      }
      throw new Error('the primary ended the feed without a state');
    } catch (error) {
      if (stalled.signal.aborted && !this.abort.signal.aborted) throw new Error(why);
      throw error;
    } finally {
      clearTimeout(silence);
      clearTimeout(lineDeadline);
    }
  }

  /** The refs on disk now, the local token sets' digests and the folder followed: what the feed compares. */
  private held(): HeldState {
    const { registry, tokens } = this.options;
    const refs: Record<string, string> = {};
    for (const location of registry.locations()) {
      const key = `${location.account}/${location.name}`;
      try {
        refs[key] = this.rewinds.has(key) ? 'rewind-refused' : registry.open(location).refsDigest();
      } catch {
        refs[key] = '';
      }
    }
    for (const offered of this.lastOffered) refs[offered] ??= ''; // offered without a head: nothing to fetch yet
    return {
      refs,
      tokensDigest: recordsDigest(tokens.records()),
      adminTokensDigest: recordsDigest(this.adminTokens.all()),
      webhooksDigest: webhooksDigest(this.webhooks.replicated()),
      origin: readPin(registry.root),
    };
  }

  private lastOffered: string[] = [];

  /** Why this state must not be applied without the operator's word, or undefined. */
  private refusal(
    state: ReplicationState,
    following: FolderIdentity | undefined,
    removed: number,
    mirrors: number,
  ): string | undefined {
    if (following && state.origin.folder !== following.folder) {
      return `the primary now serves another repositories folder (${state.origin.folder}) than the one this replica follows (${following.folder})`;
    }
    if (following && state.origin.generation < following.generation) {
      return `the primary is of generation ${state.origin.generation}, below the generation ${following.generation} this replica follows: another server was promoted since`;
    }
    if (removed > 1 && removed > mirrors * MAX_REMOVED_SHARE) {
      return `the primary's state would remove ${removed} of this replica's ${mirrors} repositories at once (at most ${MAX_REMOVED_SHARE * 100}%, or one, are removed without the operator's word)`;
    }
    return undefined;
  }

  /** Makes the folder match a state; true when everything matched (no fetch failed, nothing refused). */
  /** Fetches one repository; call inside its writers' queue (see `apply`). */
  private async fetchInTurn(
    location: RepositoryLocation,
    offered: { readonly account: string; readonly name: string },
    key: string,
    accepting: boolean,
  ): Promise<void> {
    const { registry, logger } = this.options;
    const fetch = (rewind: boolean) =>
      fetchMirror(location.gitdir, this.options.source, offered.account, offered.name, rewind, this.abort.signal);
    try {
      let outcome = await fetch(false);
      // An HA member holding its leader's newest record (applied before the leader moves its
      // own ref) is ahead of the leader for a moment, not behind a rewind: nothing to do.
      if (outcome === 'rewind-refused' && this.options.mayRewind?.(key) === false) return;
      if (outcome === 'rewind-refused' && accepting) {
        const kept = await keepRewoundHeads(location.gitdir, this.options.keptUnder);
        logger.warn({ event: 'replication-rewound', repository: key, kept });
        outcome = await fetch(true);
      }
      if (outcome === 'fetched') this.rewinds.delete(key);
      else if (!this.rewinds.has(key)) {
        this.rewinds.add(key);
        logger.error(
          { event: 'replication-rewind-refused', repository: key, primary: this.primary },
          "the primary's branch moved backwards: this replica keeps its head; start it with --accept-new-primary to follow (the head is then kept under refs/cfghub/rewound/)",
        );
      }
    } finally {
      registry.open(location).movedInTurn();
    }
  }

  private async applyState(state: ReplicationState): Promise<boolean> {
    const { registry, logger } = this.options;
    const local = new Map(registry.locations().map((location) => [`${location.account}/${location.name}`, location]));
    const offered = new Set(state.repositories.map((r) => `${r.account}/${r.name}`));
    const gone = [...local].filter(([key]) => !offered.has(key));
    const following = readPin(registry.root);
    const accepting = this.accepting;

    const refusal = this.refusal(state, following, gone.length, local.size);
    if (refusal !== undefined && !accepting) {
      if (refusal !== this.refused)
        logger.error(
          { event: 'replication-refused', primary: this.primary, problem: refusal },
          'the replica keeps serving what it has; start it with --accept-new-primary to follow this primary',
        );
      this.refused = refusal;
      return false;
    }
    if (refusal !== undefined)
      logger.warn({ event: 'replication-new-primary-accepted', primary: this.primary, problem: refusal });
    this.refused = null;
    if (!following || following.folder !== state.origin.folder || following.generation !== state.origin.generation)
      await pin(registry.root, state.origin);

    const jobs: Array<{ what: string; gitdir?: string; run: () => Promise<void> }> = [];
    this.lastOffered = [];
    for (const repository of state.repositories) {
      const key = `${repository.account}/${repository.name}`;
      if (!repository.head) {
        if (!local.has(key)) this.lastOffered.push(key);
        continue;
      }
      const location = local.get(key);
      if (!location) {
        jobs.push({
          what: key,
          run: () =>
            createMirror(registry.root, this.options.source, repository.account, repository.name, this.abort.signal),
        });
        continue;
      }
      let held = '';
      try {
        held = registry.open(location).refsDigest();
      } catch {
        // unreadable: fetched again
      }
      if (held === repository.refs && !this.rewinds.has(key)) continue;
      jobs.push({
        what: key,
        gitdir: location.gitdir,
        // In the repository's writers' queue, as a commit: never beside a pack merge, a repack or
        // (in an HA member) the apply of a leader's record of the same repository.
        run: () => registry.open(location).exclusive(() => this.fetchInTurn(location, repository, key, accepting)),
      });
    }
    for (const [key, location] of gone) {
      this.rewinds.delete(key);
      jobs.push({
        what: key,
        run: () => removeMirror(registry.root, location.account, location.name, location.gitdir),
      });
    }
    this.repositoryCount = state.repositories.length;

    // Tokens first: a revocation must not wait behind fetches.
    if (recordsDigest(this.options.tokens.records()) !== state.tokensDigest)
      await this.options.tokens.replaceAll(state.tokens);
    if (recordsDigest(this.adminTokens.all()) !== state.adminTokensDigest)
      await this.adminTokens.update(() => ({ records: [...state.adminTokens], result: undefined }));
    // The hooks, their key and the delivered marks (a primary of an older version sends none).
    if (state.webhooks && webhooksDigest(this.webhooks.replicated()) !== state.webhooksDigest)
      await this.webhooks.replaceAll(state.webhooks);

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
          logger.warn({ event: 'replication-fetch-failed', repository: job.what, problem: this.lastError });
          // A ref lock left by a crash (this node's own, before a restart) stops every fetch: it
          // goes once stale (the stale-lock age, and no live holder), and the next fetch goes through.
          if (job.gitdir && /cannot lock ref|Unable to create .*\.lock/.test(String((error as Error).message)))
            await removeStaleLocks(job.gitdir, job.what).catch(() => 0);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, jobs.length) }, worker));
    const complete = failures === 0 && !this.stopped;
    if (complete && accepting) this.accepting = false; // the operator's word holds for one state
    return complete && this.rewinds.size === 0;
  }
}
