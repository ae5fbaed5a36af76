/**
 * An HA cluster under faults, the real thing: three `cfghub serve --cluster` processes and a
 * three-member etcd on loopback, several clients pushing without pause (each push's outcome kept:
 * answered 200, refused, or unknown), and faults injected in a loop:
 *
 *   leader-kill       SIGKILL of the leader            leader-pause   SIGSTOP, then SIGCONT of the leader
 *   leader-stop       SIGTERM of the leader            leader-mid-push the leader dies between its journal's
 *   replica-kill      SIGKILL of a sync set member                      record and its members' acknowledgements
 *   etcd-member-kill  SIGKILL of one etcd member       etcd-quorum-loss SIGKILL of every etcd member
 *
 * After each fault, once every node has caught up: every push answered 200 is on the leader and on
 * every node (read through the API with Min-Commit, and by `git cat-file` and `git rev-list`);
 * `git fsck --strict` is clean on every node; no two nodes answered 200 for the same epoch, and
 * along each repository's history the epochs of acknowledged pushes never go back (a replaced
 * leader acknowledging after its successor would break it).
 *
 * The normal suite runs one fault of each kind in FAULT_KINDS_SHORT; `npm run test:ha` runs
 * CFGHUB_HA_FAULTS faults of every kind (50 by default there). CFGHUB_HA_LOGS=folder keeps the
 * nodes' logs; CFGHUB_HA_REPORT=file writes the measured write unavailability per fault as JSON.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf } from '../support/harness.js';
import { etcdInstalled } from '../support/etcdCluster.js';
import { HaCluster, type HaNode } from '../support/haCluster.js';
import { until } from '../support/poll.js';

const REPOSITORIES = ['acme/app', 'acme/web'];
const CLIENTS = 4;
const LEASE_SECONDS = Number(process.env.CFGHUB_HA_LEASE_SECONDS ?? 3);
/** A client gives up on an answer after this long: its push's outcome is then unknown. */
const PUSH_TIMEOUT_MS = 5_000;

const FAULT_KINDS = [
  'leader-kill',
  'leader-pause',
  'leader-stop',
  'leader-mid-push',
  'replica-kill',
  'etcd-member-kill',
  'etcd-quorum-loss',
] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

const ROUNDS = Number(process.env.CFGHUB_HA_FAULTS ?? 0);
/** CFGHUB_HA_FAULT_KINDS=kind,kind: only these kinds (to look into one). */
const CHOSEN = (process.env.CFGHUB_HA_FAULT_KINDS ?? '').split(',').filter(Boolean) as FaultKind[];
/** In the normal suite: the leader killed mid-push, and paused then resumed (its fencing). */
const FAULT_KINDS_SHORT: readonly FaultKind[] = ['leader-mid-push', 'leader-pause'];
const PLAN: readonly FaultKind[] =
  ROUNDS > 0
    ? Array.from({ length: ROUNDS }, () => (CHOSEN.length > 0 ? CHOSEN : FAULT_KINDS)).flat()
    : CHOSEN.length > 0
      ? CHOSEN
      : FAULT_KINDS_SHORT;

const requireEtcd = process.env.CI === 'true';

interface Outcome {
  readonly client: number;
  readonly repository: string;
  readonly node: number;
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly kind: 'acknowledged' | 'refused' | 'unknown';
  readonly status?: number;
  readonly commit?: string;
  readonly ackNode?: string;
  readonly epoch?: number;
  readonly detail?: string;
}

