/**
 * Runs the git plumbing reference in its own lean Node process.
 *
 * Spawning a child costs more the more memory the spawning process holds (fork copies its page
 * tables): from this benchmark's process, which holds two parsed 10,000-key repositories, one
 * `git` spawn measured 18-21 ms at ~500-700 MiB RSS against ~5 ms from a small process. A
 * git-CLI-backed cfghub would not carry the benchmark's other two implementations, so the
 * reference gets a process of its own, and its pushes are timed there (IPC excluded).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Summary } from './stats.js';
import type { FileChange } from './workload.js';

const WORKER = fileURLToPath(new URL('./gitPlumbingWorker.ts', import.meta.url));

export type WorkerRequest =
  | { readonly kind: 'clone'; readonly source: string; readonly folder: string }
  | { readonly kind: 'push'; readonly files: readonly FileChange[]; readonly message: string }
  | { readonly kind: 'spawnFloor' };

export interface PushTiming {
  readonly tree: string;
  /** The push's duration inside the worker. */
  readonly ms: number;
}

export interface SpawnFloor {
  readonly summary: Summary;
  readonly residentMiB: number;
}

export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string };

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class GitPlumbingProcess {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: WorkerReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.ok) waiting?.resolve(reply.value);
      else waiting?.reject(new Error(`git plumbing worker: ${reply.error}`));
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        for (const waiting of this.pending.values()) waiting.reject(new Error(`git plumbing worker exited (${code})`));
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** Starts the worker and makes the reference repository in it: a bare clone of `source` in `folder`. */
  static async cloneFrom(source: string, folder: string): Promise<GitPlumbingProcess> {
    const worker = new GitPlumbingProcess(
      fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    try {
      await worker.call({ kind: 'clone', source, folder });
    } catch (error) {
      await worker.close();
      throw error;
    }
    return worker;
  }

  push(files: readonly FileChange[], message: string): Promise<PushTiming> {
    return this.call({ kind: 'push', files, message }) as Promise<PushTiming>;
  }

  /** The cost of one `git` spawn from the worker, the floor of each of the five commands of a push. */
  spawnFloor(): Promise<SpawnFloor> {
    return this.call({ kind: 'spawnFloor' }) as Promise<SpawnFloor>;
  }

  async close(): Promise<void> {
    if (this.child.connected) this.child.disconnect();
    await this.exited;
  }

  private call(request: WorkerRequest): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, request });
    });
  }
}
