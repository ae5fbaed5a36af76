/**
 * Hostile input, tried across every endpoint: traversal and
 * injection through URL segments, file paths, key names, context items and read headers;
 * symbolic links planted in the repositories folder; tokens and values that must never leak;
 * reasons in `ETag` that must stay one clean line; deeply nested JSON and slow clients. Every
 * answer is a 4xx (or a 304 refusal), never a 5xx, and nothing changes on disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigures } from '../support/figures.js';
import { cliOk, git, gitdirOf, headOf, pushTo, startTestServer, tempDir, type TestServer } from '../support/harness.js';
import { rawRequest } from '../support/rawHttp.js';

const SECRET = 'sup3r-s3cret-value';
const PASSWORD = 'hunter2-password';
let dir: ReturnType<typeof tempDir>;
let server: TestServer;
let repos: string;
let outside: string;
let token: string;
let badInputs = 0;

beforeAll(async () => {
  dir = tempDir('cfghub-security-');
  repos = join(dir.path, 'repos');
  outside = join(dir.path, 'outside');
  mkdirSync(repos);
  cliOk(repos, 'repo', 'create', 'acme/app', '--context', 'Environment,Application', '--private');
  // A repository outside the repositories folder, and symbolic links to it from inside.
  cliOk(
    outside,
    'repo',
    'create',
    'victim/secret',
    '--context',
    'Environment,Application',
    '--token-free-push',
    '--token-free-pull',
  );
  symlinkSync(join(outside, 'victim'), join(repos, 'linked'));
  symlinkSync(join(outside, 'victim', 'secret.git'), join(repos, 'acme', 'secret.git'));
  token = cliOk(repos, 'token', 'create', 'acme/app', '--name', 'ci').trim();
  server = await startTestServer(repos, { timeouts: { headersMs: 500, requestMs: 1_000 } });
  const seeded = await pushTo(
    server.url,
    '/rest/push',
    {
      enableKeyCreation: true,
      data: [
        { key: 'db.password', values: [{ context: '*;*', value: SECRET }] },
        { file: 'conf/app.properties', context: '*;*', content: 'pw=${ db.password }\n' },
      ],
    },
    { 'Client-Token': token },
  );
  expect(seeded.status).toBe(200);
});

afterAll(async () => {
  await server.close();
  recordFigures('security', { badInputs });
  dir.remove();
});

/** Every file under a folder, with its size: what must not change. */
function snapshotOf(folder: string): string[] {
  return (readdirSync(folder, { recursive: true }) as string[]).sort().map((f) => {
    try {
      return `${f}:${readFileSync(join(folder, f)).length}`;
    } catch {
      return f; // a folder
    }
  });
}

/** Asserts a clean refusal: a 4xx JSON error (or a 304 with a clean reason), no secret, no path, no stack. */
function expectRefused(
  answer: { status: number; headers: Record<string, unknown>; body: string },
  label: string,
): void {
  badInputs++;
  expect(answer.status, `${label}: ${answer.status} ${answer.body}`).not.toBe(200);
  expect(answer.status, label).toBeLessThan(500);
  for (const text of [answer.body, String(answer.headers.etag ?? '')]) {
    expect(text, label).not.toContain(SECRET);
    expect(text, label).not.toContain(PASSWORD);
    expect(text, label).not.toContain(token);
    expect(text, label).not.toContain(dir.path);
    expect(text, label).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  }
  if (answer.status === 304) expect(String(answer.headers.etag), label).toMatch(/^"[\x20\x21\x23-\x7e]*"$/);
  else expect(answer.headers['content-type'], label).toMatch(/^application\/json/);
}

const SEGMENTS = [
  '..',
  '%2e%2e',
  '%2E%2E',
  '..%2F..',
  '..%2f..%2foutside',
  '..%5C..',
  'a%5Cb',
  '%00',
  'app%00',
  'app.git',
  'app%2Egit',
  '.git',
  '.cfghub',
  'linked',
  'secret',
  '%2Ftmp',
  '%2F%2Fetc',
  'C:%5Cwindows',
  '~root',
  '%252e%252e',
  'app%0d%0aX-Injected:%201',
  '%E0%A4%A',
  '%C0%AE%C0%AE',
  '%EF%BC%8E%EF%BC%8E',
];
const ENDPOINTS = ['push', 'pull', 'rawFile', 'info', 'keyData', 'export'];

