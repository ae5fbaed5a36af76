/**
 * The leader's side of synchronous replication: every push's record goes to each member of the
 * sync set, and the push is acknowledged only once each has made it durable.
 *
 * The order of a push on the leader (disk/repository.ts calls `replicate` from inside the ref's
 * lock): the record is appended to the leader's own push journal, and while its fdatasync runs it
 * is sent to every member of the sync set (and to every node catching up to join it); each member
 * checks the epoch, writes the pack and moves its ref durably (disk/applyReplicated.ts) and
 * answers; only once the leader's fdatasync and every member's answer are in does the leader move
 * its own ref and answer 200. So a reader of the leader never sees a commit that is not on every
 * member's disk too.
 *
 * A member that does not answer in time, or answers that it missed a record, is removed from the
 * sync set in etcd FIRST, by a transaction guarded by the leader's key (a leader that lost its key
 * cannot change the set), and only then no longer waited for. A member that has seen a newer epoch
 * means this node is no longer the leader: it steps down and the push's outcome is unknown (503).
 * With `--ha-strict` a push is refused (503) rather than acknowledged while the sync set is empty.
 *
 * A node joins the sync set once it is current while it is already sent every record: from then on
 * each record keeps it current, or it is dropped. Current means, repository by repository, that it
 * acknowledged a record of that repository since it started receiving them (it applies one only
 * on the very head the leader's push started from), or else holds the leader's head there. So a
 * node joins under a steady stream of pushes too, when whole heads would never be equal at once.
 */
import type { Logger } from 'pino';
import { encodeRecord, type JournalEntry } from '../../disk/journal/journalRecords.js';
import { faultPoint } from '../../disk/faultPoints.js';
import type { EtcdClient } from '../../lib/etcd.js';
import { ServiceError } from '../errors.js';
import type { ClusterKeys, SyncValue } from './keyspace.js';
import type { Leadership } from './leadership.js';
import type { Peers, RecordAnswer } from './peers.js';

export interface SyncSetOptions {
  readonly self: string;
  readonly strict: boolean;
  readonly logger: Logger;
}

export class SyncSet {
  private membersNow: string[] = [];
  /** Nodes sent every record while they catch up, by id, with their URL. */
  private readonly joining = new Map<string, string>();
  /** The repositories (`account/name`) of which each joining node acknowledged a record. */
  private readonly joinAcknowledged = new Map<string, Set<string>>();
  private readonly urls = new Map<string, string>();
  private epoch = 0;
  private seq = 0;
  /** Changes of the set, one at a time. */
  private changing: Promise<void> = Promise.resolve();
  /** Pushes replicating now, with the nodes each was sent to: a node joins only once none it missed is still under way. */
  private readonly inFlight = new Set<{ readonly sentTo: ReadonlySet<string>; readonly done: Promise<unknown> }>();

  constructor(
    private readonly etcd: EtcdClient,
    private readonly keys: ClusterKeys,
    private readonly leadership: Leadership,
    private readonly peers: Peers,
    private readonly options: SyncSetOptions,
  ) {}

  get members(): readonly string[] {
    return this.membersNow;
  }

  get joiningNodes(): readonly string[] {
    return [...this.joining.keys()];
  }

  /** Knows where each node is (from its presence key in etcd). */
  setUrls(urls: ReadonlyMap<string, string>): void {
    this.urls.clear();
    for (const [node, url] of urls) this.urls.set(node, url);
  }

  /**
   * Starts leading at `epoch` with the members of the old set that this node reaches and that
   * hold exactly its heads (the others catch up and join later): written to etcd before any write.
   */
  async begin(epoch: number, previous: SyncValue | undefined, myDigest: string): Promise<void> {
    this.epoch = epoch;
    this.seq = 0;
    this.joining.clear();
    this.joinAcknowledged.clear();
    const kept: string[] = [];
    for (const node of previous?.members ?? []) {
      const url = this.urls.get(node);
      if (node === this.options.self || !url) continue;
      try {
        const announced = await this.peers.announceEpoch(url, epoch, this.options.self);
        if (!announced.ok) continue;
        const heads = await this.peers.heads(url);
        if (heads.headsDigest === myDigest) kept.push(node);
      } catch {
        // Unreachable now: it joins again once it answers.
      }
    }
    await this.write(kept);
  }

