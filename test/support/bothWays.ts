/**
 * Running an administrative command both ways: once on a repositories folder
 * (`--repos`) and once on a server serving another folder (`--server`, admin token in
 * CFGHUB_ADMIN_TOKEN); the two runs must print the same thing and exit alike.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { runCommand, startTestServer, tempDir, type CliResult, type TestServer } from './harness.js';

/** Runs the built command, without blocking this process (the server under test runs in it). */
export function run(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  input = '',
): Promise<CliResult> {
  return runCommand(args, {
    input,
    env: { ...process.env, CFGHUB_REPOS: undefined, CFGHUB_SERVER: undefined, CFGHUB_ADMIN_TOKEN: undefined, ...env },
  });
}

/**
 * What differs between two runs by nature: times, commit ids, tokens, and the folder a local run
 * names when a repository is not found in it (a remote run has none to name).
 */
export function normal(text: string): string {
  return text
    .replace(/ in the repositories folder \S+/g, '')
    .replace(/\b[0-9a-f]{40}\b/g, '<commit>')
    .replace(/\b[0-9a-f]{12}\b/g, '<short>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>')
    .replace(/cfg_[A-Za-z0-9_-]{43}/g, '<token>');
}

/** Each step: its arguments (given each side's folder, for commit ids) and its standard input. */
export interface Step {
  readonly args: (repos: string) => string[];
  readonly input?: string;
  /** The exit status both runs must have. */
  readonly code: number;
}

export const step = (code: number, args: string[] | ((repos: string) => string[]), input?: string): Step => ({
  code,
  args: typeof args === 'function' ? args : () => args,
  input,
});

export interface BothWays {
  /** The folder the local runs work on. */
  readonly local: string;
  /** The folder the server serves. */
  readonly remote: string;
  readonly serverUrl: string;
  readonly adminToken: string;
}

/** Runs every step both ways, side by side, and checks the exit status, stdout and stderr agree. */
export async function runBothWays(sides: BothWays, steps: readonly Step[]): Promise<void> {
  for (const { args, input, code } of steps) {
    const folderArgs = args(sides.local);
    const serverArgs = args(sides.remote);
    // The two sides share nothing: run them side by side.
    const [byFolder, byServer] = await Promise.all([
      run([...folderArgs, '--repos', sides.local], {}, input),
      run([...serverArgs, '--server', sides.serverUrl], { CFGHUB_ADMIN_TOKEN: sides.adminToken }, input),
    ]);
    const what = `cfghub ${folderArgs.join(' ')}`;
    expect(byFolder.code, `${what} on the folder: ${byFolder.stderr}`).toBe(code);
    expect(byServer.code, `${what} on the server: ${byServer.stderr}`).toBe(code);
    expect(normal(byServer.stdout), what).toBe(normal(byFolder.stdout));
    expect(normal(byServer.stderr), what).toBe(normal(byFolder.stderr));
    if (code !== 0) expect(byServer.stderr.trim().split('\n'), what).toHaveLength(1);
  }
}

/** The two folders, a server on the remote one and an admin token it accepts. */
export interface BothWaysServer {
  local: ReturnType<typeof tempDir>;
  remote: ReturnType<typeof tempDir>;
  server: TestServer;
  adminToken: string;
  /** What `runBothWays` needs. */
  sides(): BothWays;
  /** A request to the admin API; `token` null sends none, a string body is sent as it is. */
  admin(
    method: string,
    path: string,
    body?: unknown,
    token?: string | null,
  ): Promise<{ status: number; text: string; json: any }>;
}

/** Makes a BothWaysServer before the file's tests and removes it after them. */
export function bothWaysServer(): BothWaysServer {
  const world = {
    sides: () => ({
      local: world.local.path,
      remote: world.remote.path,
      serverUrl: world.server.url,
      adminToken: world.adminToken,
    }),
    async admin(method: string, path: string, body?: unknown, token: string | null = world.adminToken) {
      const response = await fetch(`${world.server.url}${path}`, {
        method,
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
    },
  } as BothWaysServer;
  beforeAll(async () => {
    world.local = tempDir();
    world.remote = tempDir();
    const created = await run(['admin-token', 'create', '--name', 'ops', '--repos', world.remote.path]);
    expect(created.code, created.stderr).toBe(0);
    world.adminToken = created.stdout.trim();
    world.server = await startTestServer(world.remote.path);
  });
  afterAll(async () => {
    await world.server?.close();
    world.local?.remove();
    world.remote?.remove();
  });
  return world;
}