describe('hostile account and repository segments on every endpoint', () => {
  it('never reach a repository, outside or inside, and change nothing', async () => {
    const before = [snapshotOf(repos), snapshotOf(outside)];
    for (const endpoint of ENDPOINTS) {
      for (const segment of SEGMENTS) {
        for (const path of [
          `/rest/${endpoint}/${segment}/app`,
          `/rest/${endpoint}/acme/${segment}`,
          `/rest/${endpoint}/linked/secret`,
          `/rest/${endpoint}/acme/secret`,
        ]) {
          const answer = await rawRequest(server.url, {
            method: endpoint === 'push' ? 'POST' : 'GET',
            path,
            headers: {
              'Content-Type': 'application/json',
              Context: '*;*',
              File: 'conf/app.properties',
              Key: 'db.password',
            },
            body:
              endpoint === 'push'
                ? { enableKeyCreation: true, data: [{ key: 'escaped', values: [{ context: '*;*', value: SECRET }] }] }
                : undefined,
          });
          expectRefused(answer, `${endpoint} ${path}`);
        }
      }
    }
    expect([snapshotOf(repos), snapshotOf(outside)]).toEqual(before);
    // Linked folders are not listed either.
    const listing = await (await fetch(`${server.url}/rest/info/all`)).json();
    expect(JSON.stringify(listing)).not.toMatch(/victim|secret|linked/i);
  });
});

const BODY_ATTACKS: Record<string, unknown>[] = [
  ...[
    '../x',
    '../../outside/victim/secret.git/HEAD',
    '/etc/passwd/..',
    'a/../../b',
    '..\\..\\x',
    'C:\\x',
    '.git/HEAD',
    '.GIT/config',
    'x/.git/hooks/post-update',
    'git~1/config',
    '.git./x',
    '.g\u200cit/x',
    '.gitmodules',
    'x/.gitattributes',
    'a\u0000b',
    'a\nb',
    'a\rb',
    'a\u0085b',
    '',
    '/',
    'a//b',
    './a',
    'x'.repeat(1025),
  ].map((file) => ({ file, context: '*;*', content: SECRET, password: PASSWORD })),
  ...['../x', 'a/b', 'a b', 'a\u0000', 'a\nb', 'x'.repeat(121), '', 'a;b', '${x}', 'é'].map((key) => ({
    key,
    values: [{ context: '*;*', value: SECRET }],
    password: PASSWORD,
  })),
  ...['../..;*', '*;..', 'a/b;*', 'a\\b;*', 'a\u0000;*', 'a\nb;*', '*;*;*', '*', 'a b;*', '%2e;*'].map((context) => ({
    key: 'db.password',
    values: [{ context, value: SECRET }],
  })),
  { key: 'db.password', vdt: 'Integer', values: [{ context: '*;*', value: `${SECRET}\r\nX-Injected: 1` }] },
  { key: 'db.password', opp: 'delete' }, // still referenced by the file: refused
];

describe('hostile file paths, key names and contexts in a push', () => {
  it('are refused whole, with a one-line reason that holds no value, password or path', async () => {
    const gitdir = gitdirOf(repos, 'acme/app');
    const head = headOf(repos, 'acme/app');
    for (const element of BODY_ATTACKS) {
      // A valid element first: a refusal must take it back too.
      const answer = await rawRequest(server.url, {
        path: '/rest/push',
        headers: { 'Content-Type': 'application/json', 'Client-Token': token },
        body: {
          changeComment: 'attack',
          enableKeyCreation: true,
          data: [{ key: 'innocent', values: [{ context: '*;*', value: 'x' }] }, element],
        },
      });
      expectRefused(answer, JSON.stringify(element).slice(0, 80));
      expect(headOf(repos, 'acme/app')).toBe(head);
    }
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
  });

  it('read headers cannot reach outside the repository either', async () => {
    for (const [name, value] of [
      ['File', '../../outside/victim/secret.git/HEAD'],
      ['File', '/etc/passwd'],
      ['File', '..%2F..%2Fx'],
      ['File', '.git/config'],
      ['Tag', '../heads/main'],
      ['Tag', '..'],
      ['Tag', 'a\\b'],
      ['Context', '..;..'],
      ['Context', '*;*;*;*;*;*;*;*;*;*;*'],
      ['Repository-Date', '../../x'],
      ['Key', '../x'],
    ]) {
      for (const endpoint of ['pull', 'rawFile', 'keyData']) {
        const headers: Record<string, string> = {
          'Client-Token': token,
          Context: '*;*',
          File: 'conf/app.properties',
          Key: 'db.password',
          [name]: value,
        };
        const answer = await rawRequest(server.url, { method: 'GET', path: `/rest/${endpoint}`, headers });
        if (answer.status === 200) {
          // Only a header this endpoint does not read may pass; the answer is then the repository's own.
          expect(answer.body, `${endpoint} ${name}: ${value}`).not.toMatch(/victim|root:/);
          continue;
        }
        expectRefused(answer, `${endpoint} ${name}: ${value}`);
      }
    }
  });
});

