/**
 * The fallback load generator when wrk is missing: a Node client (node:http, a keep-alive Agent
 * with as many sockets as connections) in a child process of its own, kept for the whole scenario.
 *
 * A child, because a client in the server's process, or in this one while it also drives the
 * run, competes for the same event loop; a child competes only for the CPU, as wrk does.
 * node:http rather than undici's Agent: undici is not a dependency of this project (Node bundles
 * it only behind fetch, without its Agent), and node:http's agent does the same job here, one
 * request in flight per keep-alive connection. It costs more CPU per request than wrk, which the
 * notes say, since on a small machine the client's CPU is taken from the server.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './childProcesses.js';
import type { LoadGenerator, LoadSlice, SliceResult } from './load.js';

const WORKER = fileURLToPath(new URL('./nodeLoadWorker.ts', import.meta.url));
/** The worker ends a slice by itself at its time; this long past it, the slice fails. */
const OVERRUN_MS = 30_000;

export interface NodeLoadRequest {
  readonly id: number;
  readonly slice: LoadSlice;
}

export type NodeLoadReply =
  | { readonly id: number; readonly ok: true; readonly value: SliceResult }
  | { readonly id: number; readonly ok: false; readonly error: string };

export class NodeLoadProcess implements LoadGenerator {
  readonly name = `Node ${process.version} client`;
  readonly description = `wrk not found, so a Node ${process.version} client in a child process (node:http, keep-alive Agent with maxSockets = connections, one request in flight per connection); run bench/install-tools.sh to install wrk`;
  private nextId = 0;

  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<NodeLoadProcess> {
    return new NodeLoadProcess(
      track(fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
    );
  }

  run(slice: LoadSlice): Promise<SliceResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`the Node load client did not finish a ${slice.seconds} s slice in time`)),
        slice.seconds * 1000 + OVERRUN_MS,
      );
      const onReply = (reply: NodeLoadReply) => {
        if (reply.id !== id) return;
        if (reply.ok) finish(undefined, reply.value);
        else finish(new Error(`Node load client: ${reply.error}`));
      };
      const onExit = (code: number | null) => finish(new Error(`the Node load client exited (${code})`));
      const child = this.child;
      function finish(error: Error | undefined, value?: SliceResult): void {
        clearTimeout(timer);
        child.off('message', onReply);
        child.off('exit', onExit);
        if (error) reject(error);
        else resolve(value!);
      }
      child.on('message', onReply);
      child.once('exit', onExit);
      child.send({ id, slice } satisfies NodeLoadRequest);
    });
  }

  close(): Promise<void> {
    return stopChild(this.child);
  }
}
