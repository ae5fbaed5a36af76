/**
 * etcd, the reference for durable multi-key transactions: Debian's `etcd-server`
 * (bench/install-tools.sh installs it), started by the bench as a single member on loopback with a
 * temporary data folder and its default durability (the write-ahead log is fsynced before a
 * transaction is answered), reached through its HTTP gateway (`POST /v3/kv/txn`,
 * `POST /v3/kv/range`), the JSON-over-HTTP path a client without a gRPC stack takes, as
 * cfghub's clients take its REST API. Stopped by its pid at the end of its scenario.
 */
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stopChild, track } from './childProcesses.js';
import type { Log } from './fixtures.js';
import { makeTempFolder } from './tempFolders.js';

const START_TIMEOUT_MS = 30_000;
/** etcd's default limit of operations in one transaction (--max-txn-ops). */
export const ETCD_MAX_TXN_OPS = 128;

export interface KeyValue {
  readonly key: string;
  readonly value: string;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** `etcd --version`'s first line, or undefined when etcd is not installed. */
export function etcdVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('etcd', ['--version'], (error, stdout) => {
      if (error) return resolve(undefined);
      resolve(/etcd Version: (\S+)/.exec(stdout)?.[1] ?? stdout.split('\n')[0]);
    });
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`etcd ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

export class EtcdServer {
  private constructor(
    readonly version: string,
    readonly url: string,
    private readonly child: ReturnType<typeof spawn>,
  ) {}

  /** The etcd process's id (for its memory and CPU time in /proc). */
  get pid(): number {
    return this.child.pid!;
  }

  /** Starts etcd, or reports and resolves undefined when it is not installed (its rows are skipped). */
  static async start(log: Log): Promise<EtcdServer | undefined> {
    const version = await etcdVersion();
    if (!version) {
      log("etcd not found (bench/install-tools.sh installs Debian's etcd-server): its rows are skipped");
      return undefined;
    }
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${clientPort}`;
    const peer = `http://127.0.0.1:${peerPort}`;
    const dataDir = join(makeTempFolder('etcd'), 'data');
    const args = [
      '--name',
      'bench',
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `bench=${peer}`,
      '--log-level',
      'error',
    ];
    const child = track(spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'] }));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    const server = new EtcdServer(version, url, child);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited (${child.exitCode}) while starting: ${stderr}`);
      try {
        const health = (await (await fetch(`${url}/health`)).json()) as { health?: string };
        if (health.health === 'true') break;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        await server.close();
        throw new Error(`etcd did not become healthy within ${START_TIMEOUT_MS / 1000} s: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    log(`etcd ${version} listening on ${url}, data in a temporary folder`);
    return server;
  }

  /** One transaction putting every pair (at most ETCD_MAX_TXN_OPS). */
  async txn(pairs: readonly KeyValue[]): Promise<void> {
    const success = pairs.map(({ key, value }) => ({ requestPut: { key: base64(key), value: base64(value) } }));
    const answer = (await post(`${this.url}/v3/kv/txn`, { success })) as { succeeded?: boolean };
    if (!answer.succeeded)
      throw new Error(
        `etcd transaction of ${pairs.length} puts did not succeed: ${JSON.stringify(answer).slice(0, 300)}`,
      );
  }

  /** Puts many pairs, in transactions of at most ETCD_MAX_TXN_OPS. */
  async load(pairs: readonly KeyValue[]): Promise<void> {
    for (let i = 0; i < pairs.length; i += 100) await this.txn(pairs.slice(i, i + 100));
  }

  /** The body of a range read of every key under `prefix`, for a load generator to POST. */
  rangeBody(prefix: string): string {
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    return JSON.stringify({ key: base64(prefix), range_end: base64(end) });
  }

  /** How many keys a range read of `prefix` returns, and the size of its answer. */
  async range(prefix: string): Promise<{ count: number; bytes: number }> {
    const response = await fetch(`${this.url}/v3/kv/range`, { method: 'POST', body: this.rangeBody(prefix) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`etcd range answered ${response.status}: ${text.slice(0, 300)}`);
    return { count: Number((JSON.parse(text) as { count?: string }).count ?? 0), bytes: Buffer.byteLength(text) };
  }

  close(): Promise<void> {
    return stopChild(this.child);
  }
}
