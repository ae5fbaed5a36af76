/**
 * The `cfghub` command as a client of a server, run as a child process
 * against the real server: set/get/unset in one line each, a refused push's reason and exit 1,
 * history and diff for a terminal and as JSON, `pull --output` written atomically and kept when
 * the server is stopped, `pull --watch --exec` running its command after each change, and
 * `--help` with an example on every command.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLI,
  cliOk,
  createRepo,
  pushTo,
  startTestServer,
  tempDir,
  TOKEN_FREE,
  type TestServer,
} from '../../support/harness.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/app';
let dir: ReturnType<typeof tempDir>;
let server: TestServer;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built command without blocking this process (the server under test runs in it). */
function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, CFGHUB_SERVER: server.url, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');

beforeAll(async () => {
  dir = tempDir();
  createRepo(dir.path, REPO, 'Environment,Application,Instance', ...TOKEN_FREE);
  server = await startTestServer(dir.path);
});

afterAll(async () => {
  await server?.close();
  dir?.remove();
});

describe('set, get, unset', () => {
  it('change and read one key in one line each; a refused push prints its reason and exits 1', async () => {
    const set = await run([
      'set',
      REPO,
      'db.port',
      '5432',
      '--context',
      '*;*;*',
      '--type',
      'Integer',
      '-m',
      'the port',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout.trim()).toMatch(/^[0-9a-f]{40}$/);
    await run(['set', REPO, 'db.port', '6543', '--context', 'Production;*;*', '-m', 'prod port']);
    expect((await run(['get', REPO, 'db.port', '--context', 'Production;web;node1'])).stdout).toBe('6543\n');
    expect((await run(['get', REPO, 'db.port', '--context', 'Development;web;node1'])).stdout).toBe('5432\n');
    expect((await run(['get', REPO, 'db.port', '--all'])).stdout).toBe('*;*;*\t5432\nProduction;*;*\t6543\n');

    const refused = await run(['set', REPO, 'db.port', 'lots', '--context', '*;*;*', '-m', 'bad']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('cfghub: push refused: data[0].values[0] key db.port: value is not an Integer\n');

    const unset = await run(['unset', REPO, 'db.port', '--context', 'Production;*;*', '-m', 'back to default']);
    expect(unset.code, unset.stderr).toBe(0);
    expect((await run(['get', REPO, 'db.port', '--context', 'Production;web;node1'])).stdout).toBe('5432\n');
  });

  it('take the token from CFGHUB_TOKEN, and say clearly when no server is given', async () => {
    const token = cliOk(dir.path, 'token', 'create', REPO, '--name', 'cli').trim();
    const ok = await run(['get', REPO, 'db.port', '--context', 'Production;web;node1'], { CFGHUB_TOKEN: token });
    expect(ok.stdout).toBe('5432\n');
    const wrong = await run(['get', REPO, 'db.port', '--context', 'Production;web;node1'], {
      CFGHUB_TOKEN: 'not-a-token',
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('(401 unauthorized)');
    const none = await run(['get', REPO, 'db.port', '--context', 'a;b;c'], { CFGHUB_SERVER: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('cfghub: no server: pass --server URL or set CFGHUB_SERVER\n');
  });
});

describe('history and diff', () => {
  it('are formatted for a terminal, and JSON with --json', async () => {
    const history = await run(['history', REPO, '--key', 'db.port']);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain('    back to default\n');
    expect(history.stdout).toContain('    ~ key db.port  -Production;*;*\n');
    const json = JSON.parse((await run(['history', REPO, '--key', 'db.port', '--json'])).stdout);
    expect(json.commits.map((c: { comment: string }) => c.comment)).toEqual([
      'back to default',
      'prod port',
      'the port',
    ]);
    const first = json.commits[2].id;
    const diff = await run(['diff', REPO, first, '--context', 'Production;web;node1']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain(`from ${first}`);
    expect(diff.stdout).toContain('resolved for Production;web;node1:\n  nothing this context sees changed');
    const diffJson = JSON.parse(
      (await run(['diff', REPO, json.commits[2].id, json.commits[1].id, '--context', 'Production;web;node1', '--json']))
        .stdout,
    );
    expect(diffJson.resolved.properties.changed['db.port']).toBeDefined();
  });
});

describe('pull --output', () => {
  it('writes the file atomically, and keeps the last good copy when the server is stopped, saying so', async () => {
    const output = join(dir.path, 'app.env');
    const first = await run([
      'pull',
      REPO,
      '--context',
      'Production;web;node1',
      '--format',
      'properties',
      '--output',
      output,
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(read(output)).toBe('db.port=5432\n');
    expect(statSync(output).mode & 0o777).toBe(0o600); // configuration may hold secrets
    expect(readdirSync(dir.path).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const port = Number(new URL(server.url).port);
    await server.close();
    try {
      const away = await run([
        'pull',
        REPO,
        '--context',
        'Production;web;node1',
        '--format',
        'properties',
        '--output',
        output,
      ]);
      expect(away.code).toBe(1);
      expect(away.stderr).toMatch(
        /^cfghub: cannot reach http:\/\/127\.0\.0\.1:\d+: .*; keeping the last good copy in .*app\.env\n$/,
      );
      expect(read(output)).toBe('db.port=5432\n');
    } finally {
      server = await startTestServer(dir.path, { port });
    }
  });
});

describe('pull --watch --exec', () => {
  it('rewrites the file on each change of its context and runs the command after each write', async () => {
    const output = join(dir.path, 'watched.env');
    const log = join(dir.path, 'exec.log');
    const child: ChildProcess = spawn(
      process.execPath,
      [
        CLI,
        'pull',
        REPO,
        '--context',
        'Production;web;node1',
        '--format',
        'properties',
        '--output',
        output,
        '--watch',
        '--exec',
        `cat "${output}" >> "${log}"`,
      ],
      { env: { ...process.env, CFGHUB_SERVER: server.url }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => read(log) === 'db.port=5432\n', 'the first write and command');
      const set = async (value: string, context: string) =>
        expect(
          (
            await pushTo(server.url, `/rest/push/${REPO}`, {
              changeComment: 'watch',
              data: [{ key: 'db.port', values: [{ context, value }] }],
            })
          ).status,
        ).toBe(200);
      // A change of another context writes nothing; the next change of this one is written next.
      await set('7000', 'Development;*;*');
      await set('7001', 'Production;*;*');
      await until(() => read(log) === 'db.port=5432\ndb.port=7001\n', 'the second write and command');
      expect(read(output)).toBe('db.port=7001\n');
      await set('7002', 'Production;web;*');
      await until(() => read(log).endsWith('db.port=7002\n'), 'the third write and command');
      expect(read(log)).toBe('db.port=5432\ndb.port=7001\ndb.port=7002\n');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toContain('wrote');

    // Started again with the copy on disk current: no write and no command until the next change.
    const secondLog = join(dir.path, 'exec2.log');
    const pulls = () => server.logs.filter((line) => line.path === `/rest/pull/${REPO}`).length;
    const pullsBefore = pulls();
    const again: ChildProcess = spawn(
      process.execPath,
      [
        CLI,
        'pull',
        REPO,
        '--context',
        'Production;web;node1',
        '--format',
        'properties',
        '--output',
        output,
        '--watch',
        '--exec',
        `cat "${output}" >> "${secondLog}"`,
      ],
      { env: { ...process.env, CFGHUB_SERVER: server.url }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let againErr = '';
    again.stderr!.on('data', (chunk) => (againErr += String(chunk)));
    const againExited = new Promise<number | null>((resolve) => again.on('exit', (code) => resolve(code)));
    try {
      // Its first pull answered (the current state, already on disk), then the change.
      await until(() => pulls() > pullsBefore, 'the first pull of the second watch');
      const pushed = await pushTo(server.url, `/rest/push/${REPO}`, {
        changeComment: 'watch',
        data: [{ key: 'db.port', values: [{ context: 'Production;web;*', value: '7003' }] }],
      });
      expect(pushed.status).toBe(200);
      await until(() => read(secondLog) !== '', 'the command after the change');
      expect(read(secondLog)).toBe('db.port=7003\n');
      expect(againErr.match(/wrote/g)).toHaveLength(1);
    } finally {
      again.kill('SIGTERM');
    }
    expect(await againExited).toBe(0);
  });
});

describe('--help', () => {
  it('shows an example for every client command', async () => {
    for (const command of ['pull', 'get', 'set', 'unset', 'push', 'history', 'diff']) {
      const help = await run([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`Examples?:\\n  \\$ (CFGHUB_SERVER=\\S+ )?cfghub ${command} `));
      expect(help.stdout, command).toContain('--server <url>');
    }
  });
});