describe('tokens', () => {
  it('are in no clone, no log and no answer', async () => {
    const clone = join(dir.path, 'clone.git');
    execFileSync('git', ['clone', '--quiet', '--mirror', gitdirOf(repos, 'acme/app'), clone]);
    const hash = JSON.parse(readFileSync(join(repos, '.cfghub', 'tokens.json'), 'utf8')).tokens[0].hash as string;
    for (const needle of [token, hash]) {
      expect(() => execFileSync('grep', ['-r', '-F', '-q', needle, clone])).toThrow(); // grep finds nothing
      expect(git(clone, 'log', '--all', '--format=%B')).not.toContain(needle);
    }
    expect(server.logText()).not.toContain(token);
    expect(server.logText()).not.toContain(SECRET);
    const exported = await rawRequest(server.url, {
      method: 'GET',
      path: '/rest/export',
      headers: { 'Client-Token': token },
    });
    expect(exported.status).toBe(200);
    expect(exported.body).not.toContain(token);
  });

  it('a private repository is unreadable without its token', async () => {
    for (const endpoint of ['pull', 'rawFile', 'info', 'keyData', 'export']) {
      const answer = await rawRequest(server.url, {
        method: 'GET',
        path: `/rest/${endpoint}/acme/app`,
        headers: { Context: '*;*', File: 'conf/app.properties', Key: 'db.password' },
      });
      expectRefused(answer, endpoint);
      expect([401, 403, 404]).toContain(answer.status);
    }
  });
});

describe('bounded input', () => {
  it('answers deeply nested JSON, a 10,000-element push and a huge body without falling over', async () => {
    const deep = `{"data":[{"key":"a","values":[{"context":"*;*","value":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}]}`;
    for (const body of [
      deep,
      `{"data":${'['.repeat(50_000)}`,
      `{"changeComment":"${'x'.repeat(17 * 1024 * 1024)}","data":[]}`,
    ]) {
      const answer = await rawRequest(server.url, {
        path: '/rest/push',
        headers: { 'Content-Type': 'application/json', 'Client-Token': token },
        body,
      });
      expectRefused(answer, `${body.length} bytes`);
    }
    const many = Array.from({ length: 9_999 }, (_, i) => ({
      key: `bulk.${i}`,
      values: [{ context: '*;*', value: `v${i}` }],
    }));
    const answer = await pushTo(
      server.url,
      '/rest/push',
      { enableKeyCreation: true, data: [...many, { key: 'bad key', values: [] }] },
      { 'Client-Token': token },
    );
    expect(answer.status).toBe(304);
    badInputs++;
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('cuts off a client that sends its headers or its body too slowly, and serves others meanwhile', async () => {
    const { port } = new URL(server.url);
    const slow = (parts: string[]) =>
      new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += String(chunk)));
        socket.on('close', () => resolve(received));
        socket.on('error', () => undefined);
        let n = 0;
        const timer = setInterval(() => {
          if (socket.destroyed) return clearInterval(timer);
          if (n < parts.length) socket.write(parts[n++]);
        }, 200);
      });
    const headerDrip = slow([
      'POST /rest/push HTTP/1.1\r\n',
      'Host: x\r\n',
      ...Array.from({ length: 100 }, (_, i) => `X-Slow-${i}: y\r\n`),
    ]);
    const bodyDrip = slow([
      `POST /rest/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nClient-Token: ${token}\r\nContent-Length: 1000\r\n\r\n`,
      ...Array(100).fill('{'),
    ]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // Both connections end long before their 100 drips (20 s) would have; the server answers 408 or closes.
    for (const received of await Promise.all([headerDrip, bodyDrip])) {
      badInputs++;
      expect(received === '' || /^HTTP\/1\.1 408/.test(received), received).toBe(true);
    }
  });
});