/** Several clients pushing through every running node in turn, each outcome kept. */
class Clients {
  readonly outcomes: Outcome[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private sequence = 0;

  constructor(private readonly cluster: HaCluster) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = Array.from({ length: CLIENTS }, (_, client) => this.loop(client));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  acknowledged(): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.kind === 'acknowledged');
  }

  private async loop(client: number): Promise<void> {
    const repository = REPOSITORIES[client % REPOSITORIES.length];
    let turn = client;
    while (this.running) {
      const nodes = this.cluster.nodes.filter((node) => node.running);
      if (nodes.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const node = nodes[turn++ % nodes.length];
      this.outcomes.push(await this.push(client, repository, node));
    }
  }

  private async push(client: number, repository: string, node: HaNode): Promise<Outcome> {
    const value = `c${client}-${++this.sequence}`;
    const sentAt = performance.now();
    const base = { client, repository, node: node.index, sentAt };
    try {
      const response = await fetch(`${node.url}/rest/push/${repository}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          changeComment: `set ${value}`,
          enableKeyCreation: true,
          data: [{ key: `client${client}`, values: [{ context: '*', value }] }],
        }),
        signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
      });
      const text = await response.text();
      const answeredAt = performance.now();
      if (response.status === 200) {
        return {
          ...base,
          answeredAt,
          kind: 'acknowledged',
          status: 200,
          commit: (response.headers.get('etag') ?? '').replace(/"/g, ''),
          ackNode: response.headers.get('cfghub-node') ?? '',
          epoch: Number(response.headers.get('cfghub-epoch')),
        };
      }
      // A refusal says the write was not made; anything else of a 5xx leaves it unknown.
      const refused = response.status < 500 || /no_leader|not made/.test(text);
      return {
        ...base,
        answeredAt,
        kind: refused ? 'refused' : 'unknown',
        status: response.status,
        detail: text.slice(0, 300),
      };
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      // A refused connection carried nothing; a reset or a timeout may have carried the push.
      return {
        ...base,
        answeredAt: performance.now(),
        kind: code === 'ECONNREFUSED' ? 'refused' : 'unknown',
        detail: code ?? (error as Error).name,
      };
    }
  }
}

/** p50, p99 and max of a list of milliseconds. */
function summary(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

describe.runIf(etcdInstalled || requireEtcd)('an HA cluster under faults', () => {
  let cluster: HaCluster;
  let clients: Clients;
  /** Acknowledged pushes already read back through every node's API. */
  let readBack = 0;
  const unavailability = new Map<FaultKind, number[]>();
  /** After etcd's quorum is lost: how long until a push is refused naming etcd. */
  const writesStoppedAfter: number[] = [];

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      etcdMembers: 3,
      leaseSeconds: LEASE_SECONDS,
      // A node killed between creating a ref's lock and writing it leaves the lock: it goes once
      // stale, 5 s here rather than 30 s, so that the node rejoins within a fault's time.
      env: { CFGHUB_FAULT: 'replicating', CFGHUB_FAULT_ARMED_BY: 'SIGUSR2', CFGHUB_STALE_LOCK_SECONDS: '5' },
      prepare: (repos) => {
        for (const repository of REPOSITORIES)
          cliOk(repos, 'repo', 'create', repository, '--context', 'Env', '--token-free-push', '--token-free-pull');
      },
    });
    clients = new Clients(cluster);
  }, 120_000);

  afterAll(async () => {
    await clients?.stop();
    const report = process.env.CFGHUB_HA_REPORT;
    if (report)
      writeFileSync(
        report,
        JSON.stringify({ unavailabilityMs: Object.fromEntries(unavailability), writesStoppedAfter }, null, 2),
      );
    await cluster?.close();
  });

  /** Every node running, etcd whole, a leader, and both other nodes in its sync set. */
  const whole = async (): Promise<HaNode> => {
    await cluster.leader(60_000);
    await cluster.syncSetOf(2, 60_000);
    return cluster.leader();
  };

  /** A push sent after `since` answered 200 (by the leader `by`, when given): writes flow. */
  const acknowledgedAfter = (since: number, by?: (outcome: Outcome) => boolean) =>
    until(
      () => clients.acknowledged().some((outcome) => outcome.sentAt > since && (by?.(outcome) ?? true)),
      'a push sent after the fault answered 200',
      60_000,
    );

  const epochOf = async (node: HaNode) => (await node.status())?.epoch ?? 0;

  const inject: Record<FaultKind, (leader: HaNode) => Promise<number>> = {
    'leader-kill': async (leader) => {
      const at = performance.now();
      await leader.kill();
      await acknowledgedAfter(at);
      await leader.start();
      return at;
    },
    'leader-pause': async (leader) => {
      const epoch = await epochOf(leader);
      const at = performance.now();
      await leader.pause();
      await acknowledgedAfter(at, (outcome) => (outcome.epoch ?? 0) > epoch);
      leader.resume();
      await until(async () => (await leader.status())?.role === 'follower', 'the resumed leader a follower', 30_000);
      return at;
    },
    'leader-stop': async (leader) => {
      const at = performance.now();
      await leader.stop();
      await acknowledgedAfter(at);
      await leader.start();
      return at;
    },
    'leader-mid-push': async (leader) => {
      const at = performance.now();
      leader.signal('SIGUSR2'); // the next push that one member has acknowledged kills it
      expect(await leader.exited()).toBe('SIGKILL');
      await acknowledgedAfter(at);
      await leader.start();
      return at;
    },
    'replica-kill': async (leader) => {
      const others = cluster.nodes.filter((node) => node !== leader); // both in the sync set (whole())
      const member = others[victims++ % others.length];
      const at = performance.now();
      await member.kill();
      await acknowledgedAfter(at);
      await member.start();
      return at;
    },
    'etcd-member-kill': async (leader) => {
      const epoch = await epochOf(leader);
      // The etcd leader every other time: its loss costs etcd an election, still nothing visible.
      const etcdLeader = (await cluster.etcd.leaderIndex()) ?? 0;
      const victim = (etcdLeader + (victims++ % 2)) % cluster.etcd.size;
      const at = performance.now();
      await cluster.etcd.kill(victim);
      // Writes go on, acknowledged by the same leadership, past etcd's own election.
      await until(
        () => clients.acknowledged().filter((outcome) => outcome.sentAt > at + 1_500).length >= 5,
        'pushes acknowledged with an etcd member down',
        60_000,
      );
      const window = clients.outcomes.filter((outcome) => outcome.sentAt > at);
      expect(window.filter((outcome) => outcome.kind !== 'acknowledged')).toEqual([]);
      expect(new Set(window.map((outcome) => outcome.epoch))).toEqual(new Set([epoch]));
      await cluster.etcd.restartAll();
      return at;
    },
    'etcd-quorum-loss': async () => {
      const at = performance.now();
      await cluster.etcd.killAll();
      // Writes stop within the lease, refused with the reason; every node keeps serving reads.
      const refusedNamingEtcd = () =>
        clients.outcomes.find(
          (outcome) => outcome.sentAt > at && outcome.kind === 'refused' && /etcd/.test(outcome.detail ?? ''),
        );
      await until(() => refusedNamingEtcd() !== undefined, 'a push refused naming etcd', 60_000);
      writesStoppedAfter.push(Math.round(refusedNamingEtcd()!.answeredAt - at));
      const stoppedBy = at + LEASE_SECONDS * 1_000;
      await until(
        () => clients.outcomes.some((outcome) => outcome.sentAt > stoppedBy + 1_000),
        'pushes sent after the lease',
        60_000,
      );
      for (const node of cluster.nodes) {
        const response = await fetch(`${node.url}/rest/pull/${REPOSITORIES[0]}`, { headers: { Context: 'Prod' } });
        expect(response.status, `a read on node ${node.index}`).toBe(200);
        expect(response.headers.get('replica-lag'), `Replica-Lag on node ${node.index}`).toBeTruthy();
      }
      // A push in flight when the lease ran out may end a moment later; none sent after it is acknowledged.
      const late = clients
        .acknowledged()
        .filter((outcome) => outcome.sentAt > stoppedBy)
        .map((outcome) => ({ sentAfterKillMs: Math.round(outcome.sentAt - at), node: outcome.ackNode }));
      expect(late).toEqual([]);
      await cluster.etcd.restartAll();
      await acknowledgedAfter(performance.now());
      return at;
    },
  };
  let victims = 0;

  /** Waits until every node holds the leader's heads, then checks every acknowledged push everywhere. */
  const verify = async (): Promise<void> => {
    const leader = await whole();
    await until(
      () => {
        const want = JSON.stringify(headsOf(leader));
        return cluster.nodes.every((node) => JSON.stringify(headsOf(node)) === want);
      },
      'every node at the leader’s heads',
      60_000,
    );
    const acknowledged = clients.acknowledged();
    // No two nodes acknowledged for one epoch.
    const byEpoch = new Map<number, Set<string>>();
    for (const outcome of acknowledged) {
      expect(outcome.epoch, 'an acknowledged push names its epoch').toBeGreaterThan(0);
      expect(outcome.commit, 'an acknowledged push names its commit').toMatch(/^[0-9a-f]{40}$/);
      byEpoch.set(outcome.epoch!, (byEpoch.get(outcome.epoch!) ?? new Set()).add(outcome.ackNode!));
    }
    for (const [epoch, nodes] of byEpoch)
      expect([...nodes], `nodes that acknowledged in epoch ${epoch}`).toHaveLength(1);
    for (const repository of REPOSITORIES) {
      const mine = acknowledged.filter((outcome) => outcome.repository === repository);
      const commits = mine.map((outcome) => outcome.commit!);
      for (const node of cluster.nodes) {
        const gitdir = gitdirOf(node.repos, repository);
        const history = git(gitdir, 'rev-list', '--reverse', 'refs/heads/main').split('\n').filter(Boolean);
        const position = new Map(history.map((commit, i) => [commit, i]));
        const missing = commits.filter((commit) => !position.has(commit));
        expect(missing, `acknowledged pushes missing from ${repository} on node ${node.index}`).toEqual([]);
        const present = execFileSync('git', ['--git-dir', gitdir, 'cat-file', '--batch-check'], {
          input: commits.join('\n') + '\n',
          encoding: 'utf8',
        });
        expect(present.split('\n').filter((line) => line.endsWith(' missing'))).toEqual([]);
        fsckStrict(gitdir);
        // Along the history, acknowledged pushes' epochs never go back.
        const inOrder = [...mine].sort((a, b) => position.get(a.commit!)! - position.get(b.commit!)!);
        for (let i = 1; i < inOrder.length; i++)
          expect(inOrder[i].epoch!, `epoch order in ${repository} at ${inOrder[i].commit}`).toBeGreaterThanOrEqual(
            inOrder[i - 1].epoch!,
          );
      }
    }
    // Through the API: each push acknowledged since the last check, read with Min-Commit on every node.
    for (const outcome of acknowledged.slice(readBack)) {
      for (const node of cluster.nodes) {
        const status = await readStatus(`${node.url}/rest/pull/${outcome.repository}`, {
          Context: 'Prod',
          'Min-Commit': outcome.commit!,
        });
        expect(status, `${outcome.commit} read on node ${node.index}`).toBe(200);
      }
    }
    readBack = acknowledged.length;
  };

  it(
    `loses no acknowledged push and never has two leaders acknowledging, over ${PLAN.length} faults`,
    { timeout: 120_000 + PLAN.length * 60_000 },
    async () => {
      for (const [i, kind] of PLAN.entries()) {
        const leader = await whole();
        clients.start();
        await acknowledgedAfter(performance.now());
        const at = await inject[kind](leader);
        // Write unavailability: from the fault to the first 200 of a push sent after it.
        const first = clients
          .acknowledged()
          .filter((outcome) => outcome.sentAt > at)
          .reduce((min, outcome) => Math.min(min, outcome.answeredAt), Infinity);
        unavailability.set(kind, [...(unavailability.get(kind) ?? []), Math.round(first - at)]);
        await whole();
        await clients.stop();
        await verify();
        if (ROUNDS > 0)
          console.log(`fault ${i + 1}/${PLAN.length} ${kind}: writes back after ${Math.round(first - at)} ms`);
      }
      const counts = { acknowledged: 0, refused: 0, unknown: 0 };
      for (const outcome of clients.outcomes) counts[outcome.kind]++;
      const figures = Object.fromEntries([...unavailability].map(([kind, values]) => [kind, summary(values)]));
      console.log(
        JSON.stringify({
          pushes: counts,
          unavailabilityMs: figures,
          etcdQuorumLossWritesStoppedMs: writesStoppedAfter,
        }),
      );
      expect(counts.acknowledged).toBeGreaterThan(PLAN.length);
    },
  );
});

/**
 * `git fsck --strict` of a live node's repository. git's fsck lists the packs once, at its start:
 * a pack merge of the node's own (it writes the merged pack, then removes the packs merged, each
 * index before its data) that runs meanwhile makes it report packs it cannot open and objects it
 * then finds in no pack it listed, damage that is not there. So its verdict counts only when the
 * pack folder is the same after it as before; damage stays, and fails every run.
 */
function fsckStrict(gitdir: string): void {
  const packs = () =>
    readdirSync(join(gitdir, 'objects', 'pack'))
      .sort()
      .join(' ');
  for (let attempt = 1; ; attempt++) {
    const before = packs();
    try {
      git(gitdir, 'fsck', '--strict', '--no-progress');
      return;
    } catch (error) {
      if (packs() === before || attempt >= 5) throw error;
    }
  }
}

/**
 * The status of a read; a kept-alive connection the server closed just as it was reused (a
 * transport hiccup of a loaded machine, not an answer) is tried again on a new one.
 */
async function readStatus(url: string, headers: Record<string, string>): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code !== 'UND_ERR_SOCKET' || attempt >= 3) throw error;
    }
  }
}

/** A node's heads as its repositories hold them on disk. */
function headsOf(node: HaNode): Record<string, string> {
  return Object.fromEntries(
    REPOSITORIES.map((repository) => [
      repository,
      git(gitdirOf(node.repos, repository), 'rev-parse', 'refs/heads/main').trim(),
    ]),
  );
}
