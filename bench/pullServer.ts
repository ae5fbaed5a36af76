/**
 * Starts the pull scenario's server (pullServerWorker.ts) in a child process.
 *
 * A child rather than this process, because the comparison is fairer there: this process holds
 * the push scenarios' leftovers (hundreds of MiB of parsed repositories, whose garbage collection
 * would pause a server living here), and a load generator's results must not depend on what else
 * the benchmark keeps in memory. A child is what `cfghub serve` is: one process with one
 * repository registry and nothing else, and both endpoints share it, so whatever it costs them
 * (its heap, its event loop, its core) it costs them alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './childProcesses.js';

const WORKER = fileURLToPath(new URL('./pullServerWorker.ts', import.meta.url));
/** Starting the server includes building the first pull answer; far more than enough. */
const START_TIMEOUT_MS = 60_000;

export interface PullServerStart {
  readonly kind: 'start';
  readonly reposRoot: string;
  /** `/rest/pull/{account}/{repository}`. */
  readonly pullPath: string;
  readonly context: string;
}

export type PullServerMessage = PullServerStart | { readonly kind: 'memory' };

export type PullServerReply =
  | { readonly kind: 'ready'; readonly url: string; readonly bodyBytes: number; readonly residentMiB: number }
  | { readonly kind: 'memory'; readonly residentMiB: number }
  | { readonly kind: 'failed'; readonly error: string };

export class PullServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    /** Size of the pull answer, which /static answers too. */
    readonly bodyBytes: number,
    readonly residentMiBAtStart: number,
  ) {}

  static async start(request: Omit<PullServerStart, 'kind'>): Promise<PullServerProcess> {
    const child = track(
      fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    try {
      const reply = await PullServerProcess.ask(child, { kind: 'start', ...request }, START_TIMEOUT_MS);
      if (reply.kind !== 'ready')
        throw new Error(`the pull server did not start: ${reply.kind === 'failed' ? reply.error : reply.kind}`);
      return new PullServerProcess(child, reply.url, reply.bodyBytes, reply.residentMiB);
    } catch (error) {
      await stopChild(child);
      throw error;
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  async residentMiB(): Promise<number> {
    const reply = await PullServerProcess.ask(this.child, { kind: 'memory' }, 10_000);
    if (reply.kind !== 'memory') throw new Error(`the pull server answered ${reply.kind} to a memory query`);
    return reply.residentMiB;
  }

  /** Stops the server process by its pid. */
  close(): Promise<void> {
    return stopChild(this.child);
  }

  private static ask(child: ChildProcess, message: PullServerMessage, timeoutMs: number): Promise<PullServerReply> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`the pull server did not answer ${message.kind} within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const onReply = (reply: PullServerReply) => finish(undefined, reply);
      const onExit = (code: number | null) =>
        finish(new Error(`the pull server exited (${code}) before answering ${message.kind}`));
      function finish(error: Error | undefined, reply?: PullServerReply): void {
        clearTimeout(timer);
        child.off('message', onReply);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve(reply!);
      }
      child.once('message', onReply);
      child.once('exit', onExit);
      child.send(message);
    });
  }
}
