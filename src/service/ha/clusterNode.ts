/**
 * One node of an HA cluster (`cfghub serve --cluster NAME --etcd URL… --advertise URL`): the
 * leader takes writes, every node serves reads, and a follower forwards writes to the leader that
 * etcd names (never a fixed URL).
 *
 * - Election and the leader's lease: leadership.ts. The sync set and each push's record: syncSet.ts.
 * - A follower keeps up by `git fetch` from the leader (the read replica's Replicator, pointed
 *   at whichever node leads now) and by the records the leader sends it once it is in the sync
 *   set or joining it (applied by disk/applyReplicated.ts after an epoch check).
 * - Each node keeps a presence key in etcd (its URL, role, epoch, and a digest of its heads) on
 *   its own lease, which `cfghub ha status` and the leader read.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  applyInTurn,
  applyReplicatedEntry,
  recordLocation,
  recordRepository,
  type ApplyOutcome,
} from '../../disk/applyReplicated.js';
import type { JournalEntry } from '../../disk/journal/journalRecords.js';
import { withoutPaths } from '../../domain/reasons.js';
import type { HaStateFile } from '../../disk/haState.js';
import { decodeRecord } from '../../disk/journal/journalRecords.js';
import { readRef } from '../../disk/refs/refs.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { BRANCH_REF } from '../../layout/layout.js';
import { EtcdClient } from '../../lib/etcd.js';
import { isHttp, urlOf } from '../../lib/urls.js';
import { ServiceError } from '../errors.js';
import { awaitCommit, type ReplicaLink } from '../replication/replicaLink.js';
import { Replicator, type ReplicaStatus } from '../replication/replicator.js';
import { createMirror, fetchMirror, keepRewoundHeads, ORPHANED_PREFIX } from '../replication/mirror.js';
import type { TokenService } from '../admin/tokens.js';
import {
  clusterKeys,
  DEFAULT_LEASE_SECONDS,
  nodeValueSchema,
  parseValue,
  type ClusterKeys,
  type LeaderValue,
  type NodeValue,
} from './keyspace.js';
import { Leadership } from './leadership.js';
import { Peers } from './peers.js';
import { SyncSet } from './syncSet.js';

export interface ClusterOptions {
  readonly cluster: string;
  readonly etcd: readonly string[];
  /** This node's URL as the other nodes and forwarded clients reach it. */
  readonly advertise: string;
  /** The cluster's replication token: how nodes authenticate to each other. */
  readonly token: string;
  readonly strict?: boolean;
  readonly leaseSeconds?: number;
  /** How long the leader waits for a member's answer before removing it from the sync set. */
  readonly syncTimeoutMs?: number;
}

export const DEFAULT_SYNC_TIMEOUT_MS = 2_000;
/**
 * A follower's pause after each change its leader's feed told it of: the pushes it holds already
 * (they came as records) wake it once per this long at most under a stream of pushes, not once
 * per push, which took both cores' time from the pushes themselves. What travels by the feed alone
 * (a command on the leader's folder, an admin token) reaches it within this long more.
 */
const FOLLOW_PAUSE_MS = 500;

/** A record (push) from a leader, answered by a member. */
export type RecordOutcome =
  | { readonly ok: true; readonly outcome: 'applied' | 'already' }
  | { readonly ok: false; readonly code: 'stale_epoch' | 'behind' | 'bad_record'; readonly message: string };

export interface ClusterStatus {
  readonly cluster: string;
  readonly node: string;
  readonly role: 'leader' | 'starting' | 'follower';
  readonly epoch: number;
  readonly leader: { readonly node: string; readonly url: string; readonly epoch: number } | null;
  readonly syncSet: readonly string[];
  readonly joining: readonly string[];
  readonly strict: boolean;
  readonly problem: string | null;
}

