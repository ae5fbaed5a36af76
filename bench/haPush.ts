/**
 * Pushes beside the HA mode, shared by `npm run bench` (scenarios/haPush.ts) and bench/ha.ts: a
 * plain `cfghub serve` on a folder of its own, three `cfghub serve --cluster` nodes on a
 * three-member etcd (the leader answers a push once both other members hold it), and etcd's own
 * transaction (a put in `POST /v3/kv/txn` on that etcd). Push rounds interleave the three: in each
 * round every one takes its turn, in an order that rotates from round to round, with one client
 * pushing one push after another, then 16 clients pushing without pause for a few seconds.
 *
 * Real processes on loopback, started with the test support's cluster (test/support/haCluster.ts).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { HaCluster } from '../test/support/haCluster.js';
import { CLI, tempDir } from '../test/support/paths.js';
import { startServerProcess, type ServerProcess } from '../test/support/serverProcess.js';

/** The repository every node and the plain server push into. */
export const HA_REPO = 'bench/app';

/** The implementations of the push rounds, by the names the tables show. */
export const PLAIN_PUSH = 'cfghub, plain server';
export const REPLICATED_PUSH = 'cfghub, synchronously replicated to 2 members (HA leader)';
export const ETCD_TXN_3 = 'etcd txn, 3 members';

export interface HaPushPlan {
  readonly rounds: number;
  /** Pushes of the one client per implementation per round. */
  readonly sequential: number;
  readonly clients: number;
  /** How long the clients push per implementation per round. */
  readonly concurrentSeconds: number;
}

let sequence = 0;

/** One push of one key into the bench repository: its status. */
export async function pushKey(url: string, key: string, timeoutMs = 10_000): Promise<number> {
  const response = await fetch(`${url}/rest/push/${HA_REPO}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      enableKeyCreation: true,
      data: [{ key, values: [{ context: '*', value: `v${++sequence}` }] }],
    }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.arrayBuffer();
  return response.status;
}

async function etcdPut(endpoint: string, key: string): Promise<number> {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const response = await fetch(`${endpoint}/v3/kv/txn`, {
    method: 'POST',
    body: JSON.stringify({ success: [{ request_put: { key: b64(key), value: b64(`v${++sequence}`) } }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** One write by client number `client`: its status. */
type Writer = (client: number) => Promise<number>;

/** One client, one write after another: each write's latency. */
async function sequential(write: Writer, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const status = await write(0);
    if (status !== 200) throw new Error(`a write answered ${status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** `clients` clients writing without pause for a while: latencies and writes per second. */
async function concurrent(write: Writer, clients: number, seconds: number): Promise<ConcurrentRound> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < end) {
        const started = performance.now();
        const status = await write(client);
        if (status !== 200) throw new Error(`a write answered ${status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  const elapsed = (performance.now() - began) / 1000;
  return { latencies, seconds: elapsed, perSecond: latencies.length / elapsed };
}

export interface ConcurrentRound {
  readonly latencies: number[];
  readonly seconds: number;
  readonly perSecond: number;
}

/** Per implementation, round by round: the one client's latencies and the clients' round. */
export interface PushRounds {
  readonly one: Record<string, number[][]>;
  readonly many: Record<string, ConcurrentRound[]>;
}

/** Creates the bench repository (token-free push and pull) in a repositories folder, by the CLI. */
export function createBenchRepository(repos: string): void {
  const args = ['repo', 'create', HA_REPO, '--context', 'Env', '--token-free-push', '--token-free-pull'];
  const result = spawnSync(process.execPath, [CLI, ...args, '--repos', repos], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cfghub ${args.join(' ')}: ${result.stderr}`);
}

/** A three-member etcd and three cluster nodes with `leaseSeconds`, the leader's sync set full. */
export async function startBenchCluster(leaseSeconds: number): Promise<HaCluster> {
  const cluster = await HaCluster.start({
    nodes: 3,
    etcdMembers: 3,
    leaseSeconds,
    prepare: createBenchRepository,
  });
  await cluster.syncSetOf(2);
  return cluster;
}

/** A plain `cfghub serve` on a folder of its own holding the bench repository. */
export class PlainServer {
  private constructor(
    private readonly folder: { path: string; remove(): void },
    readonly process: ServerProcess,
  ) {}

  static async start(): Promise<PlainServer> {
    const folder = tempDir('cfghub-ha-bench-');
    try {
      const repos = join(folder.path, 'plain');
      createBenchRepository(repos);
      return new PlainServer(folder, await startServerProcess(repos));
    } catch (error) {
      folder.remove();
      throw error;
    }
  }

  get url(): string {
    return this.process.url;
  }

  async close(): Promise<void> {
    await this.process.kill();
    this.folder.remove();
  }
}

/**
 * The push rounds on a plain server and a cluster: `PLAIN_PUSH`, `REPLICATED_PUSH` (through the
 * cluster's leader) and `ETCD_TXN_3` (on the cluster's etcd), each client pushing its own key.
 */
export async function pushRounds(
  plain: PlainServer,
  cluster: HaCluster,
  plan: HaPushPlan,
  log: (message: string) => void,
): Promise<PushRounds> {
  const leader = await cluster.leader();
  const etcd = cluster.etcd.endpoints[0];
  const writers: ReadonlyArray<readonly [string, Writer]> = [
    [PLAIN_PUSH, (client) => pushKey(plain.url, `key.${client}`)],
    [REPLICATED_PUSH, (client) => pushKey(leader.url, `key.${client}`)],
    [ETCD_TXN_3, (client) => etcdPut(etcd, `/bench/key.${client}`)],
  ];
  const one: Record<string, number[][]> = Object.fromEntries(writers.map(([name]) => [name, []]));
  const many: Record<string, ConcurrentRound[]> = Object.fromEntries(writers.map(([name]) => [name, []]));
  for (let round = 0; round < plan.rounds; round++) {
    log(`push round ${round + 1}/${plan.rounds}`);
    for (let k = 0; k < writers.length; k++) {
      const [name, write] = writers[(round + k) % writers.length];
      one[name].push(await sequential(write, plan.sequential));
      many[name].push(await concurrent(write, plan.clients, plan.concurrentSeconds));
    }
  }
  return { one, many };
}
