/**
 * `cfghub serve --config` and `--log-format pretty` as an operator runs them:
 * the real command as a child process, its settings taken from the file, and a log a person
 * can read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cliOk, getJson, tempDir } from '../../support/harness.js';

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', 'acme/served', '--context', 'Environment');
});

afterAll(() => dir.remove());

/** Starts `cfghub serve ARGS`; resolves with its URL once its log names it. */
function serve(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CFGHUB_REPOS: undefined, ...env },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const match = /http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (match) resolve({ url: match[0], child, output: () => out });
    });
    child.stderr!.on('data', (chunk) => (out += String(chunk)));
    child.once('exit', (code) => reject(new Error(`serve ended (${code}) before listening: ${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('serve --config', () => {
  it('takes its settings from the file, and a flag wins over the file', async () => {
    const file = join(dir.path, 'cfghub.yaml');
    writeFileSync(
      file,
      `repos: ${JSON.stringify(join(dir.path, 'elsewhere'))}\nport: 0\nhost: 127.0.0.1\nmetricsToken: from-the-file\n`,
    );
    const server = await serve(['--config', file, '--repos', dir.path]);
    try {
      const listing = await getJson(server.url, '/rest/info/all');
      expect(listing.json.map((r: { name: string }) => r.name)).toEqual(['served']); // --repos, not the file's
      expect((await getJson(server.url, '/metrics')).status).toBe(401); // the file's metrics token
      expect(
        (await fetch(`${server.url}/metrics`, { headers: { Authorization: 'Bearer from-the-file' } })).status,
      ).toBe(200);
    } finally {
      await stop(server.child);
    }
  });

  it('refuses a file with an unknown field, exit 2, naming it', async () => {
    const file = join(dir.path, 'bad.yaml');
    writeFileSync(file, 'prot: 8080\n');
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'serve', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += String(chunk)));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('prot');
    expect(result.stderr).not.toContain(dir.path);
  });
});

describe('serve --log-format pretty', () => {
  it('writes lines a person reads rather than JSON objects', async () => {
    const server = await serve(['--port', '0', '--repos', dir.path, '--log-format', 'pretty']);
    try {
      await getJson(server.url, '/healthz');
      const deadline = Date.now() + 5_000;
      while (!/GET|\/healthz/.test(server.output()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const lines = server.output().split('\n').filter(Boolean);
      expect(lines.some((line) => line.includes('INFO'))).toBe(true);
      expect(server.output()).toContain('/healthz');
      expect(lines.every((line) => !line.startsWith('{'))).toBe(true);
    } finally {
      await stop(server.child);
    }
  });
});
