/**
 * HA bench: `npm run build && node --import tsx bench/ha.ts [--quick]`.
 *
 * Real processes on loopback: a three-member etcd (Debian's etcd-server), three
 * `cfghub serve --cluster` nodes on it (the default lease), and one plain `cfghub serve` on a
 * folder of its own. Measures, side by side in one run:
 *  - push latency and throughput, 1 client (one push after another) and 16 clients (each pushing
 *    its own key without pause): a plain server, the cluster's leader (each push synchronously on
 *    both other nodes' disks before its 200), and etcd's own transaction (a put in
 *    `POST /v3/kv/txn` on the same three-member etcd), rounds interleaved (bench/haPush.ts, which
 *    `npm run bench` runs too: `npm run bench -- --only ha` for them alone);
 *  - failover, for each fault of the leader (SIGKILL, SIGSTOP then SIGCONT, SIGTERM): a client
 *    pushes through the nodes in turn, each push 50 ms after the last ended and given up after
 *    1 s; write unavailability is the time from the fault to the first push answered 200 after
 *    it. A second client starts a push every 50 ms, not waiting for the earlier ones: its
 *    unavailability is the time from the fault to the first 200 of a push sent after it. Failover
 *    time is the time until a node other than the old leader answers as leader.
 * Prints a Markdown table. Every process is stopped at the end. `--trials N` sets the failovers of
 * each kind (3 with --quick, 20 without); `--failovers-only` leaves the push rounds out;
 * `--lease-seconds N[,N…]` sets the cluster's lease (the default lease unless given): with several,
 * one cluster per lease, their failover trials interleaved (the push rounds use the first).
 *
 * `--false-failovers MINUTES` measures instead, for that long, a cluster under steady load with the
 * (first) lease and no fault: 4 clients pushing without pause through the nodes in turn, every
 * node's role and epoch asked 4 times a second. A false failover is a leadership change (a new
 * epoch) without a fault. Each 50th push answered 200 is also looked for on the other nodes' disks
 * at once (their main holding it): the stream's replica lag, nil when they hold it before the 200.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { HaCluster, HaNode } from '../test/support/haCluster.js';
import { DEFAULT_LEASE_SECONDS } from '../src/service/ha/keyspace.js';
import { median, percentile } from './stats.js';
import { HA_REPO, PlainServer, pushKey, pushRounds, startBenchCluster, type PushRounds } from './haPush.js';
import { haPushPlan } from './plan.js';

const quick = process.argv.includes('--quick');
const PUSHES = haPushPlan(quick ? 'quick' : 'full');
const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const TRIALS = Number(argument('--trials') ?? (quick ? 3 : 20));
const FAILOVERS_ONLY = process.argv.includes('--failovers-only');
const LEASES = (argument('--lease-seconds') ?? String(DEFAULT_LEASE_SECONDS)).split(',').map(Number);
if (LEASES.some((lease) => !Number.isInteger(lease) || lease < 1))
  throw new Error('--lease-seconds: whole seconds, comma-separated');
const LEASE_SECONDS = LEASES[0];
const log = (message: string) => process.stderr.write(`[ha-bench] ${message}\n`);
const fmt = (ms: number) => (ms >= 100 ? Math.round(ms).toString() : ms.toFixed(1));

/**
 * Two clients pushing through the running nodes in turn, each push given up after 1 s: one pushes
 * 50 ms after its last push ended (a push held by a paused node holds it up to 1 s), the other
 * starts a push every 50 ms whatever the earlier ones do (what the cluster itself takes).
 */
