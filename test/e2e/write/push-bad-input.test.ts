/**
 * Every way a push is answered with a 4xx: malformed bodies (400,
 * with the JSON path of each problem), wrong Content-Type (415), sizes over the limits (413),
 * Client-Version, URL traversal, tokens (401, 403), unknown repositories (404) and If-Match. Each
 * answer is a JSON `{error, message}` without a stack trace or a filesystem path, and no
 * repository moves. The real server on loopback, real bare repositories, checked with git.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { keyPath } from '../../../src/layout/layout.js';
import {
  cli,
  cliOk,
  commitCount,
  git,
  gitdirOf,
  headOf,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';
import { rawRequest, type RawAnswer } from '../../support/rawHttp.js';

const APP = 'acme/app';
const LOCKED = 'acme/locked';
const OTHER = 'other/repo';
const ALL_REPOS = [APP, LOCKED, OTHER];
const ANY = '*;*;*';
const LEVELS = 'Environment,Application,Instance';
const SECRET_VALUE = 's3cr3t-value-123';

let base: ReturnType<typeof tempDir>;
let repos: string;
let server: TestServer;
/** The same repositories, served with a 1,024-byte body limit. */
let small: TestServer;
let appToken: string;
let lockedToken: string;
let otherToken: string;
let doomedToken: string;
let expiringToken: string;
let briefToken: string;
/** Every token this file presents, known or not: none may ever reach the log. */
const presentedTokens: string[] = [];

type Headers = Record<string, string | undefined>;

/** POSTs with Content-Type application/json unless `headers` says otherwise (undefined removes a header). */
function post(path: string, body: unknown, headers: Headers = {}, on: TestServer = server): Promise<RawAnswer> {
  const merged: Headers = { 'Content-Type': 'application/json', ...headers };
  const sent = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return rawRequest(on.url, { path, body, headers: sent });
}

const toApp = (body: unknown, headers: Headers = {}) => post(`/rest/push/${APP}`, body, headers);

/** The head of every repository, and the commit count of acme/app (the one most tests push to). */
function states(): Record<string, string | number> {
  return { ...Object.fromEntries(ALL_REPOS.map((r) => [r, headOf(repos, r)])), count: commitCount(repos, APP) };
}

/** Runs `act` and expects no repository to have moved. */
async function unchanged<T>(act: () => Promise<T>): Promise<T> {
  const before = states();
  const result = await act();
  expect(states()).toEqual(before);
  return result;
}

/** A JSON error answer of the contract: status, `{error, message[, details]}`, nothing internal. */
function expectError(answer: RawAnswer, status: number): any {
  expect(answer.status, answer.body).toBe(status);
  expect(String(answer.headers['content-type'])).toMatch(/^application\/json\b/);
  const json = answer.json;
  expect(json, answer.body).toBeTypeOf('object');
  expect(json).not.toBeNull();
  expect(Array.isArray(json)).toBe(false);
  expect(json.error).toMatch(/^[a-z][a-z_]*$/);
  expect(json.message).toBeTypeOf('string');
  expect(json.message.length).toBeGreaterThan(0);
  expect(
    Object.keys(json).every((k) => ['error', 'message', 'details'].includes(k)),
    answer.body,
  ).toBe(true);
  expectNothingInternal(answer.body);
  return json;
}

