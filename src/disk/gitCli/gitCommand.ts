/**
 * The `git` program, which cfghub needs at run time only to serve clones (`git http-backend`) and
 * to repack loose objects that plain-git writers leave. Found on the PATH when used; its absence
 * is a typed error the adapters turn into a clear answer (HTTP 503), never a crash.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { GitUnavailableError } from '../errors.js';

/**
 * The environment git runs in: the server's PATH and HOME (so git finds its helpers and the
 * administrator's configuration), none of the caller's GIT_* variables, and `extra`.
 */
export function gitEnvironment(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT']) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

/**
 * Spawns git. Resolves once the process has started, so a missing git is a GitUnavailableError
 * raised here rather than an 'error' event nobody listens to.
 */
export function spawnGit(args: readonly string[], options: SpawnOptions): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, options);
    const failed = (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new GitUnavailableError() : error);
    child.once('error', failed);
    child.once('spawn', () => {
      child.off('error', failed);
      resolve(child);
    });
  });
}

/** The processes `pid` started, and theirs, as Linux lists them; none where /proc does not tell. */
function descendants(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (listed) children.push(...listed.split(/\s+/).map(Number));
    }
  } catch {
    // gone already, or no /proc: the child alone is signalled
  }
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/**
 * Ends git and every process it started. `git fetch` over HTTP runs its transport in child
 * processes (`git remote-http`, `git fetch-pack`) that hold its stderr: killing git alone leaves
 * them waiting on a primary that does not answer (a paused process) and the fetch's end with
 * them, its stderr never closing. git is stopped first so that it starts no other meanwhile.
 */
export function killGitTree(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  tryKill(pid, 'SIGSTOP');
  const tree = descendants(pid);
  for (const each of [pid, ...tree]) tryKill(each, signal);
  // A stopped git would hold a SIGTERM until it is continued.
  if (signal !== 'SIGKILL') for (const each of [pid, ...tree]) tryKill(each, 'SIGCONT');
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ended meanwhile
  }
}

/** Runs git to the end; rejects with its stderr's first line when it exits with a failure. */
export async function runGit(gitdir: string, args: readonly string[]): Promise<void> {
  const child = await spawnGit(['--git-dir', gitdir, ...args], {
    env: gitEnvironment({}),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const code = await new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`git ${args[0]} failed (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''}`);
}