class Prober {
  /** When the first client's pushes were answered 200. */
  readonly acknowledged: number[] = [];
  /** When the second client's pushes answered 200 were sent, and answered. */
  readonly sentAndAcknowledged: { sentAt: number; answeredAt: number }[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(private readonly cluster: HaCluster) {
    this.loops = [this.oneAfterAnother(), this.everyFifty()];
  }

  private nodes(): HaNode[] {
    return this.cluster.nodes.filter((node) => node.running);
  }

  private async oneAfterAnother(): Promise<void> {
    let turn = 0;
    while (this.running) {
      const next = performance.now() + 50;
      const nodes = this.nodes();
      const status = await pushKey(nodes[turn++ % nodes.length].url, 'probe', 1_000).catch(() => 0);
      if (status === 200) this.acknowledged.push(performance.now());
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
  }

  private async everyFifty(): Promise<void> {
    let turn = 0;
    const pushes: Promise<void>[] = [];
    while (this.running) {
      const nodes = this.nodes();
      const sentAt = performance.now();
      pushes.push(
        pushKey(nodes[turn++ % nodes.length].url, 'probe.open', 1_000).then(
          (status) => void (status === 200 && this.sentAndAcknowledged.push({ sentAt, answeredAt: performance.now() })),
          () => undefined,
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(pushes);
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

/** How long `--false-failovers` runs, in minutes, if asked for. */
const FALSE_FAILOVER_MINUTES = (() => {
  const at = process.argv.indexOf('--false-failovers');
  return at < 0 ? undefined : Number(process.argv[at + 1] ?? 10);
})();

async function falseFailovers(minutes: number): Promise<void> {
  let cluster: HaCluster | undefined;
  let sequence = 0;
  try {
    log(`a three-member etcd, three cluster nodes (${LEASE_SECONDS} s lease), 4 clients, ${minutes} minutes`);
    cluster = await startBenchCluster(LEASE_SECONDS);
    const nodes = cluster.nodes;
    const end = performance.now() + minutes * 60_000;
    const counts = { acknowledged: 0, other: 0, failed: 0 };
    const lag = { sampled: 0, heldAtOnce: 0 };
    const epochs = new Set<number>();
    const leaders: string[] = [];
    const clients = Array.from({ length: 4 }, async (_, client) => {
      let turn = client;
      while (performance.now() < end) {
        const node = nodes[turn++ % nodes.length];
        try {
          const response = await fetch(`${node.url}/rest/push/${HA_REPO}`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({
              enableKeyCreation: true,
              data: [{ key: `key.${client}`, values: [{ context: '*', value: `v${++sequence}` }] }],
            }),
            signal: AbortSignal.timeout(10_000),
          });
          await response.arrayBuffer();
          if (response.status !== 200) {
            counts.other++;
            continue;
          }
          counts.acknowledged++;
          if (counts.acknowledged % 50 === 0) {
            const commit = (response.headers.get('etag') ?? '').replace(/"/g, '');
            const ackNode = response.headers.get('cfghub-node');
            const held = nodes.map((other) => holds(other.repos, commit)); // at once, before anything else
            for (const [i, other] of nodes.entries()) {
              if ((await other.status(500))?.node === ackNode) continue;
              lag.sampled++;
              if (held[i]) lag.heldAtOnce++;
            }
          }
        } catch {
          counts.failed++;
        }
      }
    });
    const watcher = (async () => {
      while (performance.now() < end) {
        for (const status of await Promise.all(nodes.map((node) => node.status(1_000)))) {
          if (status?.role !== 'leader' || epochs.has(status.epoch)) continue;
          epochs.add(status.epoch);
          leaders.push(`${status.node}@${status.epoch}`);
          log(`leader ${status.node} at epoch ${status.epoch}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    await Promise.all([...clients, watcher]);
    console.log(
      JSON.stringify({
        minutes,
        leaseSeconds: LEASE_SECONDS,
        falseFailovers: Math.max(0, epochs.size - 1),
        leaders,
        pushes: counts,
        streamLag: lag,
      }),
    );
  } finally {
    await cluster?.close();
  }
}

/** Whether the bench repository's main in a node's folder holds a commit (is it or descends from it), by git. */
function holds(repos: string, commit: string): boolean {
  const gitdir = join(repos, `${HA_REPO}.git`);
  return spawnSync('git', ['--git-dir', gitdir, 'merge-base', '--is-ancestor', commit, 'refs/heads/main']).status === 0;
}

async function main(): Promise<void> {
  if (FALSE_FAILOVER_MINUTES !== undefined) return falseFailovers(FALSE_FAILOVER_MINUTES);
  let plain: PlainServer | undefined;
  const clusters: HaCluster[] = [];
  try {
    plain = await PlainServer.start();
    for (const leaseSeconds of LEASES) {
      log(`starting a three-member etcd and three cluster nodes (${leaseSeconds} s lease)`);
      clusters.push(await startBenchCluster(leaseSeconds));
    }
    const rounds: PushRounds | undefined = FAILOVERS_ONLY
      ? undefined
      : await pushRounds(plain, clusters[0], PUSHES, log);

    const failover: Record<string, { unavailable: number[]; unavailableOpen: number[]; elected: number[] }> = {};
    const faults: Record<string, (node: HaNode) => Promise<void>> = {
      'leader SIGKILL': (node) => node.kill(),
      'leader SIGSTOP (SIGCONT once another leads)': async (node) => node.pause(),
      'leader SIGTERM': (node) => node.stop(),
    };
    for (let trial = 0; trial < TRIALS; trial++) {
      for (const [lease, cluster] of clusters.entries())
        for (const [kind, fault] of Object.entries(faults)) {
          const name = LEASES.length > 1 ? `${kind}, ${LEASES[lease]} s lease` : kind;
          log(`failover trial ${trial + 1}/${TRIALS}: ${name}`);
          await cluster.syncSetOf(2, 120_000);
          const old = await cluster.leader();
          const prober = new Prober(cluster);
          while (prober.acknowledged.length < 3) await new Promise((resolve) => setTimeout(resolve, 20));
          const at = performance.now();
          const faulted = fault(old); // a SIGTERM's process ends after it has handed over: timed meanwhile
          let elected = NaN;
          for (;;) {
            const others = cluster.nodes.filter((node) => node !== old && node.running);
            const statuses = await Promise.all(others.map((node) => node.status(500)));
            if (statuses.some((status) => status?.role === 'leader')) {
              elected = performance.now() - at;
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          const back = () =>
            prober.acknowledged.some((time) => time > at) &&
            prober.sentAndAcknowledged.some((push) => push.sentAt > at);
          while (!back()) await new Promise((resolve) => setTimeout(resolve, 10));
          const unavailable = prober.acknowledged.find((time) => time > at)! - at;
          const unavailableOpen =
            Math.min(...prober.sentAndAcknowledged.filter((push) => push.sentAt > at).map((push) => push.answeredAt)) -
            at;
          await prober.stop();
          await faulted;
          if (old.running) old.resume();
          else await old.start();
          (failover[name] ??= { unavailable: [], unavailableOpen: [], elected: [] }).unavailable.push(unavailable);
          failover[name].unavailableOpen.push(unavailableOpen);
          failover[name].elected.push(elected);
        }
    }

    const version = /etcd Version: (\S+)/.exec(spawnSync('etcd', ['--version'], { encoding: 'utf8' }).stdout)?.[1];
    console.log(
      `Measured by \`node --import tsx bench/ha.ts ${process.argv.slice(2).join(' ')}\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, etcd ${version}, lease ${LEASES.join(' and ')} s, everything on one machine's loopback.\n`,
    );
    console.log('| measure | p50 | p99 | max or rate |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const [name, perRound] of Object.entries(rounds?.one ?? {})) {
      const a = perRound.flat();
      console.log(
        `| push latency, 1 client, ${name} (n=${a.length}) | ${fmt(median(a))} ms | ${fmt(percentile(a, 99))} ms | ${Math.round(1000 / median(a))} pushes/s |`,
      );
    }
    for (const [name, perRound] of Object.entries(rounds?.many ?? {})) {
      const latencies = perRound.flatMap((round) => round.latencies);
      const perSecond = median(perRound.map((round) => round.perSecond));
      console.log(
        `| push latency, ${PUSHES.clients} clients, ${name} (n=${latencies.length}) | ${fmt(median(latencies))} ms | ${fmt(percentile(latencies, 99))} ms | ${Math.round(perSecond)} pushes/s |`,
      );
    }
    for (const [name, figures] of Object.entries(failover)) {
      const u = figures.unavailable;
      const o = figures.unavailableOpen;
      const e = figures.elected;
      console.log(
        `| write unavailability, ${name} (n=${u.length}) | ${fmt(median(u))} ms | ${fmt(percentile(u, 99))} ms | max ${fmt(Math.max(...u))} ms |`,
      );
      console.log(
        `| write unavailability, a push started every 50 ms, ${name} (n=${o.length}) | ${fmt(median(o))} ms | ${fmt(percentile(o, 99))} ms | max ${fmt(Math.max(...o))} ms |`,
      );
      console.log(
        `| failover (another node leads), ${name} (n=${e.length}) | ${fmt(median(e))} ms | ${fmt(percentile(e, 99))} ms | max ${fmt(Math.max(...e))} ms |`,
      );
    }
  } finally {
    await plain?.close();
    for (const cluster of clusters) await cluster.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
