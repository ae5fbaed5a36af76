/**
 * A node's part in electing the cluster's leader through etcd.
 *
 * Each node holds a lease of `leaseSeconds`, renewed every third of it. The leader is the node
 * whose key `leader` (bound to its lease) etcd holds; the key's create revision, counted on from
 * the bootstrap's base, is its epoch. A node campaigns when there is no leader key and the sync
 * set names it (keyspace.ts, `mayLead`), with one transaction: the leader key must not exist and
 * the sync set must be the one it read, so of two candidates at most one wins, and never a node
 * the sync set left out in between.
 *
 * The leader takes itself for leader only while its lease surely lives: until the time its last
 * successful renewal was SENT plus the lease's TTL, less a margin, on the monotonic clock (which
 * counts on while a process is stopped, and is not moved by setting the time). Past that it
 * refuses writes and steps down. Writes do not depend on this timing: a member of the sync set
 * refuses a record whose epoch is lower than one it has seen (syncSet.ts), and the new leader is
 * such a member.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { EtcdClient, EtcdClusterChanged } from '../../lib/etcd.js';
import type { HaStateFile } from '../../disk/haState.js';
import {
  bootstrapValueSchema,
  leaderValueSchema,
  mayLead,
  parseValue,
  syncValueSchema,
  type BootstrapValue,
  type ClusterKeys,
  type LeaderValue,
  type SyncValue,
} from './keyspace.js';

export interface LeadershipEvents {
  /** This node won at `epoch`: make it ready to take writes; a throw gives the leadership back. */
  becameLeader(epoch: number): Promise<void>;
  /** This node is not (or no longer) the leader. */
  becameFollower(reason: string): void;
  /** The leader as etcd now names it (undefined: none), with its epoch. */
  leaderChanged(leader: (LeaderValue & { epoch: number }) | undefined): void;
}

export interface LeadershipOptions {
  readonly leaseSeconds: number;
  /** Kept off the lease's end: the longest an etcd request may take, and clock rate slack. */
  readonly marginMs?: number;
}

export interface ClusterView {
  readonly leader?: LeaderValue & { epoch: number };
  readonly sync?: SyncValue;
  readonly bootstrap?: BootstrapValue;
  readonly syncModRevision: number;
}

