/**
 * Test support for HA clusters: real `cfghub serve --cluster` processes, each on its own folder
 * and free loopback port, against a real etcd (etcdCluster.ts). Nodes can be killed (SIGKILL),
 * paused (SIGSTOP) and resumed, stopped (SIGTERM) and started again on their folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { EtcdCluster } from './etcdCluster.js';
import { tempDir } from './paths.js';
import { until } from './poll.js';
import { startServerProcess, type ServerProcess } from './serverProcess.js';
import { stopProcess } from './processStop.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface ClusterStatusAnswer {
  readonly node: string;
  readonly role: 'leader' | 'starting' | 'follower';
  readonly epoch: number;
  readonly leader: { node: string; url: string; epoch: number } | null;
  readonly syncSet: string[];
  readonly problem: string | null;
}

export class HaNode {
  process: ServerProcess | undefined;

  constructor(
    readonly index: number,
    readonly repos: string,
    readonly port: number,
    private readonly cluster: HaCluster,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.process = await startServerProcess(
      this.repos,
      { CFGHUB_REPLICATION_TOKEN: this.cluster.token, ...this.cluster.env },
      [],
      [
        '--port',
        String(this.port),
        '--cluster',
        'test',
        '--etcd',
        this.cluster.etcd.endpoints.join(','),
        '--advertise',
        this.url,
        '--lease-seconds',
        String(this.cluster.leaseSeconds),
        ...this.cluster.extraArgs,
      ],
    );
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  async kill(): Promise<void> {
    await this.process?.kill();
    this.process = undefined;
  }

  async stop(): Promise<void> {
    await this.process?.stop();
    this.process = undefined;
  }

  /** Sends `signal` to the node's process (SIGUSR2 arms a fault point started with CFGHUB_FAULT_ARMED_BY). */
  signal(signal: NodeJS.Signals): void {
    if (this.process) process.kill(this.process.pid, signal);
  }

  /** Resolves when the node's process has ended by itself (a fault point), and marks it stopped. */
  async exited(): Promise<NodeJS.Signals | null> {
    const signal = await this.process?.exited;
    this.process = undefined;
    return signal ?? null;
  }

  /** SIGSTOP of the node's process group; resolves once the node's threads have all stopped. */
  async pause(): Promise<void> {
    const pid = this.process?.pid;
    if (pid !== undefined) await stopProcess(pid, () => process.kill(-pid, 'SIGSTOP'));
  }

  resume(): void {
    if (this.process) process.kill(-this.process.pid, 'SIGCONT');
  }

  /** The node's own view of the cluster, or undefined when it does not answer. */
  async status(timeoutMs = 1_000): Promise<ClusterStatusAnswer | undefined> {
    try {
      const response = await fetch(`${this.url}/rest/ha/status`, {
        headers: { 'Client-Token': this.cluster.token },
        signal: AbortSignal.timeout(timeoutMs),
      });
      return response.status === 200 ? ((await response.json()) as ClusterStatusAnswer) : undefined;
    } catch {
      return undefined;
    }
  }
}

export class HaCluster {
  readonly token = `cfghub_cluster_${randomBytes(16).toString('hex')}`;
  private readonly folder = tempDir('cfghub-ha-');

  private constructor(
    readonly etcd: EtcdCluster,
    readonly nodes: HaNode[],
    readonly leaseSeconds: number,
    readonly extraArgs: readonly string[],
    readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(
    options: {
      nodes?: number;
      etcdMembers?: number;
      leaseSeconds?: number;
      extraArgs?: readonly string[];
      /** More environment for every node (fault points). */
      env?: NodeJS.ProcessEnv;
      prepare?: (firstRepos: string) => void;
    } = {},
  ): Promise<HaCluster> {
    const etcd = await EtcdCluster.start(options.etcdMembers ?? 1);
    const cluster = new HaCluster(etcd, [], options.leaseSeconds ?? 2, options.extraArgs ?? [], options.env ?? {});
    try {
      for (let i = 0; i < (options.nodes ?? 3); i++) {
        const repos = join(cluster.folder.path, `node${i}`);
        mkdirSync(repos, { recursive: true });
        cluster.nodes.push(new HaNode(i, repos, await freePort(), cluster));
      }
      // The first node starts alone and leads; the others join it (a new cluster's first leader is
      // whichever node campaigns first, and the one whose folder holds the data must be it).
      options.prepare?.(cluster.nodes[0].repos);
      await cluster.nodes[0].start();
      await cluster.leader();
      await Promise.all(cluster.nodes.slice(1).map((node) => node.start()));
    } catch (error) {
      // A cluster that did not start stops what did: no etcd member or node outlives the test.
      await cluster.close().catch(() => undefined);
      throw error;
    }
    return cluster;
  }

  /** The node that answers as leader with a valid lease, waited for. */
  async leader(timeoutMs = 20_000): Promise<HaNode> {
    let found: HaNode | undefined;
    await until(
      async () => {
        for (const node of this.nodes) {
          if (!node.running) continue;
          const status = await node.status();
          if (status?.role === 'leader') {
            found = node;
            return true;
          }
        }
        return false;
      },
      'a leader',
      timeoutMs,
    );
    return found!;
  }

  /** Waits until the leader's sync set holds `size` members. */
  async syncSetOf(size: number, timeoutMs = 30_000): Promise<string[]> {
    let members: string[] = [];
    await until(
      async () => {
        const leader = await this.leader(timeoutMs);
        members = (await leader.status())?.syncSet ?? [];
        return members.length >= size;
      },
      `a sync set of ${size}`,
      timeoutMs,
    );
    return members;
  }

  async close(): Promise<void> {
    // CFGHUB_HA_LOGS=folder keeps each node's log there (and the nodes' folders), for looking into a failure.
    const keep = process.env.CFGHUB_HA_LOGS;
    if (keep)
      for (const node of this.nodes) writeFileSync(join(keep, `node${node.index}.log`), node.process?.output() ?? '');
    for (const node of this.nodes) {
      node.resume();
      await node.kill();
    }
    await this.etcd.close();
    if (!keep) this.folder.remove(); // kept with the logs, to look into
  }
}
