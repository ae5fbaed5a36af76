/**
 * What the HTTP front of a replica needs from its follower: the primary's URL, the lag, the status
 * and the `Min-Commit` wait. A single process holds the Replicator itself; a worker of
 * `serve --workers N` holds a ReplicaView of the one Replicator the cluster's primary
 * process runs, kept current over IPC (see src/server/clusterPrimary.ts).
 */
import type { GitRepository } from '../../disk/repository.js';
import { isAncestor } from './mirror.js';
import { ServiceError } from '../errors.js';
import type { ReplicaStatus } from './replicator.js';

export interface ReplicaLink {
  /** Where writes are forwarded; '' while no node takes writes (an HA cluster electing its leader). */
  readonly primary: string;
  /** Set by an HA cluster's node: whether it takes writes itself now (it leads). */
  servesWrites?(): boolean;
  /** Set by an HA cluster's node: the headers its answers carry while it leads (its node id and epoch). */
  leaderHeaders?(): Record<string, string>;
  /**
   * Set by an HA cluster's node: resolves once every member of the sync set holds what the leader
   * holds now (repositories, tags, token and admin-token records), before a write other than a
   * push is answered (a push travels as its journal record); rejects when this node no longer leads.
   */
  confirmWrite?(): Promise<void>;
  /**
   * Set by an HA cluster's node: a signal that aborts once the node `primary` names now no longer
   * leads (another was elected, or its lease ended): a write forwarded to it and not yet answered
   * will not be answered by a leader, a paused one's kernel holding it meanwhile.
   */
  primaryReplaced?(): AbortSignal;
  /** Set by an HA cluster's node: why it cannot learn or elect a leader now (etcd unreachable, rebuilt), if so. */
  leaderProblem?(): string | undefined;
  /** Seconds since the replica last confirmed it was current; undefined before the first time. */
  lagSeconds(now?: number): number | undefined;
  status(): ReplicaStatus;
  /** The head to read for a request with `Min-Commit: commit` (waits up to `waitMs`, else a 503 naming the lag). */
  awaitCommit(repository: GitRepository, commit: string, waitMs?: number): Promise<string>;
}

/** How long a read with `Min-Commit` waits for the commit before its 503. */
export const MIN_COMMIT_WAIT_MS = 2_000;
const MIN_COMMIT_POLL_MS = 25;
const COMMIT_ID = /^[0-9a-f]{40}$/;

function commitId(commit: string): string {
  const wanted = commit.toLowerCase();
  if (!COMMIT_ID.test(wanted))
    throw new ServiceError('invalid_argument', 'Min-Commit must be a commit id: 40 hexadecimal digits');
  return wanted;
}

/**
 * The head to read for a request that asked for at least `commit` (`Min-Commit`) on a server that
 * follows no one (a primary): the head when it is that commit or descends from it, else undefined
 * (the commit is not in this repository's history: lost in a failover, or never of it).
 */
export async function headHolding(repository: GitRepository, commit: string): Promise<string | undefined> {
  const wanted = commitId(commit);
  const head = repository.head();
  return head === wanted || (await isAncestor(repository.gitdir, wanted, head)) ? head : undefined;
}

/**
 * The head to read for a request that asked for at least `commit` (`Min-Commit`) on a replica:
 * once the repository's head is that commit or descends from it, waiting up to `waitMs` for the
 * follower to fetch it; else a 503 that names the lag.
 */
export async function awaitCommit(
  repository: GitRepository,
  commit: string,
  lagSeconds: () => number | undefined,
  waitMs = MIN_COMMIT_WAIT_MS,
): Promise<string> {
  const wanted = commitId(commit);
  const deadline = performance.now() + waitMs;
  let checked = '';
  for (;;) {
    const head = repository.head();
    if (head === wanted) return head;
    // git is asked only when the head moved: one process per new head, not per poll.
    if (head !== checked) {
      checked = head;
      if (await isAncestor(repository.gitdir, wanted, head)) return head;
    }
    if (performance.now() >= deadline) {
      const lag = lagSeconds();
      throw new ServiceError(
        'unavailable',
        `this replica does not have commit ${wanted} in ${repository.fullName} yet; ` +
          (lag === undefined
            ? 'it has not yet reached the primary'
            : `it last confirmed it was current with the primary ${lag.toFixed(1)} s ago`),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, MIN_COMMIT_POLL_MS));
  }
}

/** A worker's view of the follower in the cluster's primary process: what the primary last sent. */
export class ReplicaView implements ReplicaLink {
  private last: ReplicaStatus;
  private confirmedAt: number | undefined;

  constructor(readonly primary: string) {
    this.last = {
      role: 'replica',
      primary,
      connected: false,
      lagSeconds: null,
      lastConfirmed: null,
      lastError: null,
      refused: null,
      rewindsRefused: [],
      following: null,
      repositories: 0,
      fetches: 0,
      fetchFailures: 0,
    };
  }

  /**
   * The follower's status as the primary process sent it. Its lag is carried over to this
   * process's monotonic clock (each process has its own origin), to within its 0.1 s rounding.
   */
  update(status: ReplicaStatus): void {
    this.last = status;
    this.confirmedAt = status.lagSeconds === null ? undefined : performance.now() - status.lagSeconds * 1000;
  }

  lagSeconds(now = performance.now()): number | undefined {
    return this.confirmedAt === undefined ? undefined : Math.max(0, now - this.confirmedAt) / 1000;
  }

  status(): ReplicaStatus {
    const lag = this.lagSeconds();
    return { ...this.last, lagSeconds: lag === undefined ? null : Math.round(lag * 10) / 10 };
  }

  awaitCommit(repository: GitRepository, commit: string, waitMs?: number): Promise<string> {
    return awaitCommit(repository, commit, () => this.lagSeconds(), waitMs);
  }
}