  /** Writes the set, guarded by this leader's key; false (and a step down) when the key is no longer this leader's. */
  private async write(members: string[]): Promise<void> {
    const value: SyncValue = { leader: this.options.self, epoch: this.epoch, members };
    const base = this.leadership.cluster.bootstrap?.epochBase ?? 0;
    const result = await this.etcd.txn(
      [{ key: this.keys.leader, target: 'CREATE', number: this.epoch - base }],
      [{ put: { key: this.keys.sync, value: JSON.stringify(value) } }],
    );
    if (!result.succeeded) {
      this.leadership.stepDown('its leader key is gone: another node leads');
      throw new ServiceError(
        'unavailable',
        'this node is no longer the leader; the outcome of this write is unknown: read it back',
      );
    }
    this.membersNow = members;
    this.options.logger.info({ event: 'ha-sync-set', epoch: this.epoch, members });
  }

  /**
   * Sends a push's record to the set and waits for each member (see the top of this file).
   * Resolves to the function the caller calls once its own ref has moved (or failed to): until
   * then a node that was not sent this record cannot join the set.
   */
  async replicate(entry: JournalEntry): Promise<() => void> {
    if (!this.leadership.leaderValid()) {
      throw new ServiceError(
        'unavailable',
        'this node is not the leader now (its lease may have expired); the write was not made: send it again',
      );
    }
    await this.changing;
    if (this.options.strict && this.membersNow.length === 0) {
      throw new ServiceError(
        'unavailable',
        'no replica is in the sync set and --ha-strict refuses to acknowledge a push held on one disk; writes resume when a replica has caught up',
      );
    }
    this.seq = (this.seq + 1) >>> 0;
    const record = encodeRecord(this.seq, entry);
    const members = [...this.membersNow];
    const joining = [...this.joining];
    let release!: () => void;
    const flight = {
      sentTo: new Set([...members, ...joining.map(([node]) => node)]),
      done: new Promise<void>((resolve) => (release = resolve)),
    };
    this.inFlight.add(flight);
    const settled = () => {
      this.inFlight.delete(flight);
      release();
    };
    try {
      faultPoint('record-journaled');
      await this.sendAndWait(record, entry.repository.replace(/\.git$/, ''), members, joining);
      return settled;
    } catch (error) {
      settled();
      throw error;
    }
  }

  private async sendAndWait(
    record: Uint8Array,
    repository: string,
    members: readonly string[],
    joining: readonly (readonly [string, string])[],
  ): Promise<void> {
    const send = (url: string | undefined) =>
      url === undefined
        ? Promise.reject(new Error('its address is not known'))
        : this.peers.sendRecord(url, this.epoch, this.options.self, record);
    const [memberAnswers, joiningAnswers] = await Promise.all([
      Promise.allSettled(
        members.map(async (node) => {
          const answer = await send(this.urls.get(node));
          if (answer.ok) faultPoint('replicating'); // a crash test's moment: one member holds what no one acknowledged
          return answer;
        }),
      ),
      Promise.allSettled(joining.map(([, url]) => send(url))),
    ]);
    joiningAnswers.forEach((answer, i) => {
      const node = joining[i][0];
      if (answer.status === 'fulfilled' && answer.value.ok) this.joinAcknowledged.get(node)?.add(repository);
      // Behind in that repository still (its catch-up fetch failed): it stays joining, not current there.
      else if (answer.status === 'fulfilled' && !answer.value.ok && answer.value.code === 'behind')
        this.joinAcknowledged.get(node)?.delete(repository);
      else this.stopJoining(node);
    });
    await this.settleMembers(members, memberAnswers);
  }

