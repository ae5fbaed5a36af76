/**
 * Clone and fetch over HTTP (deliverable 1) with the stock git client: protocol v2,
 * fetch after a REST push, a push without a token challenged, the pull access rules through HTTP Basic, no traversal,
 * gzip request bodies, and a clear 503 when git is missing.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitAsync } from '../../support/gitCli.js';
import { cliOk, headOf, pushTo, serverForFile, tempDir } from '../../support/harness.js';
import { rawRequest } from '../../support/rawHttp.js';
import { until } from '../../support/poll.js';

const OPEN = 'acme/open'; // token-free pull
const CLOSED = 'acme/closed'; // needs a token
const SECRET = 'acme/secret'; // private, token-free pull on: still needs its own token

const fixture = serverForFile();
const tokens: Record<string, string> = {};

/** The real git CLI with no user or system configuration and no prompts, in the test's folder. */
const gitRun = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  gitAsync(args, { cwd: options.cwd ?? fixture.repos, env: options.env });

async function gitOk(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const result = await gitRun(args, options);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const urlOf = (fullName: string) => `${fixture.server.url}/git/${fullName}.git`;
/** The value of an `Authorization` header giving a token as the password. */
const basicValue = (password: string, user = 'anyone') =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
/** A clone URL carrying a token as its password. */
function withCredential(url: string, token: string): string {
  const withUser = new URL(url);
  withUser.username = 'ci';
  withUser.password = token;
  return withUser.href;
}
/** The same as a header line, for `git -c http.extraHeader=…`. */
const basic = (password: string) => `Authorization: ${basicValue(password)}`;

function push(fullName: string, key: string, value: string) {
  return pushTo(
    fixture.server.url,
    `/rest/push/${fullName}`,
    {
      changeComment: `set ${key}`,
      enableKeyCreation: true,
      data: [
        { key, values: [{ context: '*;*', value }] },
        { file: `conf/${key}.txt`, context: '*;*', content: `${key}=${value}\n` },
      ],
    },
    { 'Client-Token': tokens[fullName] },
  );
}

/** Every file under a folder, recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((name) => join(folder, name))
    .filter((path) => statSync(path).isFile());
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', OPEN, '--context', 'Env,App', '--token-free-pull');
  cliOk(fixture.repos, 'repo', 'create', CLOSED, '--context', 'Env,App');
  cliOk(fixture.repos, 'repo', 'create', SECRET, '--context', 'Env,App', '--private', '--token-free-pull');
  for (const name of [OPEN, CLOSED, SECRET]) tokens[name] = cliOk(fixture.repos, 'token', 'create', name).trim();
  for (const name of [OPEN, CLOSED, SECRET]) expect((await push(name, 'db.host', 'one')).status).toBe(200);
});

describe('git clone and fetch over HTTP', () => {
  it('clones with protocol v2, then fetches and pulls a change pushed through the REST API', async () => {
    const trace = await gitRun(['-c', 'protocol.version=2', 'clone', urlOf(OPEN), 'open'], {
      env: { GIT_TRACE_PACKET: '1' },
    });
    expect(trace.code, trace.stderr).toBe(0);
    expect(trace.stderr).toMatch(/git< version 2/);
    const clone = join(fixture.repos, 'open');
    expect(readFileSync(join(clone, 'files', '_;_', 'conf', 'db.host.txt'), 'utf8')).toBe('db.host=one\n');
    expect((await gitOk(['rev-parse', 'HEAD'], { cwd: clone })).trim()).toBe(headOf(fixture.repos, OPEN));

    expect((await push(OPEN, 'db.port', '5432')).status).toBe(200);
    const fetched = await gitRun(['-c', 'protocol.version=2', 'fetch'], { cwd: clone, env: { GIT_TRACE_PACKET: '1' } });
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stderr).toMatch(/git< version 2/);
    expect((await gitOk(['rev-parse', 'origin/main'], { cwd: clone })).trim()).toBe(headOf(fixture.repos, OPEN));
    await gitOk(['pull', '--ff-only'], { cwd: clone });
    expect(readFileSync(join(clone, 'files', '_;_', 'conf', 'db.port.txt'), 'utf8')).toBe('db.port=5432\n');
    expect((await gitOk(['log', '-1', '--format=%s'], { cwd: clone })).trim()).toBe('set db.port');
    await fixture.server.settle(OPEN);
    expect((await gitRun(['fsck', '--strict'], { cwd: clone })).code).toBe(0);
  });

  it('also serves the address without .git and protocol v0', async () => {
    const cloned = await gitRun([
      '-c',
      'protocol.version=0',
      'clone',
      '--bare',
      `${fixture.server.url}/git/${OPEN}`,
      'open-v0.git',
    ]);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect((await gitOk(['--git-dir', join(fixture.repos, 'open-v0.git'), 'rev-parse', 'main'])).trim()).toBe(
      headOf(fixture.repos, OPEN),
    );
  });

  it('asks a push without a token for one (401 with a Basic challenge): the clone address alone never writes', async () => {
    const clone = join(fixture.repos, 'open-push');
    await gitOk(['clone', urlOf(OPEN), clone]);
    await gitOk(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--allow-empty', '-m', 'sneaky'], {
      cwd: clone,
    });
    const pushed = await gitRun(['push', 'origin', 'HEAD:main'], { cwd: clone });
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/could not read Username|Authentication failed/);
    expect((await gitOk(['log', '-1', '--format=%s'], { cwd: clone })).trim()).toBe('sneaky');
    expect(headOf(fixture.repos, OPEN)).not.toBe((await gitOk(['rev-parse', 'HEAD'], { cwd: clone })).trim());

    const advertisement = await rawRequest(fixture.server.url, {
      method: 'GET',
      path: `/git/${OPEN}.git/info/refs?service=git-receive-pack`,
    });
    expect(advertisement.status).toBe(401);
    expect(advertisement.headers['www-authenticate']).toBe('Basic realm="cfghub"');
    const post = await rawRequest(fixture.server.url, {
      path: `/git/${OPEN}.git/git-receive-pack`,
      headers: { 'Content-Type': 'application/x-git-receive-pack-request' },
      body: '0000',
    });
    expect(post.status).toBe(401);
    expect(post.body).toMatch(/does not allow push without a Client-Token/);
  });

  it('asks for a token for a private repository and one without token-free pull: 401 with a Basic challenge', async () => {
    for (const name of [SECRET, CLOSED]) {
      const anonymous = await rawRequest(fixture.server.url, {
        method: 'GET',
        path: `/git/${name}.git/info/refs?service=git-upload-pack`,
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['www-authenticate']).toBe('Basic realm="cfghub"');
      const cloned = await gitRun(['clone', urlOf(name), `anonymous-${name.split('/')[1]}`]);
      expect(cloned.code).not.toBe(0);
      expect(cloned.stderr).toMatch(/could not read Username|Authentication failed/);
    }
  });

  it('refuses a wrong token, an unknown one and a token of another repository with 401', async () => {
    for (const wrong of [tokens[OPEN], `cfg_${'A'.repeat(43)}`, 'not-a-token']) {
      const answer = await rawRequest(fixture.server.url, {
        method: 'GET',
        path: `/git/${SECRET}.git/info/refs?service=git-upload-pack`,
        headers: { Authorization: basicValue(wrong) },
      });
      expect(answer.status).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Basic realm="cfghub"');
      const cloned = await gitRun(['clone', withCredential(urlOf(SECRET), wrong), 'wrong-secret']);
      expect(cloned.code).not.toBe(0);
      expect(cloned.stderr).toMatch(/Authentication failed/);
    }
  });

  it('clones a private repository with its own token as the password, and the clone holds no token or hash', async () => {
    const cloned = await gitRun(['-c', `http.extraHeader=${basic(tokens[SECRET])}`, 'clone', urlOf(SECRET), 'secret']);
    expect(cloned.code, cloned.stderr).toBe(0);
    const clone = join(fixture.repos, 'secret');
    expect((await gitOk(['rev-parse', 'HEAD'], { cwd: clone })).trim()).toBe(headOf(fixture.repos, SECRET));

    expect(
      (await gitRun(['clone', '--bare', withCredential(urlOf(SECRET), tokens[SECRET]), 'secret-url.git'])).code,
    ).toBe(0);

    const tokenFile = readFileSync(join(fixture.repos, '.cfghub', 'tokens.json'), 'utf8');
    const hashes = [...tokenFile.matchAll(/"hash":\s*"([0-9a-f]{64})"/g)].map((m) => m[1]);
    expect(hashes).toHaveLength(3);
    for (const file of filesUnder(clone)) {
      const text = readFileSync(file).toString('latin1');
      expect(text).not.toContain(tokens[SECRET]);
      for (const hash of hashes) expect(text, file).not.toContain(hash);
    }
  });

  it('never reaches outside the repositories folder', async () => {
    const outside = tempDir('cfghub-outside-');
    await gitOk(['init', '--quiet', '--bare', join(outside.path, 'x.git')]);
    symlinkSync(join(outside.path, 'x.git'), join(fixture.repos, 'acme', 'linked.git'));
    try {
      const paths = [
        `/git/acme/../acme/open.git/info/refs?service=git-upload-pack`,
        `/git/acme/open.git/../../acme/open.git/info/refs?service=git-upload-pack`,
        `/git/%2e%2e/acme/open.git/info/refs?service=git-upload-pack`,
        `/git/acme/%2e%2e%2fopen.git/info/refs?service=git-upload-pack`,
        `/git/acme/..%2F..%2Fetc.git/info/refs?service=git-upload-pack`,
        `/git/acme/open.git%2F..%2F..%2Fclosed.git/info/refs?service=git-upload-pack`,
        `/git/acme\\..\\closed.git/info/refs?service=git-upload-pack`,
        `/git/acme//open.git/info/refs?service=git-upload-pack`,
        `/git/acme/linked.git/info/refs?service=git-upload-pack`,
        `/git/acme/open.git/HEAD`,
        `/git/acme/open.git/objects/info/packs`,
        `/git/acme/open.git/config`,
      ];
      for (const path of paths) {
        const answer = await rawRequest(fixture.server.url, { method: 'GET', path });
        expect([400, 404], path).toContain(answer.status);
        expect(answer.body, path).not.toContain(fixture.repos);
      }
      const dumb = await rawRequest(fixture.server.url, { method: 'GET', path: `/git/${OPEN}.git/info/refs` });
      expect(dumb.status).toBe(403);
      const unknown = await rawRequest(fixture.server.url, {
        method: 'GET',
        path: `/git/acme/nothing.git/info/refs?service=git-upload-pack`,
      });
      expect(unknown.status).toBe(404);
      expect((await gitRun(['clone', `${fixture.server.url}/git/acme/linked.git`, 'linked'])).code).not.toBe(0);
    } finally {
      outside.remove();
    }
  });

  it('finds a repository without regard to case, as the REST API does', async () => {
    const cloned = await gitRun(['clone', '--bare', `${fixture.server.url}/git/ACME/Open.git`, 'open-case.git']);
    expect(cloned.code, cloned.stderr).toBe(0);
  });

  it('passes a gzip request body to git, which inflates it', async () => {
    const head = headOf(fixture.repos, OPEN);
    const pkt = (text: string) => `${(text.length + 4).toString(16).padStart(4, '0')}${text}`;
    const body = gzipSync(Buffer.from(`${pkt(`want ${head}\n`)}0000${pkt('done\n')}`));
    const answer = await rawRequest(fixture.server.url, {
      path: `/git/${OPEN}.git/git-upload-pack`,
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Content-Encoding': 'gzip' },
      body,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/x-git-upload-pack-result');
    expect(answer.body).toContain('PACK');
  });

  it('stops git when the client goes away mid-request', async () => {
    const backends = () =>
      execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.trim() === 'git http-backend').length;
    const url = new URL(fixture.server.url);
    const req = request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: `/git/${OPEN}.git/git-upload-pack`,
      headers: { 'Content-Type': 'application/x-git-upload-pack-request', 'Transfer-Encoding': 'chunked' },
    });
    req.on('error', () => undefined);
    req.write('0032want '); // and never the rest: git waits for it
    await until(() => backends() === 1, 'one git http-backend running', 20_000);
    req.destroy();
    await until(() => backends() === 0, 'no git http-backend running', 20_000);
    expect(backends()).toBe(0);
  });

  it('answers 503 "git is not installed" when git is not on the PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = join(fixture.repos, 'no-such-folder');
    try {
      const answer = await rawRequest(fixture.server.url, {
        method: 'GET',
        path: `/git/${OPEN}.git/info/refs?service=git-upload-pack`,
      });
      expect(answer.status).toBe(503);
      expect(answer.body).toMatch(/git is not installed/);
    } finally {
      process.env.PATH = path;
    }
    const after = await rawRequest(fixture.server.url, {
      method: 'GET',
      path: `/git/${OPEN}.git/info/refs?service=git-upload-pack`,
    });
    expect(after.status).toBe(200);
  });
});
