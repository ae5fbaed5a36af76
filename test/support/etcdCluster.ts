/**
 * A real etcd cluster on loopback for tests (Debian's etcd-server; `.ci/run` installs it): one or
 * three members, each its own process and data folder in a temporary folder, on free ports. A test
 * can kill, pause (SIGSTOP) and resume a member, start it again on its data, or wipe the whole
 * cluster and start a new one (a new cluster id).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './paths.js';
import { until } from './poll.js';
import { reservedPorts } from './ports.js';
import { stopProcess } from './processStop.js';

export const etcdInstalled = spawnSync('etcd', ['--version']).status === 0;

interface Member {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  child?: ChildProcess;
}

export class EtcdCluster {
  private readonly folder = tempDir('cfghub-etcd-');
  private generation = 0;

  private constructor(private readonly members: Member[]) {}

  /** The client URLs of every member, for `--etcd`. */
  get endpoints(): string[] {
    return this.members.map((member) => member.clientUrl);
  }

  static async start(size = 1): Promise<EtcdCluster> {
    const members: Member[] = [];
    for (let i = 0; i < size; i++) {
      const [client, peer] = await reservedPorts(2);
      members.push({ name: `m${i}`, clientUrl: `http://127.0.0.1:${client}`, peerUrl: `http://127.0.0.1:${peer}` });
    }
    const cluster = new EtcdCluster(members);
    try {
      for (let i = 0; i < size; i++) cluster.spawnMember(i);
      await cluster.healthy();
    } catch (error) {
      await cluster.close(); // no member of a cluster that did not start outlives the test
      throw error;
    }
    return cluster;
  }

  private dataDir(member: Member): string {
    return join(this.folder.path, `${member.name}-${this.generation}`);
  }

  private spawnMember(index: number): void {
    const member = this.members[index];
    mkdirSync(this.folder.path, { recursive: true });
    const initialCluster = this.members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const args = [
      '--name',
      member.name,
      '--data-dir',
      this.dataDir(member),
      '--listen-client-urls',
      member.clientUrl,
      '--advertise-client-urls',
      member.clientUrl,
      '--listen-peer-urls',
      member.peerUrl,
      '--initial-advertise-peer-urls',
      member.peerUrl,
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-token',
      `cfghub-test-${this.generation}`,
      '--initial-cluster-state',
      'new',
      // Fast elections on loopback: a killed etcd leader is replaced within about a second.
      '--heartbeat-interval',
      '100',
      '--election-timeout',
      '1000',
      '--log-level',
      'error',
    ];
    member.child = spawn('etcd', args, { stdio: 'ignore' });
  }

  /** Waits until every running member answers `/health` true. */
  async healthy(timeoutMs = 30_000): Promise<void> {
    await until(
      async () => {
        const answers = await Promise.all(
          this.members
            .filter((member) => member.child && member.child.exitCode === null)
            .map((member) =>
              fetch(`${member.clientUrl}/health`, { signal: AbortSignal.timeout(1_000) })
                .then(async (response) => ((await response.json()) as { health?: string }).health === 'true')
                .catch(() => false),
            ),
        );
        return answers.length > 0 && answers.every(Boolean);
      },
      'etcd members healthy',
      timeoutMs,
    );
  }

  /** The number of members. */
  get size(): number {
    return this.members.length;
  }

  /** SIGKILL of one member; resolves once it has exited. */
  kill(index: number): Promise<void> {
    const child = this.members[index].child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    return exited;
  }

  /** The index of the member etcd's raft elected leader now, if a member answers. */
  async leaderIndex(): Promise<number | undefined> {
    const ids = await Promise.all(
      this.members.map((member) =>
        fetch(`${member.clientUrl}/v3/maintenance/status`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(1_000),
        })
          .then(async (response) => (await response.json()) as { header?: { member_id?: string }; leader?: string })
          .catch(() => undefined),
      ),
    );
    const leader = ids.find((answer) => answer?.leader)?.leader;
    const index = ids.findIndex((answer) => answer?.header?.member_id === leader);
    return leader === undefined || index < 0 ? undefined : index;
  }

  /** SIGSTOP of one member; resolves once its threads have all stopped. */
  async pause(index: number): Promise<void> {
    const child = this.members[index].child;
    if (child?.pid !== undefined) await stopProcess(child.pid, () => child.kill('SIGSTOP'));
  }

  resume(index: number): void {
    this.members[index].child?.kill('SIGCONT');
  }

  /** Starts a killed member again on its data. */
  async restart(index: number): Promise<void> {
    const member = this.members[index];
    if (member.child && member.child.exitCode === null && member.child.signalCode === null) return;
    this.spawnMember(index);
    await this.healthy();
  }

  /** SIGKILL of every member (the quorum lost); their data kept. */
  async killAll(): Promise<void> {
    await this.stopAll();
  }

  /** Starts every stopped member again on its data, and waits until all answer healthy. */
  async restartAll(): Promise<void> {
    this.members.forEach((member, i) => {
      if (!member.child || member.child.exitCode !== null || member.child.signalCode !== null) this.spawnMember(i);
    });
    await this.healthy();
  }

  /** Kills every member, throws their data away and starts a new cluster on the same ports (a new cluster id). */
  async rebuild(): Promise<void> {
    await this.stopAll();
    this.generation++;
    this.members.forEach((_member, i) => this.spawnMember(i));
    await this.healthy();
  }

  private async stopAll(): Promise<void> {
    await Promise.all(
      this.members.map(
        (member) =>
          new Promise<void>((resolve) => {
            const child = member.child;
            if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGCONT');
            child.kill('SIGKILL');
          }),
      ),
    );
  }

  async close(): Promise<void> {
    await this.stopAll();
    rmSync(this.folder.path, { recursive: true, force: true });
  }
}