export class ClusterNode implements ReplicaLink {
  private readonly keys: ClusterKeys;
  private readonly etcd: EtcdClient;
  private readonly leadership: Leadership;
  private readonly syncSet: SyncSet;
  private readonly peers: Peers;
  private follower: Replicator | undefined;
  private leaderNow: (LeaderValue & { epoch: number }) | undefined;
  private presenceTimer: NodeJS.Timeout | undefined;
  private presence: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly options: ClusterOptions,
    private readonly state: HaStateFile,
    private readonly registry: RepositoryRegistry,
    private readonly tokens: TokenService,
    private readonly logger: Logger,
  ) {
    this.keys = clusterKeys(options.cluster);
    const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.etcd = new EtcdClient(options.etcd, { requestTimeoutMs: Math.max(300, (leaseSeconds * 1000) / 6) });
    this.peers = new Peers(options.token, options.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS);
    const self = { node: state.current.nodeId, url: options.advertise };
    this.leadership = new Leadership(
      this.etcd,
      this.keys,
      self,
      state,
      {
        becameLeader: (epoch) => this.lead(epoch),
        becameFollower: (reason) => this.logger.warn({ event: 'ha-follower', node: this.nodeId, reason }),
        leaderChanged: (leader) => this.follow(leader),
      },
      { leaseSeconds },
      logger,
    );
    this.syncSet = new SyncSet(this.etcd, this.keys, this.leadership, this.peers, {
      self: this.nodeId,
      strict: options.strict ?? false,
      logger,
    });
  }

  get nodeId(): string {
    return this.state.current.nodeId;
  }

  start(): void {
    this.leadership.start();
    this.schedulePresence(0);
    this.logger.info({
      event: 'ha-node',
      cluster: this.options.cluster,
      node: this.nodeId,
      advertise: this.options.advertise,
    });
  }

  /** Whether this node takes writes now (it leads, and its lease surely lives). */
  servesWrites(): boolean {
    return this.leadership.leaderValid();
  }

  /**
   * What every answer of the leader carries: `Cfghub-Node` and `Cfghub-Epoch`, so that a client
   * (or a fault test) can tell which leadership acknowledged a write, forwarded or not.
   */
  leaderHeaders(): Record<string, string> {
    return { 'Cfghub-Node': this.nodeId, 'Cfghub-Epoch': String(this.leadership.epoch ?? 0) };
  }

  /** Why no leader can be known or elected now, in words for a refused write; undefined while etcd answers. */
  leaderProblem(): string | undefined {
    const problem = this.leadership.problem;
    if (problem === undefined) return undefined;
    // The request's own words name etcd's endpoints: the refusal says what it means.
    return problem.startsWith('etcd:') ? 'etcd cannot be reached (its quorum may be lost)' : problem;
  }

  /** The leader's URL, where a follower forwards writes; '' while none is known. */
  get primary(): string {
    return this.leaderNow && this.leaderNow.node !== this.nodeId ? this.leaderNow.url : '';
  }

  /** The hook the leader's commits call (disk/repository.ts): see syncSet.ts. */
  readonly replicate = (entry: Parameters<SyncSet['replicate']>[0]) => this.syncSet.replicate(entry);

  private async lead(epoch: number): Promise<void> {
    const old = this.follower;
    this.follower = undefined;
    await this.following;
    await old?.stop();
    await this.refreshUrls();
    await this.syncSet.begin(epoch, this.leadership.cluster.sync, this.headsDigest().digest);
  }

  /** Aborted when the leader etcd names changes: see ReplicaLink.primaryReplaced. */
  private leaderTerm = new AbortController();

  /** See ReplicaLink.primaryReplaced. */
  primaryReplaced(): AbortSignal {
    return this.leaderTerm.signal;
  }

  private follow(leader: (LeaderValue & { epoch: number }) | undefined): void {
    const previous = this.leaderNow;
    this.leaderNow = leader;
    if (previous?.node !== leader?.node || previous?.epoch !== leader?.epoch) {
      this.leaderTerm.abort();
      this.leaderTerm = new AbortController();
    }
    if (!leader || leader.node === this.nodeId) return;
    if (previous?.url === leader.url && previous.epoch === leader.epoch && this.follower) return;
    this.logger.info({ event: 'ha-following', leader: leader.node, url: leader.url, epoch: leader.epoch });
    const old = this.follower;
    // The leader etcd elected holds every acknowledged push (it was in the sync set): its first
    // state is followed even though it comes from another folder, and commits of this node's it
    // does not have (pushes the cluster never acknowledged, left by a leader that died or lost its
    // place before answering) are kept under refs/cfghub/orphaned/, never deleted, and main follows.
    const next = new Replicator({
      source: { primary: leader.url, token: this.options.token },
      registry: this.registry,
      tokens: this.tokens,
      logger: this.logger,
      acceptNewPrimary: true,
      mayRewind: (repository) => this.recordEpochs.get(repository) !== leader.epoch,
      keptUnder: ORPHANED_PREFIX,
      pauseAfterChangeMs: FOLLOW_PAUSE_MS,
    });
    this.follower = next;
    // One follower at a time: a fetch from the old leader that ends late must not move a ref after the new one's.
    this.following = this.following.then(async () => {
      await old?.stop();
      if (this.follower === next && !this.stopped) next.start();
    });
  }

  private following: Promise<void> = Promise.resolve();
  /** The epoch of the last record applied to each repository (`account/name`): see Replicator's mayRewind. */
  private readonly recordEpochs = new Map<string, number>();

  /** A leader's record, from `/rest/ha/records`: checked against the highest epoch seen, then applied durably. */
  async receiveRecord(epoch: number, bytes: Buffer): Promise<RecordOutcome> {
    const record = decodeRecord(bytes);
    if (!record)
      return { ok: false, code: 'bad_record', message: 'the record does not decode or its checksum does not hold' };
    if (this.leadership.role !== 'follower') {
      if (epoch <= (this.leadership.epoch ?? 0))
        return { ok: false, code: 'stale_epoch', message: `this node leads at epoch ${this.leadership.epoch}` };
      this.leadership.stepDown(`a leader of a newer epoch (${epoch}) sent a record`);
    }
    if ((await this.state.observeEpoch(epoch)) === 'stale') {
      return { ok: false, code: 'stale_epoch', message: `this node has seen epoch ${this.state.current.epoch}` };
    }
    const named = recordRepository(record.entry);
    const leader = this.leaderNow && this.leaderNow.node !== this.nodeId ? this.leaderNow : undefined;
    let outcome = await this.applyRecord(record.entry);
    if (outcome.kind === 'missing' && named && leader) {
      // A repository made on the leader since this node last fetched: mirrored now, at the head
      // the record starts from (the leader moves its ref only after this answer).
      try {
        await createMirror(
          this.registry.root,
          { primary: leader.url, token: this.options.token },
          named.account,
          named.name,
        );
        outcome = await this.applyRecord(record.entry);
      } catch (error) {
        this.logger.warn({
          event: 'ha-mirror-failed',
          repository: `${named.account}/${named.name}`,
          problem: (error as Error).message,
        });
      }
    }
    if (outcome.kind === 'behind' && named && leader?.epoch === epoch)
      outcome = (await this.catchUp(named.account, named.name, record.entry)) ?? outcome;
    if (outcome.kind === 'applied' || outcome.kind === 'already') {
      if (named) this.recordEpochs.set(`${named.account}/${named.name}`, epoch);
      return { ok: true, outcome: outcome.kind };
    }
    return {
      ok: false,
      code: 'behind',
      message:
        outcome.kind === 'missing'
          ? 'this node does not have that repository yet'
          : 'this node missed an earlier record; it catches up by fetching',
    };
  }

  /**
   * A record this node cannot apply as it stands (its head is not the one the leader's push starts
   * from: it missed pushes, or holds commits the leader does not have): fetched from the leader,
   * whose ref stays at exactly that head until this answer, then applied. So a node catching up
   * under a steady stream of pushes converges with the next record rather than chasing the head.
   * Commits of this node's that the leader does not have were never acknowledged (the leader
   * answers 200 only once its own ref has moved, and holds every push acknowledged before it led):
   * they are kept under refs/cfghub/orphaned/, never deleted, and main follows the leader.
   */
  private async catchUp(account: string, name: string, entry: JournalEntry): Promise<ApplyOutcome | undefined> {
    const leader = this.leaderNow;
    const repository = this.repositoryOf(entry);
    if (!leader || !repository) return undefined;
    const source = { primary: leader.url, token: this.options.token };
    // The fetch and the apply in one turn of the repository's writers' queue: no merge, repack or
    // other apply of this repository runs between them.
    return repository.exclusive(async () => {
      try {
        let fetched = await fetchMirror(repository.gitdir, source, account, name);
        if (fetched === 'rewind-refused') {
          const kept = await keepRewoundHeads(repository.gitdir, ORPHANED_PREFIX);
          this.logger.warn({ event: 'ha-orphaned', repository: `${account}/${name}`, kept, leader: leader.node });
          fetched = await fetchMirror(repository.gitdir, source, account, name, true);
        }
        repository.movedInTurn();
        if (fetched !== 'fetched') return undefined;
        return await applyInTurn(repository, entry);
      } catch (error) {
        this.logger.warn({
          event: 'ha-catch-up-failed',
          repository: `${account}/${name}`,
          problem: withoutPaths((error as Error).message),
        });
        return undefined;
      }
    });
  }

  /** The repository a record names, as this node's registry holds it (one writers' queue per repository); undefined when it has no folder here. */
  private repositoryOf(entry: JournalEntry): GitRepository | undefined {
    const location = recordLocation(this.registry.root, entry);
    return location && this.registry.open(location);
  }

  private async applyRecord(entry: JournalEntry): Promise<ApplyOutcome> {
    const repository = this.repositoryOf(entry);
    return repository ? applyReplicatedEntry(repository, entry) : { kind: 'missing' };
  }

  /** A new leader's epoch, from `/rest/ha/epoch`: refused when lower than one seen. */
  async receiveEpoch(epoch: number): Promise<RecordOutcome> {
    if (this.leadership.role !== 'follower' && epoch <= (this.leadership.epoch ?? 0)) {
      return { ok: false, code: 'stale_epoch', message: `this node leads at epoch ${this.leadership.epoch}` };
    }
    if ((await this.state.observeEpoch(epoch)) === 'stale')
      return { ok: false, code: 'stale_epoch', message: `this node has seen epoch ${this.state.current.epoch}` };
    if (this.leadership.role !== 'follower' && epoch > (this.leadership.epoch ?? 0))
      this.leadership.stepDown(`a leader of a newer epoch (${epoch}) announced itself`);
    return { ok: true, outcome: 'applied' };
  }

  /**
   * A leader's confirmation, from `/rest/ha/sync`: the epoch checked as an announcement's, then
   * one whole round of this node's follower (the leader's state: repositories made and deleted,
   * tags, token and admin-token records); answered once it completed.
   */
  async receiveSync(epoch: number): Promise<RecordOutcome> {
    const announced = await this.receiveEpoch(epoch);
    if (!announced.ok) return announced;
    const follower = this.follower;
    if (!follower || this.leaderNow?.epoch !== epoch)
      return { ok: false, code: 'behind', message: 'this node does not follow that leader yet' };
    try {
      if (await follower.syncNow()) return { ok: true, outcome: 'applied' };
    } catch (error) {
      this.logger.warn({ event: 'ha-sync-failed', problem: withoutPaths((error as Error).message) });
    }
    return { ok: false, code: 'behind', message: "this node could not bring itself in line with the leader's state" };
  }

  /** See ReplicaLink.confirmWrite. */
  readonly confirmWrite = (): Promise<void> => this.syncSet.confirm();

  /** Every repository's head as it is on disk now, and their digest. */
  headsDigest(): { heads: Record<string, string>; digest: string } {
    const heads: Record<string, string> = {};
    for (const location of this.registry.locations()) {
      try {
        heads[`${location.account}/${location.name}`] = readRef(location.gitdir, BRANCH_REF) ?? '';
      } catch {
        heads[`${location.account}/${location.name}`] = '';
      }
    }
    const names = Object.keys(heads).sort();
    const digest = createHash('sha256')
      .update(names.map((name) => `${name} ${heads[name]}\n`).join(''))
      .digest('hex');
    return { heads, digest };
  }

  status(): ReplicaStatus {
    const follower = this.follower?.status();
    return {
      role: 'replica',
      primary: this.primary,
      connected: follower?.connected ?? this.servesWrites(),
      lagSeconds: this.servesWrites() ? 0 : (follower?.lagSeconds ?? null),
      lastConfirmed: follower?.lastConfirmed ?? null,
      lastError: follower?.lastError ?? this.leadership.problem ?? null,
      refused: follower?.refused ?? null,
      rewindsRefused: follower?.rewindsRefused ?? [],
      following: follower?.following ?? null,
      repositories: follower?.repositories ?? 0,
      fetches: follower?.fetches ?? 0,
      fetchFailures: follower?.fetchFailures ?? 0,
    };
  }

  clusterStatus(): ClusterStatus {
    return {
      cluster: this.options.cluster,
      node: this.nodeId,
      role: this.leadership.role,
      epoch: this.state.current.epoch,
      leader: this.leaderNow
        ? { node: this.leaderNow.node, url: this.leaderNow.url, epoch: this.leaderNow.epoch }
        : null,
      syncSet:
        this.leadership.role === 'follower' ? (this.leadership.cluster.sync?.members ?? []) : this.syncSet.members,
      joining: this.leadership.role === 'follower' ? [] : this.syncSet.joiningNodes,
      strict: this.options.strict ?? false,
      problem: this.leadership.problem ?? null,
    };
  }

  lagSeconds(now?: number): number | undefined {
    if (this.servesWrites()) return 0;
    return this.follower?.lagSeconds(now);
  }

  awaitCommit(repository: GitRepository, commit: string, waitMs?: number): Promise<string> {
    return awaitCommit(repository, commit, () => this.lagSeconds(), this.servesWrites() ? 0 : waitMs);
  }

  private schedulePresence(ms: number): void {
    if (this.stopped) return;
    this.presenceTimer = setTimeout(() => {
      this.presence = this.publish()
        .catch((error: unknown) => this.logger.warn({ event: 'ha-presence-failed', problem: (error as Error).message }))
        .finally(() => this.schedulePresence(((this.options.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1000) / 3));
    }, ms);
    this.presenceTimer.unref?.();
  }

  /** Publishes this node's presence; the leader also learns the others' URLs and grows its sync set. */
  private async publish(): Promise<void> {
    const lease = this.leadership.leaseId;
    if (!lease) return;
    const { heads, digest } = this.headsDigest();
    const value: NodeValue = {
      node: this.nodeId,
      url: this.options.advertise,
      role: this.leadership.role === 'follower' ? 'follower' : 'leader',
      epoch: this.state.current.epoch,
      repositories: Object.keys(heads).length,
      headsDigest: digest,
      updated: new Date().toISOString(),
    };
    await this.etcd.put(this.keys.node(this.nodeId), JSON.stringify(value), lease);
    if (this.leadership.role !== 'leader') return;
    const urls = await this.refreshUrls();
    await this.syncSet.grow(urls, () => this.headsDigest().heads);
  }

  private async refreshUrls(): Promise<Map<string, string>> {
    const { kvs } = await this.etcd.get(this.keys.nodes, { prefix: true });
    const urls = new Map<string, string>();
    for (const kv of kvs) {
      const value = parseValue(nodeValueSchema, kv.value);
      if (value) urls.set(value.node, value.url);
    }
    this.syncSet.setUrls(urls);
    return urls;
  }

  /** A clean stop: the leadership is given back at once (another node leads within a round trip), the follower stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.presenceTimer);
    await this.presence;
    await this.leadership.resign();
    await this.following;
    await this.follower?.stop();
  }
}

/** Refuses a cluster option that cannot work, before anything starts. */
export function checkClusterOptions(options: ClusterOptions): void {
  clusterKeys(options.cluster);
  for (const url of [...options.etcd, options.advertise]) {
    const parsed = urlOf(url);
    if (!parsed) throw new ServiceError('invalid_argument', `not a URL: ${JSON.stringify(url)}`);
    if (!isHttp(parsed))
      throw new ServiceError('invalid_argument', `an http:// or https:// URL is needed: ${JSON.stringify(url)}`);
  }
  if (options.etcd.length === 0) throw new ServiceError('invalid_argument', '--etcd needs at least one URL');
}
