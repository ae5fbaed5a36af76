/**
 * Test support: `cfghub serve` as a child process on a free loopback port, with its own
 * environment (fault points, the stale-lock age), its log kept, and stoppable gracefully or
 * killed outright with SIGKILL, as a crash would.
 */
import { spawn } from 'node:child_process';
import { CLI } from './paths.js';

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** Everything the process wrote on stdout so far (its JSON log lines). */
  output(): string;
  /** Resolves when the process has ended, with the signal that ended it, if any. */
  readonly exited: Promise<NodeJS.Signals | null>;
  /** SIGKILL: no shutdown, no flush, like a power cut. */
  kill(): Promise<NodeJS.Signals | null>;
  /** SIGTERM: the graceful shutdown. */
  stop(): Promise<void>;
}

/**
 * One process by default (`CFGHUB_WORKERS=1`): the crash and fault tests kill the server as a
 * power cut would, which a single process is; pass `CFGHUB_WORKERS` in `env`, or `--workers` in
 * `extraArgs`, for the multi-process server.
 *
 * `wrapper`: a command the server runs under, e.g. `['setpriv', '--reuid=65534', …]`. */
export function startServerProcess(
  repos: string,
  env: NodeJS.ProcessEnv = {},
  wrapper: readonly string[] = [],
  extraArgs: readonly string[] = [],
): Promise<ServerProcess> {
  const args = [CLI, 'serve', '--port', '0', '--repos', repos, ...extraArgs];
  const child = spawn(
    wrapper[0] ?? process.execPath,
    wrapper.length > 0 ? [...wrapper.slice(1), process.execPath, ...args] : args,
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CFGHUB_WORKERS: '1', ...env },
      // A process group of its own, signalled whole: a wrapper may run the server as its child and
      // not pass signals on, so signalling the wrapper alone would leave the server running.
      detached: true,
    },
  );
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      child.kill(name); // the group is gone already
    }
  };
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk) => (err += String(chunk)));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      const before = out;
      out += String(chunk);
      const match = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (match && !/"event":"listening"/.test(before)) {
        resolve({
          url: match[1],
          pid: child.pid!,
          output: () => out,
          exited,
          kill: () => {
            signal('SIGKILL');
            return exited;
          },
          stop: async () => {
            signal('SIGTERM');
            const started = Date.now();
            const late = setTimeout(() => {
              process.stderr.write(
                `[serverProcess] still running ${Date.now() - started} ms after SIGTERM; log tail:\n${out.slice(-3000)}\n${err.slice(-2000)}\n`,
              );
            }, 20_000);
            await exited;
            clearTimeout(late);
          },
        });
      }
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`cfghub serve ended (${code ?? signal}) before listening: ${out}${err}`)),
    );
  });
}