export class Leadership {
  private roleNow: 'leader' | 'starting' | 'follower' = 'follower';
  private epochNow: number | undefined;
  private lease: { id: string; validUntil: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private watch: { close(): void } | undefined;
  private view: ClusterView = { syncModRevision: 0 };
  private problemNow: string | undefined = 'not yet in touch with etcd';
  private readonly marginMs: number;

  constructor(
    private readonly etcd: EtcdClient,
    private readonly keys: ClusterKeys,
    private readonly self: LeaderValue,
    private readonly state: HaStateFile,
    private readonly events: LeadershipEvents,
    private readonly options: LeadershipOptions,
    private readonly logger: Logger,
  ) {
    this.marginMs = options.marginMs ?? Math.min(1_000, (options.leaseSeconds * 1000) / 6);
    const pinned = state.current.etcdClusterId;
    if (pinned) etcd.pinClusterId(pinned);
  }

  get role(): 'leader' | 'starting' | 'follower' {
    return this.roleNow;
  }

  get epoch(): number | undefined {
    return this.epochNow;
  }

  /** Why this node cannot take part in the cluster now (etcd unreachable, or rebuilt), if so. */
  get problem(): string | undefined {
    return this.problemNow;
  }

  get cluster(): ClusterView {
    return this.view;
  }

  /** Whether this node may answer as the leader now: it won, and its lease surely lives. */
  leaderValid(now = performance.now()): boolean {
    return this.roleNow === 'leader' && this.lease !== undefined && now < this.lease.validUntil;
  }

  /** The lease this node holds (for its presence key), if any. */
  get leaseId(): string | undefined {
    return this.lease?.id;
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks at etcd again now rather than at the next renewal (the leader key went, a write failed). */
  poke(): void {
    if (this.ticking) this.again = true;
    else this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((error: unknown) => this.logger.warn({ event: 'ha-tick-failed', problem: (error as Error).message }))
        .finally(() => {
          this.ticking = undefined;
          // While etcd does not answer (a member lost, its election under way), the lease is
          // renewed again soon rather than a third of the lease later: the renewal that etcd's new
          // leader answers first keeps this leadership.
          const period = (this.options.leaseSeconds * 1000) / (this.problemNow === undefined ? 3 : 12);
          this.schedule(this.again ? 0 : period);
          this.again = false;
        });
    }, ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    try {
      await this.renew();
      this.view = await this.read();
      this.problemNow = undefined;
    } catch (error) {
      this.problemNow =
        error instanceof EtcdClusterChanged
          ? `${error.message}; an operator must run: cfghub ha bootstrap NODE`
          : `etcd: ${(error as Error).message}`;
      if (this.roleNow !== 'follower' && !this.leaderValid())
        this.stepDown('its lease may have expired while etcd could not be reached');
      return;
    }
    if (this.roleNow === 'leader' && !this.leaderValid()) this.stepDown('its lease may have expired');
    const leader = this.view.leader;
    if (leader && leader.node === this.self.node && this.roleNow === 'follower') {
      // A leader key of this node's from before a restart, bound to the old process's lease: the
      // old process is gone (the folder is this one's), so it is removed and the election held now.
      await this.etcd.txn(
        [{ key: this.keys.leader, target: 'CREATE', number: leader.epoch - this.epochBase() }],
        [{ delete: { key: this.keys.leader } }],
      );
      this.again = true;
      return;
    }
    this.events.leaderChanged(leader);
    if (!leader && this.roleNow === 'follower' && mayLead(this.self.node, this.view.sync) && this.lease)
      await this.campaign();
    if (!this.watch && !this.stopped) this.watchLeader();
  }

  private epochBase(): number {
    return this.view.bootstrap?.epochBase ?? 0;
  }

  /** Grants a lease when none is held, else renews it, moving its validity on from when the renewal was sent. */
  private async renew(): Promise<void> {
    if (!this.lease) {
      const sentAt = performance.now();
      const granted = await this.acceptingBootstrap(() => this.etcd.grant(this.options.leaseSeconds));
      this.lease = { id: granted.id, validUntil: sentAt + granted.ttl * 1000 - this.marginMs };
      return;
    }
    const sentAt = performance.now();
    const ttl = await this.acceptingBootstrap(() => this.etcd.keepAlive(this.lease!.id));
    if (ttl <= 0) {
      this.lease = undefined;
      if (this.roleNow !== 'follower') this.stepDown('its lease expired');
      return;
    }
    this.lease.validUntil = sentAt + ttl * 1000 - this.marginMs;
  }

  /**
   * Runs an etcd request; when etcd's cluster id is not the pinned one, accepts the new id only if
   * an operator's bootstrap (`cfghub ha bootstrap`) names it.
   */
  private async acceptingBootstrap<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof EtcdClusterChanged)) throw error;
      const fresh = new EtcdClient(this.etcd.endpoints);
      const { kvs } = await fresh.get(this.keys.bootstrap);
      const bootstrap = kvs[0] && parseValue(bootstrapValueSchema, kvs[0].value);
      if (!bootstrap || bootstrap.clusterId !== error.found) throw error;
      this.logger.warn({ event: 'ha-etcd-bootstrapped', from: bootstrap.node, epochBase: bootstrap.epochBase });
      this.lease = undefined; // the old etcd's, unknown to this one
      this.etcd.pinClusterId(error.found);
      await this.state.pinEtcdCluster(error.found);
      this.again = true; // the next look, at once, grants a lease of the new etcd's
      throw new Error('the cluster was bootstrapped on a rebuilt etcd: joining it again');
    }
  }

  private async read(): Promise<ClusterView> {
    const result = await this.etcd.txn(
      [],
      [{ get: { key: this.keys.leader } }, { get: { key: this.keys.sync } }, { get: { key: this.keys.bootstrap } }],
    );
    const [leaderKv, syncKv, bootstrapKv] = result.ranges.map((kvs) => kvs[0]);
    if (!this.state.current.etcdClusterId) await this.state.pinEtcdCluster(result.header.clusterId);
    const bootstrap = bootstrapKv && parseValue(bootstrapValueSchema, bootstrapKv.value);
    const leaderValue = leaderKv && parseValue(leaderValueSchema, leaderKv.value);
    const base = bootstrap?.epochBase ?? 0;
    return {
      leader: leaderValue && { ...leaderValue, epoch: base + leaderKv.createRevision },
      sync: syncKv && parseValue(syncValueSchema, syncKv.value),
      bootstrap,
      syncModRevision: syncKv?.modRevision ?? 0,
    };
  }

  private async campaign(): Promise<void> {
    const lease = this.lease!;
    const result = await this.etcd.txn(
      [
        { key: this.keys.leader, target: 'CREATE', number: 0 },
        { key: this.keys.sync, target: 'MOD', number: this.view.syncModRevision },
      ],
      [{ put: { key: this.keys.leader, value: JSON.stringify(this.self), lease: lease.id } }],
    );
    if (!result.succeeded) return;
    const epoch = this.epochBase() + result.header.revision;
    if ((await this.state.observeEpoch(epoch)) === 'stale') {
      // Only an etcd that lost its data counts revisions anew below what this node saw.
      this.stepDown(`epoch ${epoch} is below the ${this.state.current.epoch} this node has seen`);
      return;
    }
    this.roleNow = 'starting';
    this.epochNow = epoch;
    this.logger.info({ event: 'ha-elected', node: this.self.node, epoch });
    this.events.leaderChanged({ ...this.self, epoch });
    try {
      await this.events.becameLeader(epoch);
    } catch (error) {
      this.stepDown(`it could not start as leader: ${(error as Error).message}`);
      return;
    }
    if (this.roleNow === 'starting') this.roleNow = 'leader';
  }

  /** Stops leading: writes are refused from now on, and the leader key goes with the lease so another node is elected at once. */
  stepDown(reason: string): void {
    if (this.roleNow === 'follower') return;
    this.logger.warn({ event: 'ha-stepped-down', node: this.self.node, epoch: this.epochNow, reason });
    this.roleNow = 'follower';
    this.events.becameFollower(reason);
    const lease = this.lease;
    this.lease = undefined;
    if (lease) void this.etcd.revoke(lease.id).catch(() => undefined);
    this.poke();
  }

  /** Watches the leader key so that its removal (a clean stop, an expired lease) starts an election at once. */
  private watchLeader(): void {
    const watch = this.etcd.watch(this.keys.leader, {}, () => this.poke());
    this.watch = watch;
    this.openWatches.add(watch);
    void watch.ended.then(() => {
      this.openWatches.delete(watch);
      if (this.watch === watch) this.watch = undefined;
    });
  }

  /** Every watch not yet ended: all are closed when the node stops, so none keeps the process alive. */
  private readonly openWatches = new Set<{ close(): void }>();

  /** A clean stop (SIGTERM): the leader key goes at once, so another node takes over within a round trip. */
  async resign(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const watch of this.openWatches) watch.close();
    await this.ticking;
    for (const watch of this.openWatches) watch.close(); // one a tick under way may have opened meanwhile
    const wasLeader = this.roleNow !== 'follower';
    this.roleNow = 'follower';
    const lease = this.lease;
    this.lease = undefined;
    if (lease) await this.etcd.revoke(lease.id).catch(() => undefined);
    if (wasLeader) this.events.becameFollower('it is stopping');
  }
}