  /**
   * What the members' answers to a record or a confirmation mean: one that has seen a newer epoch
   * means this node no longer leads (a step down, and the write's outcome is unknown); one that
   * failed otherwise is removed from the set in etcd first, then no longer waited for.
   */
  private async settleMembers(
    members: readonly string[],
    answers: readonly PromiseSettledResult<RecordAnswer>[],
  ): Promise<void> {
    const failed: string[] = [];
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 'fulfilled' && answer.value.ok) continue;
      const refusal = answer.status === 'fulfilled' && !answer.value.ok ? answer.value : undefined;
      if (refusal?.code === 'stale_epoch') {
        this.leadership.stepDown(`member ${members[i]} has seen a newer epoch`);
        throw new ServiceError(
          'unavailable',
          'this node is no longer the leader; the outcome of this write is unknown: read it back',
        );
      }
      failed.push(members[i]);
      const why = refusal ? `${refusal.code}: ${refusal.detail}` : (answer as PromiseRejectedResult).reason?.message;
      this.options.logger.warn({ event: 'ha-member-failed', node: members[i], epoch: this.epoch, problem: why });
    }
    if (failed.length > 0) {
      await this.change(() => this.write(this.membersNow.filter((node) => !failed.includes(node))));
      if (this.options.strict && this.membersNow.length === 0) {
        throw new ServiceError(
          'unavailable',
          'every replica of the sync set failed and --ha-strict refuses to acknowledge a write held on one disk; the outcome of this write is unknown: read it back',
        );
      }
    }
  }

  /**
   * Before a write other than a push is answered (a tag, a token or admin-token record, a
   * repository made or deleted: they travel by the members' fetch of the leader's state, not as
   * journal records): asks every member of the set to hold what this leader holds now, and
   * waits for each, members that fail being removed first as for a record. Its 200 then means
   * the write is on every member's disk too.
   */
  async confirm(): Promise<void> {
    if (!this.leadership.leaderValid()) {
      throw new ServiceError(
        'unavailable',
        'this node is not the leader now (its lease may have expired); the outcome of this write is unknown: read it back',
      );
    }
    await this.changing;
    const members = [...this.membersNow];
    const answers = await Promise.allSettled(
      members.map((node) => {
        const url = this.urls.get(node);
        return url === undefined
          ? Promise.reject(new Error('its address is not known'))
          : this.peers.sync(url, this.epoch, this.options.self);
      }),
    );
    await this.settleMembers(members, answers);
  }

  private stopJoining(node: string): void {
    this.joining.delete(node);
    this.joinAcknowledged.delete(node);
  }

  private change(work: () => Promise<void>): Promise<void> {
    const done = this.changing.then(work);
    this.changing = done.catch(() => undefined);
    return done;
  }

  /**
   * Brings nodes into the set: a node not in it starts receiving every record; once it is current
   * (see the top of this file), it becomes a member.
   */
  async grow(candidates: ReadonlyMap<string, string>, myHeads: () => Readonly<Record<string, string>>): Promise<void> {
    for (const [node, url] of candidates) {
      if (node === this.options.self || this.membersNow.includes(node)) continue;
      if (!this.joining.has(node)) {
        try {
          if (!(await this.peers.announceEpoch(url, this.epoch, this.options.self)).ok) continue;
        } catch {
          continue;
        }
        this.joining.set(node, url); // every record from now on goes to it too
        this.joinAcknowledged.set(node, new Set());
      }
      // A push sent before this node was joining, still under way, would be acknowledged without it.
      await Promise.allSettled(
        [...this.inFlight].filter((flight) => !flight.sentTo.has(node)).map((flight) => flight.done),
      );
      let theirs: Readonly<Record<string, string>>;
      try {
        theirs = (await this.peers.heads(url)).heads;
      } catch {
        this.stopJoining(node);
        continue;
      }
      if (!this.joining.has(node) || !this.current(node, theirs, myHeads())) continue;
      await this.change(async () => {
        if (!this.joining.has(node) || this.membersNow.includes(node)) return;
        await this.write([...this.membersNow, node]);
        this.stopJoining(node);
      });
    }
  }

  /**
   * Whether a joining node is current: for each repository, it acknowledged a record of it since
   * it joined, or holds the head the leader holds. A repository no record touched since the node
   * joined has not moved on the leader since, so its heads compare without a race.
   */
  private current(
    node: string,
    theirs: Readonly<Record<string, string>>,
    mine: Readonly<Record<string, string>>,
  ): boolean {
    const acknowledged = this.joinAcknowledged.get(node);
    if (!acknowledged) return false;
    for (const repository of new Set([...Object.keys(theirs), ...Object.keys(mine)])) {
      if (!acknowledged.has(repository) && theirs[repository] !== mine[repository]) return false;
    }
    return true;
  }
}
