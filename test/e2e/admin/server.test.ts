/**
 * `cfghub serve` as a real process: the demo repository, /healthz, one JSON log line per request,
 * and graceful shutdown that lets an in-flight push finish.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, git, gitdirOf, tempDir } from '../../support/harness.js';
import { until } from '../../support/poll.js';

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir();
});

afterAll(() => dir.remove());

interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  exited: Promise<number | null>;
}

function serve(...args: string[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--repos', dir.path, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const match = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (match) resolve({ child, url: match[1], output: () => out, exited });
    });
    child.stderr!.on('data', (chunk) => (out += String(chunk)));
    exited.then((code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

describe('cfghub serve --demo', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await serve('--demo');
  });

  afterAll(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('creates demo/HowItWorks with keys, values and a templated file, token-free push on', async () => {
    const listing = await (await fetch(`${server.url}/rest/info/all`)).json();
    expect(listing).toEqual([
      expect.objectContaining({
        account: 'demo',
        name: 'HowItWorks',
        context: ['Environment', 'Application'],
        keyCount: 4,
        valueCount: 8,
      }),
    ]);
    const gitdir = gitdirOf(dir.path, 'demo/HowItWorks');
    expect(git(gitdir, 'show', 'HEAD:files/_;_/conf/database.properties')).toContain('host=${ db.host }');
    const push = await fetch(`${server.url}/rest/push/demo/HowItWorks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        changeComment: 'try it',
        data: [{ key: 'log.level', values: [{ context: 'Staging;*', value: 'info' }] }],
      }),
    });
    expect(push.status).toBe(200);
  });

  it('answers /healthz', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers an unknown endpoint with a JSON 404', async () => {
    const response = await fetch(`${server.url}/rest/nothing-here`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: 'not_found' });
  });

  it('writes one JSON log line per request with request id, method, path, status and duration', async () => {
    const response = await fetch(`${server.url}/healthz`, { headers: { 'X-Request-Id': 'probe-123' } });
    expect(response.headers.get('x-request-id')).toBe('probe-123');
    // The line is written when the answer ends, which may be after the client has read it.
    const logLine = () =>
      server
        .output()
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text))
        .find((entry) => entry.reqId === 'probe-123');
    await until(() => logLine() !== undefined, 'the log line of request probe-123');
    expect(logLine()).toMatchObject({
      reqId: 'probe-123',
      method: 'GET',
      path: '/healthz',
      status: 200,
      durationMs: expect.any(Number),
    });
  });

  it('does not create the demo again when it exists', async () => {
    const again = await serve('--demo');
    const gitdir = gitdirOf(dir.path, 'demo/HowItWorks');
    const commits = git(gitdir, 'rev-list', '--count', 'HEAD').trim();
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    expect(git(gitdir, 'rev-list', '--count', 'HEAD').trim()).toBe(commits);
  });
});

describe('graceful shutdown', () => {
  it('finishes an in-flight push on SIGTERM, then exits 0', async () => {
    const server = await serve('--demo');
    const body = JSON.stringify({
      changeComment: 'in flight',
      data: [{ key: 'db.host', values: [{ context: 'Shutdown;*', value: 'late' }] }],
    });
    const url = new URL(`${server.url}/rest/push/demo/HowItWorks`);
    const answer = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      // Send half the body, stop the server, then send the rest: the request is in flight throughout.
      req.write(body.slice(0, 20));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(20)), 300);
      }, 300);
    });
    expect(await answer).toBe(200);
    expect(await server.exited).toBe(0);
    expect(git(gitdirOf(dir.path, 'demo/HowItWorks'), 'log', '-1', '--format=%s')).toBe('in flight\n');
    // A new connection after shutdown is refused.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });
});
