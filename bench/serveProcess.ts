/**
 * `cfghub serve` as a user runs it (the built CLI, `node dist/cli/main.cjs serve --port 0 --repos
 * DIR`) in a child process, and its `"event":"listening"` log line: for the restart and memory
 * scenarios, which measure the real program rather than a server built inside the bench.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './childProcesses.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
/** Far beyond any plausible start; a server that takes longer has failed. */
const LISTEN_TIMEOUT_MS = 60_000;

export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm run bench does)`);
}

/**
 * `extraArgs`: e.g. `['--workers', '1']`; without, the default (one process; `auto` is one worker per core).
 * `nodeArgs`: options for node itself (e.g. `--cpu-prof` to profile the server).
 */
export function spawnServe(
  reposRoot: string,
  extraArgs: readonly string[] = [],
  nodeArgs: readonly string[] = [],
): ServeProcess {
  return track(
    spawn(process.execPath, [...nodeArgs, CLI, 'serve', '--port', '0', '--repos', reposRoot, ...extraArgs], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The listening line is an info log: make sure no LOG_LEVEL of the caller hides it.
      env: { ...process.env, LOG_LEVEL: 'info' },
    }),
  );
}

/**
 * A process's resident memory with its children's (the workers of `serve --workers N`),
 * from /proc (Linux), in MiB.
 */
export function residentMiBOf(pid: number): number {
  return Math.round(residentOfTree(pid).reduce((sum, p) => sum + p.kiB, 0) / 1024);
}

/** The resident memory of a process and of each of its descendants, in KiB, the process first. */
export function residentOfTree(pid: number): { pid: number; kiB: number }[] {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return [{ pid, kiB: Number(match[1]) }, ...childrenOf(pid).flatMap((child) => residentOfTree(child))];
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return []; // gone meanwhile, or a kernel without the children file
  }
}

export type ServeProcess = ChildProcessByStdio<null, Readable, Readable>;

/** Resolves with the server's URL when its listening line arrives; the server's stdout keeps being read after. */
export function listening(child: ServeProcess): Promise<{ url: string; at: number }> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(
      () => fail(new Error(`cfghub serve did not log "listening" within ${LISTEN_TIMEOUT_MS / 1000} s`)),
      LISTEN_TIMEOUT_MS,
    );
    const onExit = (code: number | null) =>
      fail(new Error(`cfghub serve exited (${code}) before listening: ${stderr.slice(0, 1000)}`));
    function fail(error: Error): void {
      clearTimeout(timer);
      child.off('exit', onExit);
      reject(error);
    }
    child.once('exit', onExit);
    // Every line is read (request logs follow), so the pipe never fills and blocks the server.
    createInterface({ input: child.stdout }).on('line', (line) => {
      const at = performance.now();
      let entry: { event?: string; url?: string };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.event !== 'listening' || !entry.url) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({ url: entry.url, at });
    });
  });
}

/**
 * `cfghub serve` on a repositories folder in a child process, as a BenchServer: a client timing
 * requests to it shares no event loop with the server, as no real client does.
 */
export async function serveInChild(
  reposRoot: string,
  extraArgs: readonly string[] = [],
): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  requireBuiltCli();
  const child = spawnServe(reposRoot, extraArgs);
  try {
    const { url } = await listening(child);
    return { url, pid: child.pid!, close: () => stopChild(child) };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/**
 * `cfghub serve` with a number of workers without request logs
 * (LOG_LEVEL=warn), as the pull scenario's in-bench servers run silent: the throughput measured is
 * the service's, not that of a log line per request into a pipe. Without the listening line, it
 * listens on a port found free just before, and is ready once /metrics counts every worker.
 */
export async function serveQuietInChild(
  reposRoot: string,
  workers: number,
): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  requireBuiltCli();
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const child = track(
    spawn(
      process.execPath,
      [CLI, 'serve', '--port', String(port), '--repos', reposRoot, '--workers', String(workers)],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, LOG_LEVEL: 'warn' },
      },
    ),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + LISTEN_TIMEOUT_MS;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`cfghub serve exited (${child.exitCode}) before listening`);
      const counted = await fetch(`${url}/metrics`).then(
        async (answer) => Number(/^cfghub_workers (\d+)$/m.exec(await answer.text())?.[1] ?? (workers === 1 ? 1 : 0)),
        () => 0,
      );
      if (counted === workers) break;
      if (Date.now() > deadline)
        throw new Error(`cfghub serve did not serve with ${workers} workers within ${LISTEN_TIMEOUT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { url, pid: child.pid!, close: () => stopChild(child) };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}