function expectNothingInternal(body: string): void {
  expect(body).not.toContain(base.path);
  expect(body).not.toContain(repos);
  expect(body).not.toContain(resolve('.'));
  expect(body).not.toMatch(/(^|\\n|\n)\s*at \S/);
  expect(body).not.toMatch(/\(\S+:\d+:\d+\)/);
  expect(body).not.toMatch(/\.(ts|js):\d+/);
  expect(body).not.toContain('node_modules');
  expect(body).not.toMatch(/\/tmp\/|\/home\/|\/work\//);
}

/** Expects a 400 whose details name `path` (exactly, as a JSON path). */
function expectShapeError(answer: RawAnswer, ...paths: string[]): void {
  const json = expectError(answer, 400);
  expect(Array.isArray(json.details), answer.body).toBe(true);
  for (const detail of json.details) {
    expect(detail.path).toBeTypeOf('string');
    expect(detail.message).toBeTypeOf('string');
  }
  const named = json.details.map((d: { path: string }) => d.path);
  for (const path of paths) expect(named, answer.body).toContain(path);
}

function keyAtHead(name: string, repo = APP): any {
  let text: string;
  try {
    // Not the harness's keyDocument: a key holding a 1 MiB value is larger than execFileSync's default buffer.
    text = execFileSync('git', ['--git-dir', gitdirOf(repos, repo), 'show', `refs/heads/main:${keyPath(name)}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return null;
  }
  return YAML.parse(text);
}

function storedValue(name: string, context = ANY): string | null | undefined {
  return keyAtHead(name)?.values.find((v: { context: string }) => v.context === context)?.value;
}

function fileAtHead(path: string, contextFolder = '_;_;_'): string | null {
  try {
    return git(gitdirOf(repos, APP), 'show', `refs/heads/main:files/${contextFolder}/${path}`);
  } catch {
    return null;
  }
}

function isoSeconds(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Every name under a folder, recursively (folders end with `/`); `.git` internals left out. */
function listing(root: string): string[] {
  const out: string[] = [];
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const name = `${prefix}${entry.name}`;
      if (entry.isDirectory()) {
        out.push(`${name}/`);
        if (!entry.name.endsWith('.git')) walk(join(folder, entry.name), `${name}/`);
      } else {
        out.push(name);
      }
    }
  };
  walk(root, '');
  return out.sort();
}

beforeAll(async () => {
  base = tempDir();
  repos = join(base.path, 'repos');
  mkdirSync(repos);
  cliOk(repos, 'repo', 'create', APP, '--context', LEVELS, '--token-free-push');
  cliOk(repos, 'repo', 'create', LOCKED, '--context', LEVELS);
  cliOk(repos, 'repo', 'create', OTHER, '--context', LEVELS, '--token-free-push');
  appToken = cliOk(repos, 'token', 'create', APP, '--name', 'ci').trim();
  lockedToken = cliOk(repos, 'token', 'create', LOCKED, '--name', 'ci').trim();
  otherToken = cliOk(repos, 'token', 'create', OTHER, '--name', 'ci').trim();
  doomedToken = cliOk(repos, 'token', 'create', APP, '--name', 'doomed').trim();
  // An expiry an hour away, for the use before it: however slow the machine, it has not passed.
  // The brief one is for the use after its expiry, which the last test waits for.
  expiringToken = cliOk(
    repos,
    'token',
    'create',
    APP,
    '--name',
    'expiring',
    '--expires',
    isoSeconds(Date.now() + 3_600_000),
  ).trim();
  briefToken = cliOk(
    repos,
    'token',
    'create',
    APP,
    '--name',
    'brief',
    '--expires',
    isoSeconds(Date.now() + 5000),
  ).trim();
  presentedTokens.push(appToken, lockedToken, otherToken, doomedToken, expiringToken, briefToken);
  server = await startTestServer(repos);
  small = await startTestServer(repos, { bodyLimit: 1024 });
  const seeded = await toApp({
    changeComment: 'seed',
    enableKeyCreation: true,
    data: [
      {
        key: 'seed.key',
        values: [
          { context: ANY, value: 'global' },
          { context: 'Prod;*;*', value: 'prod' },
        ],
      },
      { file: 'seed/file.txt', context: ANY, content: 'seed' },
    ],
  });
  expect(seeded.status).toBe(200);
});

afterAll(async () => {
  await small?.close();
  await server?.close();
  base?.remove();
});

describe('a token with an expiry', () => {
  it('works before it expires', async () => {
    const answer = await post('/rest/push', { data: [] }, { 'Client-Token': expiringToken });
    expect(answer.status, answer.body).toBe(200);
  });
});

describe('a body that is not a push object', () => {
  it.each([
    { name: 'not JSON', body: '{"data": [' },
    { name: 'empty', body: '' },
    { name: 'JSON with a trailing comma', body: '{"data": [],}' },
    { name: 'two JSON documents', body: '{"data": []} {"data": []}' },
  ])('answers 400 to a body that is $name', async ({ body }) => {
    const answer = await unchanged(() => toApp(body));
    expectError(answer, 400);
  });

  it.each([
    { name: 'an array', body: '[]' },
    { name: 'a string', body: '"data"' },
    { name: 'null', body: 'null' },
    { name: 'a number', body: '42' },
  ])('answers 400 to JSON that is $name, not an object', async ({ body }) => {
    const answer = await unchanged(() => toApp(body));
    expectError(answer, 400);
  });

  it('answers 400 naming data when data is missing or not an array', async () => {
    expectShapeError(await unchanged(() => toApp({ changeComment: 'no data' })), 'data');
    expectShapeError(await unchanged(() => toApp({ data: { key: 'seed.key' } })), 'data');
    expectShapeError(await unchanged(() => toApp({ data: 'seed.key' })), 'data');
    expectShapeError(await unchanged(() => toApp({ data: null })), 'data');
  });

  it('answers 400 naming an element that is not an object', async () => {
    expectShapeError(await unchanged(() => toApp({ data: [{ key: 'seed.key' }, 7] })), 'data[1]');
    expectShapeError(await unchanged(() => toApp({ data: [[]] })), 'data[0]');
  });
});

describe('fields of the wrong type', () => {
  it.each([
    { name: 'changeComment a number', body: { changeComment: 5, data: [] }, path: 'changeComment' },
    { name: 'enableKeyCreation "yes"', body: { enableKeyCreation: 'yes', data: [] }, path: 'enableKeyCreation' },
    { name: 'enableKeyCreation 1', body: { enableKeyCreation: 1, data: [] }, path: 'enableKeyCreation' },
    { name: 'key a number', body: { data: [{ key: 5, values: [] }] }, path: 'data[0].key' },
    { name: 'values a string', body: { data: [{ key: 'seed.key', values: 'x' }] }, path: 'data[0].values' },
    { name: 'readme a number', body: { data: [{ key: 'seed.key', readme: 1 }] }, path: 'data[0].readme' },
    {
      name: 'deprecated "maybe"',
      body: { data: [{ key: 'seed.key', deprecated: 'maybe' }] },
      path: 'data[0].deprecated',
    },
    { name: 'push "TRUE"', body: { data: [{ key: 'seed.key', push: 'TRUE' }] }, path: 'data[0].push' },
    { name: 'vdt a number', body: { data: [{ key: 'seed.key', vdt: 3 }] }, path: 'data[0].vdt' },
    {
      name: 'a value context a number',
      body: { data: [{ key: 'seed.key' }, { key: 'seed.key', values: [{ context: 5, value: 'x' }] }] },
      path: 'data[1].values[0].context',
    },
    {
      name: 'a value active "no"',
      body: { data: [{ key: 'seed.key', values: [{ context: ANY, value: 'x', active: 'no' }] }] },
      path: 'data[0].values[0].active',
    },
    {
      name: 'a value element a string',
      body: { data: [{ key: 'seed.key', values: ['x'] }] },
      path: 'data[0].values[0]',
    },
    { name: 'file a number', body: { data: [{ file: 5, context: ANY }] }, path: 'data[0].file' },
    {
      name: 'file content a number',
      body: { data: [{ file: 'a.txt', context: ANY, content: 5 }] },
      path: 'data[0].content',
    },
    {
      name: 'file context an array',
      body: { data: [{ file: 'a.txt', context: ['*', '*', '*'], content: 'x' }] },
      path: 'data[0].context',
    },
  ])('answers 400 with the JSON path when $name', async ({ body, path }) => {
    expectShapeError(await unchanged(() => toApp(body)), path);
  });

  it('names every problem of the body, each with its JSON path', async () => {
    const answer = await unchanged(() =>
      toApp({
        data: [
          { key: 'seed.key', values: [{ context: ANY, value: 'ok' }] },
          { key: 'seed.key', values: [{ context: 1, value: 'x' }] },
          { file: 'a.txt', context: ANY, content: false },
        ],
      }),
    );
    expectShapeError(answer, 'data[1].values[0].context', 'data[2].content');
  });
});

describe('unknown fields', () => {
  it('answers 400 to an unknown field at the top level', async () => {
    expectShapeError(await unchanged(() => toApp({ enableKeyCreations: true, data: [] })), 'enableKeyCreations');
  });

  it('answers 400 to a mistyped opp on a key, and the key is not touched', async () => {
    expectShapeError(await unchanged(() => toApp({ data: [{ key: 'seed.key', opps: 'delete' }] })), 'data[0].opps');
    expectShapeError(await unchanged(() => toApp({ data: [{ key: 'seed.key', Opp: 'delete' }] })), 'data[0].Opp');
    expect(keyAtHead('seed.key')).not.toBeNull();
  });

  it('answers 400 to a mistyped opp on a value, and the value is not touched', async () => {
    expectShapeError(
      await unchanged(() => toApp({ data: [{ key: 'seed.key', values: [{ context: 'Prod;*;*', opps: 'delete' }] }] })),
      'data[0].values[0].opps',
    );
    expect(storedValue('seed.key', 'Prod;*;*')).toBe('prod');
  });

  it('answers 400 to an unknown field on a value element', async () => {
    expectShapeError(
      await unchanged(() =>
        toApp({
          data: [
            {
              key: 'seed.key',
              values: [
                { context: ANY, value: 'x' },
                { context: ANY, vale: 'x' },
              ],
            },
          ],
        }),
      ),
      'data[0].values[1].vale',
    );
  });

  it('answers 400 to an unknown field on a file element, and the file is not touched', async () => {
    expectShapeError(
      await unchanged(() => toApp({ data: [{ file: 'seed/file.txt', context: ANY, opps: 'delete' }] })),
      'data[0].opps',
    );
    expectShapeError(
      await unchanged(() => toApp({ data: [{ file: 'seed/file.txt', context: ANY, contents: 'x' }] })),
      'data[0].contents',
    );
    expect(fileAtHead('seed/file.txt')).toBe('seed');
  });

  it('answers 400 to an opp other than "delete", at every level', async () => {
    expectShapeError(await unchanged(() => toApp({ data: [{ key: 'seed.key', opp: 'remove' }] })), 'data[0].opp');
    expectShapeError(await unchanged(() => toApp({ data: [{ key: 'seed.key', opp: 'DELETE' }] })), 'data[0].opp');
    expectShapeError(
      await unchanged(() => toApp({ data: [{ key: 'seed.key', values: [{ context: ANY, opp: 'remove' }] }] })),
      'data[0].values[0].opp',
    );
    expectShapeError(
      await unchanged(() => toApp({ data: [{ file: 'seed/file.txt', context: ANY, opp: 'remove' }] })),
      'data[0].opp',
    );
    expect(keyAtHead('seed.key').values).toHaveLength(2);
    expect(fileAtHead('seed/file.txt')).toBe('seed');
  });
});

describe('key or file', () => {
  it('answers 400 to an element with both key and file', async () => {
    expectShapeError(
      await unchanged(() => toApp({ data: [{ key: 'seed.key', file: 'seed/file.txt', context: ANY }] })),
      'data[0]',
    );
  });

  it('answers 400 to an element with neither key nor file', async () => {
    expectShapeError(
      await unchanged(() => toApp({ data: [{ key: 'seed.key' }, { values: [{ context: ANY, value: 'x' }] }] })),
      'data[1]',
    );
    expectShapeError(await unchanged(() => toApp({ data: [{}] })), 'data[0]');
  });
});

describe('the forms the ConfigHub client sends', () => {
  it('accepts booleans sent as the strings "true" and "false"', async () => {
    const answer = await toApp({
      enableKeyCreation: 'true',
      data: [
        {
          key: 'string.flags',
          deprecated: 'true',
          push: 'true',
          values: [{ context: ANY, value: 'v', active: 'false' }],
        },
      ],
    });
    expect(answer.status, answer.body).toBe(200);
    expect(keyAtHead('string.flags')).toMatchObject({
      deprecated: true,
      push: true,
      values: [{ context: ANY, value: 'v', active: false }],
    });
    const off = await unchanged(() =>
      toApp({
        enableKeyCreation: 'false',
        data: [{ key: 'string.flags.off', values: [{ context: ANY, value: 'v' }] }],
      }),
    );
    // "false" is false: the key may not be created.
    expect(off.status).toBe(304);
    expect(keyAtHead('string.flags.off')).toBeNull();
  });

  it('accepts values as a single object in the delete form, and deletes that value', async () => {
    const before = commitCount(repos, APP);
    const answer = await toApp({ data: [{ key: 'seed.key', values: { context: 'Prod;*;*', opp: 'delete' } }] });
    expect(answer.status, answer.body).toBe(200);
    expect(commitCount(repos, APP)).toBe(before + 1);
    expect(storedValue('seed.key', 'Prod;*;*')).toBeUndefined();
    expect(storedValue('seed.key')).toBe('global');
  });

  it('answers 400 to values as a single object without opp delete', async () => {
    expectShapeError(
      await unchanged(() => toApp({ data: [{ key: 'seed.key', values: { context: ANY, value: 'single' } }] })),
      'data[0].values',
    );
    expect(storedValue('seed.key')).toBe('global');
  });

  it('accepts Content-Type application/json with a charset, in any case', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const answer = await toApp({ data: [] }, { 'Content-Type': type });
      expect(answer.status, `${type}: ${answer.body}`).toBe(200);
    }
  });
});

describe('Content-Type', () => {
  it.each([
    { name: 'text/plain', type: 'text/plain' },
    { name: 'form data', type: 'application/x-www-form-urlencoded' },
    { name: 'missing', type: undefined },
  ])('answers 415 when it is $name', async ({ type }) => {
    const answer = await unchanged(() =>
      toApp(
        { enableKeyCreation: true, data: [{ key: 'ct.key', values: [{ context: ANY, value: 'x' }] }] },
        { 'Content-Type': type },
      ),
    );
    expectError(answer, 415);
    expect(keyAtHead('ct.key')).toBeNull();
  });

  it('answers 415 on the token form too', async () => {
    expectError(
      await unchanged(() =>
        post('/rest/push', { data: [] }, { 'Client-Token': appToken, 'Content-Type': 'text/plain' }),
      ),
      415,
    );
  });
});

describe('sizes', () => {
  const padded = (size: number) => {
    const shell = JSON.stringify({ changeComment: '', data: [] });
    const body = JSON.stringify({ changeComment: 'c'.repeat(size - shell.length), data: [] });
    expect(Buffer.byteLength(body)).toBe(size);
    return body;
  };

  it('accepts a body at the configured limit and answers 413 one byte over it', async () => {
    const at = await post(`/rest/push/${APP}`, padded(1024), {}, small);
    expect(at.status, at.body).toBe(200);
    expectError(await unchanged(() => post(`/rest/push/${APP}`, padded(1025), {}, small)), 413);
  });

  it('answers 413 to a large body before parsing it, also when it is not JSON', async () => {
    const big = {
      enableKeyCreation: true,
      data: [{ key: 'big.key', values: [{ context: ANY, value: 'v'.repeat(2000) }] }],
    };
    expectError(await unchanged(() => post(`/rest/push/${APP}`, big, {}, small)), 413);
    expectError(await unchanged(() => post(`/rest/push/${APP}`, 'x'.repeat(2000), {}, small)), 413);
    expect(keyAtHead('big.key')).toBeNull();
  });

  it('answers 413 to a large chunked body (no Content-Length)', async () => {
    const big = JSON.stringify({
      enableKeyCreation: true,
      data: [{ key: 'big.key', values: [{ context: ANY, value: 'v'.repeat(4000) }] }],
    });
    const answer = await unchanged(() =>
      rawRequest(small.url, {
        path: `/rest/push/${APP}`,
        body: big,
        chunked: true,
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    expectError(answer, 413);
  });

  it('answers 413 to a body over the default limit of 16 MiB', async () => {
    expectError(await unchanged(() => toApp(Buffer.alloc(16 * 1024 * 1024 + 1, 0x20))), 413);
  });

  it('accepts 10,000 elements and answers 413 to 10,001', async () => {
    const element = { key: 'never.there', opp: 'delete' };
    const ok = await unchanged(() => toApp({ data: Array.from({ length: 10_000 }, () => element) }));
    expect(ok.status, ok.body).toBe(200);
    const over = await unchanged(() => toApp({ data: Array.from({ length: 10_001 }, () => element) }));
    expectError(over, 413);
  });

  it('accepts a value of 1 MiB and answers 413 to one byte more, naming it', async () => {
    const mib = 1024 * 1024;
    const ok = await toApp({
      enableKeyCreation: true,
      data: [{ key: 'mib.key', values: [{ context: ANY, value: 'm'.repeat(mib) }] }],
    });
    expect(ok.status, ok.body).toBe(200);
    expect(storedValue('mib.key')).toHaveLength(mib);
    const over = await unchanged(() =>
      toApp({
        data: [
          { key: 'seed.key' },
          {
            key: 'mib.key',
            values: [
              { context: ANY, value: 'short' },
              { context: ANY, value: 'm'.repeat(mib + 1) },
            ],
          },
        ],
      }),
    );
    const json = expectError(over, 413);
    expect(JSON.stringify(json)).toContain('data[1].values[1].value');
    expect(storedValue('mib.key')).toHaveLength(mib);
  });

  it('counts a value in UTF-8 bytes', async () => {
    // 524,289 two-byte characters: fewer than 1 Mi characters, more than 1 MiB.
    const over = await unchanged(() =>
      toApp({ data: [{ key: 'mib.key', values: [{ context: ANY, value: 'é'.repeat(524_289) }] }] }),
    );
    expectError(over, 413);
  });

  it('answers 413 to file content over 1 MiB', async () => {
    const over = await unchanged(() =>
      toApp({ data: [{ file: 'big/file.txt', context: ANY, content: 'f'.repeat(1024 * 1024 + 1) }] }),
    );
    const json = expectError(over, 413);
    expect(JSON.stringify(json)).toContain('data[0].content');
    expect(fileAtHead('big/file.txt')).toBeNull();
  });
});

describe('bodies that are not valid UTF-8', () => {
  /** A push body as the ConfigHub Java client writes it: `café` with é as its low byte alone (0xE9). */
  const javaBody = (key: string) =>
    Buffer.concat([
      Buffer.from(
        `{"enableKeyCreation":"true","data":[{"key":"${key}","values":[{"context":"*;*;*","value":"caf`,
        'latin1',
      ),
      Buffer.from([0xe9]),
      Buffer.from('"}]}]}'),
    ]);

  it.each([
    ['the path form', `/rest/push/${APP}`, () => ({})],
    ['the token form', '/rest/push', () => ({ 'Client-Token': appToken })],
  ])(
    'refuses a push on %s with 400 naming the offset of the bad byte, and stores nothing',
    async (_, path, headers) => {
      const body = javaBody('utf8.java');
      const offset = body.indexOf(0xe9);
      const answer = await unchanged(() => post(path, body, headers()));
      const json = expectError(answer, 400);
      expect(json.message).toMatch(/not valid UTF-8/);
      expect(json.message).toContain(`byte 0xE9 at offset ${offset}`);
      expect(json.details).toEqual([{ path: 'body', message: `not valid UTF-8 at byte offset ${offset}` }]);
      expect(keyAtHead('utf8.java')).toBeNull();
    },
  );

  it('stores the same text sent as UTF-8, or escaped as \\u00e9, unchanged', async () => {
    const utf8 = await toApp(
      Buffer.from(
        '{"enableKeyCreation":true,"data":[{"key":"utf8.sent","values":[{"context":"*;*;*","value":"café €"}]}]}',
        'utf8',
      ),
    );
    expect(utf8.status, utf8.body).toBe(200);
    expect(storedValue('utf8.sent')).toBe('café €');
    const escaped = await toApp(
      Buffer.from(
        '{"enableKeyCreation":true,"data":[{"key":"utf8.escaped","values":[{"context":"*;*;*","value":"caf\\u00e9 \\u20ac"}]}]}',
        'latin1',
      ),
    );
    expect(escaped.status, escaped.body).toBe(200);
    expect(storedValue('utf8.escaped')).toBe('café €');
  });

  it.each(['revert', 'restore'])(
    'refuses a %s body with 400 naming the offset, and moves nothing',
    async (operation) => {
      const body = Buffer.concat([
        Buffer.from(`{"changeComment":"r`),
        Buffer.from([0xe2, 0x82]),
        Buffer.from(`","commit":"x","to":"x"}`),
      ]);
      const answer = await unchanged(() => post(`/rest/${operation}/${APP}`, body));
      const json = expectError(answer, 400);
      expect(json.message).toContain(`byte 0xE2 at offset ${body.indexOf(0xe2)}`);
    },
  );
});

describe('Client-Version', () => {
  it.each([
    'junk',
    'v2.0',
    'v0.9',
    'v1',
    '1.0',
    'v1.x',
    'v2.0.0',
    'v1.3.0.1',
    'v1.3.',
    'v1.3.x',
    'v1.3.0-beta',
    'V1.3.0',
  ])('answers 400 to %s', async (version) => {
    const answer = await unchanged(() =>
      toApp(
        { enableKeyCreation: true, data: [{ key: 'cv.key', values: [{ context: ANY, value: 'x' }] }] },
        { 'Client-Version': version },
      ),
    );
    expectError(answer, 400);
    expect(keyAtHead('cv.key')).toBeNull();
  });

  it('accepts v1.3.0, as the ConfigHub Java client sends it, and records it in the commit exactly as sent', async () => {
    const answer = await toApp(
      {
        changeComment: 'from Java',
        enableKeyCreation: true,
        data: [{ key: 'cv.java', values: [{ context: ANY, value: 'java' }] }],
      },
      { 'Client-Version': 'v1.3.0' },
    );
    expect(answer.status, answer.body).toBe(200);
    expect(storedValue('cv.java')).toBe('java');
    expect(git(gitdirOf(repos, APP), 'log', '-1', '--format=%(trailers:key=Client-Version,valueonly)').trim()).toBe(
      'v1.3.0',
    );
    const padded = await toApp(
      { changeComment: 'padded', data: [{ key: 'cv.java', values: [{ context: ANY, value: 'padded' }] }] },
      { 'Client-Version': 'v1.03.007' },
    );
    expect(padded.status, padded.body).toBe(200);
    expect(git(gitdirOf(repos, APP), 'log', '-1', '--format=%(trailers:key=Client-Version,valueonly)').trim()).toBe(
      'v1.03.007',
    );
  });

  it('accepts v1.7, and an empty value as absent', async () => {
    const answer = await toApp(
      { enableKeyCreation: true, data: [{ key: 'cv.key', values: [{ context: ANY, value: 'v17' }] }] },
      { 'Client-Version': 'v1.7' },
    );
    expect(answer.status, answer.body).toBe(200);
    expect(storedValue('cv.key')).toBe('v17');
    const empty = await toApp(
      { data: [{ key: 'cv.key', values: [{ context: ANY, value: 'empty' }] }] },
      { 'Client-Version': '' },
    );
    expect(empty.status, empty.body).toBe(200);
    expect(storedValue('cv.key')).toBe('empty');
  });
});

describe('the repository in the URL', () => {
  const body = {
    enableKeyCreation: true,
    data: [
      { key: 'escaped', values: [{ context: ANY, value: 'x' }] },
      { file: 'escaped.txt', context: ANY, content: 'x' },
    ],
  };

  it.each([
    '/rest/push/..%2F..%2Fetc/x',
    '/rest/push/acme/..',
    '/rest/push/../..',
    '/rest/push/acme/%2e%2e',
    '/rest/push/%2E%2E/app',
    '/rest/push/acme/..%2Fother',
    '/rest/push/acme/app%2F..%2F..%2Fx',
    '/rest/push/acme/app%5C..',
    '/rest/push/acme%5Capp/app',
    '/rest/push/acme/app%00',
    '/rest/push/acme/app.git',
    '/rest/push/acme/app%2Egit',
    '/rest/push/.cfghub/tokens',
    '/rest/push/acme/app%20',
    '/rest/push/acme/app/extra',
  ])('answers a 4xx JSON error to %s and creates nothing on disk', async (path) => {
    const outside = listing(base.path);
    const answer = await unchanged(() => post(path, body));
    expect([400, 404], `${answer.status} ${answer.body}`).toContain(answer.status);
    expectError(answer, answer.status);
    expect(listing(base.path)).toEqual(outside);
  });

  // A malformed percent-encoding in the URL is a malformed request, not a 500
  // (express throws a URIError for it).
  it('answers 400 to a malformed percent-encoding', async () => {
    const answer = await unchanged(() => post('/rest/push/acme/%E0%A4%A', body));
    expectError(answer, 400);
  });

  it('answers 404 to an unknown repository or account, with or without a token', async () => {
    expectError(await unchanged(() => post('/rest/push/acme/nosuch', body)), 404);
    expectError(await unchanged(() => post('/rest/push/nobody/app', body)), 404);
    expectError(await unchanged(() => post('/rest/push/acme/nosuch', body, { 'Client-Token': appToken })), 404);
  });

  it('finds a repository without regard to case', async () => {
    const answer = await post('/rest/push/ACME/App', {
      data: [{ key: 'seed.key', values: [{ context: 'Dev;*;*', value: 'case' }] }],
    });
    expect(answer.status, answer.body).toBe(200);
    expect(storedValue('seed.key', 'Dev;*;*')).toBe('case');
  });
});

describe('tokens', () => {
  const push = { enableKeyCreation: true, data: [{ key: 'auth.key', values: [{ context: ANY, value: 'x' }] }] };

  it('answers 401 to /rest/push without a token, or with an empty one', async () => {
    expectError(await unchanged(() => post('/rest/push', push)), 401);
    expectError(await unchanged(() => post('/rest/push', push, { 'Client-Token': '' })), 401);
    expect(keyAtHead('auth.key')).toBeNull();
  });

  it('takes an empty Client-Token as absent on the path form', async () => {
    const answer = await post(`/rest/push/${APP}`, { data: [] }, { 'Client-Token': '' });
    expect(answer.status, answer.body).toBe(200);
    expectError(await unchanged(() => post(`/rest/push/${LOCKED}`, push, { 'Client-Token': '' })), 403);
  });

  it('answers 401 to an unknown token, on both forms', async () => {
    const unknown = `cfg_${'A'.repeat(43)}`;
    presentedTokens.push(unknown, 'garbage-token-value');
    expectError(await unchanged(() => post('/rest/push', push, { 'Client-Token': unknown })), 401);
    expectError(await unchanged(() => post('/rest/push', push, { 'Client-Token': 'garbage-token-value' })), 401);
    expectError(await unchanged(() => post(`/rest/push/${APP}`, push, { 'Client-Token': unknown })), 401);
  });

  it('answers 401 to a revoked token at once', async () => {
    const before = await post('/rest/push', { data: [] }, { 'Client-Token': doomedToken });
    expect(before.status, before.body).toBe(200);
    cliOk(repos, 'token', 'revoke', APP, 'doomed');
    expectError(await unchanged(() => post('/rest/push', push, { 'Client-Token': doomedToken })), 401);
    expectError(await unchanged(() => post(`/rest/push/${APP}`, push, { 'Client-Token': doomedToken })), 401);
  });

  it('answers 403 to the path form with another repository’s token', async () => {
    expectError(await unchanged(() => post(`/rest/push/${APP}`, push, { 'Client-Token': otherToken })), 403);
    expectError(await unchanged(() => post(`/rest/push/${LOCKED}`, push, { 'Client-Token': appToken })), 403);
  });

  it('answers 403 to the path form without a token when token-free push is off, and 200 with its token', async () => {
    expectError(await unchanged(() => post(`/rest/push/${LOCKED}`, push)), 403);
    const withToken = await post(`/rest/push/${LOCKED}`, push, { 'Client-Token': lockedToken });
    expect(withToken.status, withToken.body).toBe(200);
    expect(keyAtHead('auth.key', LOCKED)).not.toBeNull();
  });

  it('pushes to the token’s own repository on /rest/push', async () => {
    const answer = await post(
      '/rest/push',
      { enableKeyCreation: true, data: [{ key: 'own.key', values: [{ context: ANY, value: 'x' }] }] },
      { 'Client-Token': otherToken },
    );
    expect(answer.status, answer.body).toBe(200);
    expect(keyAtHead('own.key', OTHER)).not.toBeNull();
    expect(keyAtHead('own.key', APP)).toBeNull();
  });
});

describe('If-Match', () => {
  it.each(['abc', '"abc"', `"${'g'.repeat(40)}"`, `"${'a'.repeat(39)}"`, `"${'a'.repeat(41)}"`, '"a", "b"'])(
    'answers 400 to If-Match %s',
    async (value) => {
      const answer = await unchanged(() =>
        toApp({ data: [{ key: 'seed.key', values: [{ context: ANY, value: 'if-match' }] }] }, { 'If-Match': value }),
      );
      expectError(answer, 400);
      expect(storedValue('seed.key')).toBe('global');
    },
  );
});

describe('an expired token', () => {
  it('answers 401 once the expiry has passed', async () => {
    const tokens = JSON.parse(cliOk(repos, 'token', 'list', APP)) as { label: string; expires: string | null }[];
    const expires = Date.parse(tokens.find((t) => t.label === 'brief')!.expires!);
    const wait = expires + 300 - Date.now();
    if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    expectError(await unchanged(() => post('/rest/push', { data: [] }, { 'Client-Token': briefToken })), 401);
    expectError(await unchanged(() => post(`/rest/push/${APP}`, { data: [] }, { 'Client-Token': briefToken })), 401);
  });
});

describe('the server log', () => {
  it('never holds a token or a pushed value', async () => {
    // The value travels in an applied push, a refused one and a malformed one.
    const applied = await post(
      '/rest/push',
      { enableKeyCreation: true, data: [{ key: 'log.key', values: [{ context: ANY, value: SECRET_VALUE }] }] },
      { 'Client-Token': appToken, 'Application-Name': 'log-test' },
    );
    expect(applied.status, applied.body).toBe(200);
    const refused = await toApp({
      enableKeyCreation: true,
      data: [{ key: 'log.int', vdt: 'Integer', values: [{ context: ANY, value: SECRET_VALUE }] }],
    });
    expect(refused.status).toBe(304);
    const malformed = await toApp({
      data: [{ key: 'log.key', values: [{ context: ANY, value: SECRET_VALUE, extra: SECRET_VALUE }] }],
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).not.toContain(SECRET_VALUE);
    const unauthorized = await post(
      '/rest/push',
      { data: [{ key: 'log.key', values: [{ context: ANY, value: SECRET_VALUE }] }] },
      { 'Client-Token': `${appToken}x` },
    );
    presentedTokens.push(`${appToken}x`);
    expect(unauthorized.status).toBe(401);

    const log = server.logText();
    // The log does record these requests.
    expect(server.logs.some((line) => line.status === 304 && typeof line.refusal === 'string')).toBe(true);
    expect(server.logs.some((line) => line.status === 401)).toBe(true);
    expect(log).not.toContain(SECRET_VALUE);
    for (const token of presentedTokens) {
      expect(log).not.toContain(token);
      expect(log).not.toContain(token.slice(4, 20));
    }
    expect(small.logText()).not.toContain(SECRET_VALUE);
  });

  it('token list shows no token, only labels', () => {
    const list = cli(repos, 'token', 'list', APP);
    expect(list.code).toBe(0);
    for (const token of presentedTokens) expect(list.stdout + list.stderr).not.toContain(token);
  });
});
