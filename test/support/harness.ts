/**
 * Test support: temporary repositories folders, the real server on a loopback port, the real
 * `cfghub` command as a child process, and the real git CLI to check what landed on disk.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect } from 'vitest';
import { DEFAULT_BODY_LIMIT, type HttpDeps } from '../../src/http/deps.js';
import { DEFAULT_TIMEOUTS, startServer, type RunningServer, type ServerTimeouts } from '../../src/http/server.js';
import { TokenService } from '../../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { TokenStore } from '../../src/disk/records/tokenStore.js';
import { CLI, tempDir } from './paths.js';

export { CLI, tempDir };

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built `cfghub` command against a repositories folder. */
export function cli(repos: string, ...args: string[]): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args, '--repos', repos], { encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs the built `cfghub` command with `input` on its standard input (passwords, one per line),
 * without blocking this process: a server started by the test keeps serving meanwhile (a long
 * synchronous wait lets its keep-alive timers and the client's race when it ends).
 */
export function cliWithInput(repos: string, input: string, ...args: string[]): Promise<CliResult> {
  return runCommand([...args, '--repos', repos], { input });
}

/**
 * Runs the built `cfghub` command as a child process, without blocking this process, and
 * collects what it prints: the one owner of that for cliWithInput and bothWays's run.
 */
export function runCommand(
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Like cli, but fails the test when the command fails; returns stdout. */
export function cliOk(repos: string, ...args: string[]): string {
  const result = cli(repos, ...args);
  if (result.code !== 0) throw new Error(`cfghub ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

/** The flags of a repository anyone may read and push to without a token. */
export const TOKEN_FREE = ['--token-free-pull', '--token-free-push'];

/**
 * `cfghub repo create FULL_NAME --context LEVELS FLAGS…` in the folder `repos` by the built CLI
 * (levels comma-separated, widest first); fails the test when the command fails.
 */
export function createRepo(repos: string, fullName: string, levels: string, ...flags: string[]): string {
  return cliOk(repos, 'repo', 'create', fullName, '--context', levels, ...flags);
}

/** Runs the real git CLI in a bare repository; returns stdout. */
export function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function gitdirOf(repos: string, fullName: string): string {
  const [account, name] = fullName.split('/');
  return join(repos, account, `${name}.git`);
}

/** The key names in `refs/heads/main` of a bare repository, sorted (read by git). */
export function keysAtHead(gitdir: string): string[] {
  return git(gitdir, 'ls-tree', '-r', '--name-only', 'refs/heads/main', 'keys/')
    .split('\n')
    .filter(Boolean)
    .map((path) =>
      path
        .split('/')
        .pop()!
        .replace(/\.yaml$/, ''),
    )
    .sort();
}

export function headOf(repos: string, fullName: string): string {
  return git(gitdirOf(repos, fullName), 'rev-parse', 'refs/heads/main').trim();
}

export function commitCount(repos: string, fullName: string): number {
  return Number(git(gitdirOf(repos, fullName), 'rev-list', '--count', 'refs/heads/main').trim());
}

export interface TestServer {
  readonly url: string;
  readonly repos: string;
  /** Every log line the server wrote, parsed. */
  readonly logs: Record<string, unknown>[];
  /** The raw log text, to search for things that must never be logged. */
  logText(): string;
  /**
   * Waits until the server has no push or pack merge running or queued for a repository. A merge
   * runs after a push has answered; like `git gc`, it can make a `git fsck` or `git verify-pack`
   * running at that very moment report a pack that just went away.
   */
  settle(fullName: string): Promise<void>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  bodyLimit?: number;
  timeouts?: ServerTimeouts;
  looseObjectLimit?: number;
  maxWatchers?: number;
  port?: number;
  hidePrivate?: boolean;
  webhookLimits?: HttpDeps['webhookLimits'];
}

/** A pino logger at `info` whose lines are kept in memory, for a test to read what a server logged. */
export function capturedLogger(): { readonly lines: string[]; readonly logger: pino.Logger } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

/** Starts the real HTTP server in this process, on a free loopback port. */
export async function startTestServer(repos: string, options: TestServerOptions = {}): Promise<TestServer> {
  const { lines, logger } = capturedLogger();
  // As `cfghub serve` makes it: pushes go through the push journal (pushJournal.ts).
  const registry = new RepositoryRegistry(repos, { looseObjectLimit: options.looseObjectLimit, journal: true });
  const tokens = new TokenService(new TokenStore(repos));
  const running: RunningServer = await startServer(
    {
      registry,
      tokens,
      logger,
      bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
      maxWatchers: options.maxWatchers,
      hidePrivate: options.hidePrivate,
      webhookLimits: options.webhookLimits,
    },
    options.port ?? 0,
    '127.0.0.1',
    // The server shares the test's process, whose loop the synchronous helpers (cliOk, git) block,
    // seconds at a time on a loaded machine. An idle connection's keep-alive timer that expired
    // during a block fires in the same turn as the test's next request is written on that
    // connection, and the request is reset (ECONNRESET). Idle connections are kept longer than
    // any block here (`cfghub serve` keeps its own 5 s).
    { ...DEFAULT_TIMEOUTS, keepAliveMs: 10 * 60_000, ...options.timeouts },
  );
  return {
    url: running.url,
    repos,
    get logs() {
      return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    },
    logText: () => lines.join('\n'),
    settle: async (fullName) => {
      const [account, name] = fullName.split('/');
      const repository = registry.find(account, name);
      await repository?.exclusive(async () => undefined);
      await repository?.objects.settled(); // old packs of a merge are removed after it
    },
    close: async () => {
      await running.close();
      await registry.flushJournal();
      registry.close();
      tokens.close();
    },
  };
}

/** A test file's repositories folder and the server on it, for the file's tests (serverForFile). */
export interface FileServer {
  /** The temporary repositories folder the server serves. */
  readonly repos: string;
  readonly server: TestServer;
}

/**
 * One owner of a test file's server lifecycle, so that each file does not repeat it: called at
 * the top level of a test file, registers a beforeAll that makes a fresh repositories folder and
 * starts the real server on it, and an afterAll that closes the server and removes the folder
 * (whatever of the two the beforeAll got to make). A file's own setup goes in a beforeAll after
 * the call (it runs after this one; an afterAll after the call runs before this one).
 */
export function serverForFile(options: TestServerOptions = {}): FileServer {
  let dir: ReturnType<typeof tempDir> | undefined;
  let server: TestServer | undefined;
  beforeAll(async () => {
    dir = tempDir();
    server = await startTestServer(dir.path, options);
  });
  afterAll(async () => {
    try {
      await server?.close();
    } finally {
      dir?.remove();
    }
  });
  const notYet = (what: string) =>
    new Error(`serverForFile: the ${what} is there only once its beforeAll has run (use it in a test or a hook)`);
  return {
    get repos() {
      if (!dir) throw notYet('repositories folder');
      return dir.path;
    },
    get server() {
      if (!server) throw notYet('server');
      return server;
    },
  };
}

export interface PushAnswer {
  readonly status: number;
  readonly etag: string | null;
  readonly body: string;
  readonly json: any;
}

/** POSTs a push; `body` is sent as JSON unless it is already a string. */
export async function pushTo(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<PushAnswer> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), body: text, json: jsonOrUndefined(text) };
}

/** Pushes as `pushTo` does and fails the test unless the push made its commit (200): the commit id. */
export async function pushCommitted(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const answer = await pushTo(url, path, body, headers);
  expect(answer.status, `push refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

/**
 * Creates, with the command line, a repository anyone may read and push to without a token: what
 * most files test against (levels Environment and Application unless `levels` says others).
 */
export function createOpenRepository(repos: string, fullName: string, levels = 'Environment,Application'): void {
  cliOk(repos, 'repo', 'create', fullName, '--context', levels, '--token-free-push', '--token-free-pull');
}

/** A body parsed as JSON, or undefined when it is empty or not JSON. */
export function jsonOrUndefined(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The reason of a 304, without its quotes. */
export function reasonOf(answer: PushAnswer): string {
  return (answer.etag ?? '').replace(/^"|"$/g, '');
}

export async function getJson(url: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
}

/** Reads a key's YAML document at HEAD with git, or null if the key file does not exist. */
export function keyDocument(repos: string, fullName: string, path: string): string | null {
  try {
    return git(gitdirOf(repos, fullName), 'show', `refs/heads/main:${path}`);
  } catch {
    return null;
  }
}
