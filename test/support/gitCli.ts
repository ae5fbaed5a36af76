/**
 * Unit-test helpers around the real git CLI: a throw-away bare repository and raw plumbing
 * commands (hash-object, mktree, commit-tree, cat-file, fsck) to check cfghub's encoding of git
 * objects against git itself.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempGit {
  readonly dir: string;
  readonly gitdir: string;
  /** Runs git against the bare repository; returns stdout (stdout as a Buffer when `binary`). */
  git(args: readonly string[], input?: string | Buffer, env?: NodeJS.ProcessEnv): string;
  gitBinary(args: readonly string[], input?: string | Buffer): Buffer;
  /** Runs git and returns its exit code and both outputs, without throwing. */
  gitStatus(args: readonly string[]): { code: number; stdout: string; stderr: string };
  remove(): void;
}

const QUIET_ENV: NodeJS.ProcessEnv = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LANG: 'C',
  LC_ALL: 'C',
};

export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...QUIET_ENV, ...extra };
}

/** A temporary folder; when `bare`, `git init --bare` is run in `<dir>/repo.git`. */
export function tempGit(bare = true): TempGit {
  const dir = mkdtempSync(join(tmpdir(), 'cfghub-unit-'));
  const gitdir = join(dir, 'repo.git');
  if (bare) execFileSync('git', ['init', '--quiet', '--bare', gitdir], { env: gitEnv() });
  const run = (args: readonly string[], input?: string | Buffer, env?: NodeJS.ProcessEnv) =>
    execFileSync('git', ['--git-dir', gitdir, ...args], {
      input,
      env: gitEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  return {
    dir,
    gitdir,
    git: (args, input, env) => run(args, input, env).toString('utf8'),
    gitBinary: (args, input) => run(args, input),
    gitStatus: (args) => {
      try {
        const stdout = run(args).toString('utf8');
        return { code: 0, stdout, stderr: '' };
      } catch (error) {
        const e = error as { status?: number; stdout?: Buffer; stderr?: Buffer };
        return {
          code: e.status ?? -1,
          stdout: e.stdout?.toString('utf8') ?? '',
          stderr: e.stderr?.toString('utf8') ?? '',
        };
      }
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface GitRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the real git CLI without blocking the event loop, for git talking to a server in this
 * very process (a synchronous spawn would leave the server unable to answer).
 */
export function gitAsync(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd: options.cwd, env: gitEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
