/**
 * Bounded work on reads, against the real server on loopback: a
 * `Files-Glob` built to make a backtracking matcher run for hours answers at once and correctly,
 * and templates that multiply or chain deep answer a clear 409 naming the file (or are refused at
 * push time), never a 500, while other requests are served. The server is a child process, so
 * a frozen server fails these tests by their time-outs instead of freezing the test runner too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GLOB_LENGTH } from '../../../src/domain/glob.js';
import {
  MAX_EMBED_DEPTH,
  MAX_RENDERED_ANSWER_CHARS,
  MAX_RENDERED_FILE_CHARS,
} from '../../../src/domain/renderLimits.js';
import { cliOk, git, gitdirOf, jsonOrUndefined, reasonOf, tempDir } from '../../support/harness.js';
import { expectJsonError, plainGitCommit, type ReadAnswer } from '../../support/reads.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';

const LEVELS = 'Environment,Application,Instance';
const ANY = '*;*;*';
const GLOB = 'acme/glob';
const MANY = 'acme/many';
const CHAIN = 'acme/chain';
const WIDE = 'acme/wide';

let dir: ReturnType<typeof tempDir>;
let server: ServerProcess;

/** Far beyond what any of these requests needs, far below what a frozen server takes. */
const PATIENCE_MS = 20_000;

async function read(url: string, path: string, headers: Record<string, string> = {}): Promise<ReadAnswer> {
  const get = () => fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(PATIENCE_MS) });
  // A kept-alive connection the server closed while this process ran git synchronously: once more.
  const response = await get().catch((error) =>
    (error as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET' ? get() : Promise.reject(error),
  );
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
}

async function pushTo(url: string, path: string, body: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(PATIENCE_MS),
  });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), body: text, json: jsonOrUndefined(text) };
}

async function push(repo: string, data: unknown[]) {
  return pushTo(server.url, `/rest/push/${repo}`, { changeComment: 'test data', enableKeyCreation: true, data });
}

async function pushOk(repo: string, data: unknown[]): Promise<void> {
  const answer = await push(repo, data);
  expect(answer.status, `push to ${repo} refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
}

const embedKey = (key: string, path: string) => ({ key, vdt: 'FileEmbed', values: [{ context: ANY, value: path }] });
const file = (path: string, content: string) => ({ file: path, context: ANY, content });
const pull = (repo: string, headers: Record<string, string> = {}) =>
  read(server.url, `/rest/pull/${repo}`, { Context: 'Prod;web;n1', ...headers });

/** Runs `slow` and, while it runs, a /healthz: both must answer (within PATIENCE_MS). */
async function withHealthz<T>(slow: Promise<T>): Promise<T> {
  const [result, health] = await Promise.all([slow, read(server.url, '/healthz')]);
  expect(health.status).toBe(200);
  return result;
}

/** A chain of files `<prefix>NN.txt` from `from` to `to`, each embedding the next through key `<prefix>.eNN`. */
function chain(prefix: string, from: number, to: number, last = 'end'): unknown[] {
  const name = (i: number) => `${prefix}${String(i).padStart(4, '0')}`;
  const data: unknown[] = [];
  for (let i = from; i <= to; i++) {
    if (i < to) data.push(embedKey(`${name(i + 1)}.e`, `${name(i + 1)}.txt`));
    data.push(file(`${name(i)}.txt`, i < to ? `${i}<\${ ${name(i + 1)}.e }>` : last));
  }
  return data;
}

beforeAll(async () => {
  dir = tempDir();
  for (const repo of [GLOB, MANY, CHAIN, WIDE])
    cliOk(dir.path, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull');
  server = await startServerProcess(dir.path);
  await pushOk(GLOB, [
    file('conf/app.properties', 'a'),
    file('conf/db.properties', 'b'),
    file(`deep/${'a'.repeat(100)}X`, 'c'),
    file(`deep/${'a'.repeat(100)}Y`, 'd'),
  ]);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('Files-Glob', () => {
  const files = async (glob: string) => {
    const answer = await read(server.url, `/rest/info/${GLOB}`, { 'Files-Glob': glob });
    expect(answer.status, answer.text).toBe(200);
    return (answer.json.files as { path: string }[]).map((f) => f.path);
  };

  it('answers a pattern that makes a backtracking matcher exponential, correctly, while /healthz is served', async () => {
    // With the former regular expression, 7 groups took 6.4 s and each more six times as long: 14 is years.
    const evil = `${'{*,*}'.repeat(14)}X`;
    const matched = await withHealthz(files(evil));
    expect(matched).toEqual([`deep/${'a'.repeat(100)}X`]);
    expect(await files(`${'{*,*}'.repeat(14)}Z`)).toEqual([]);
    expect(await files('conf/{app,db}.*')).toEqual(['conf/app.properties', 'conf/db.properties']);
    expect(await files('{conf/{a,x},deep/}*')).toEqual([
      'conf/app.properties',
      `deep/${'a'.repeat(100)}X`,
      `deep/${'a'.repeat(100)}Y`,
    ]);
  });

  it(`refuses a pattern over ${MAX_GLOB_LENGTH} characters with a 400 naming Files-Glob`, async () => {
    expect((await files('*'.repeat(MAX_GLOB_LENGTH))).length).toBe(4);
    const answer = await read(server.url, `/rest/info/${GLOB}`, { 'Files-Glob': '*'.repeat(MAX_GLOB_LENGTH + 1) });
    expect(expectJsonError(answer, 400, [dir.path])).toMatch(
      new RegExp(`Files-Glob has ${MAX_GLOB_LENGTH + 1} characters, more than the ${MAX_GLOB_LENGTH}`),
    );
  });
});

describe('templates that multiply', () => {
  // base: 10,000 characters; each level embeds the one below 10 times: level 3 would be 10 MB.
  beforeAll(async () => {
    const data: unknown[] = [file('m/base.txt', 'x'.repeat(10_000)), embedKey('m.e0', 'm/base.txt')];
    for (let level = 1; level <= 4; level++) {
      data.push(file(`m/level${level}.txt`, `\${ m.e${level - 1} }`.repeat(10)));
      if (level < 4) data.push(embedKey(`m.e${level}`, `m/level${level}.txt`));
    }
    await pushOk(MANY, data);
  });

  it('answers a pull 409 naming the file that renders over the limit, and serves /healthz meanwhile', async () => {
    const answer = await withHealthz(pull(MANY));
    expect(expectJsonError(answer, 409, [dir.path])).toMatch(
      new RegExp(`file m/level3.txt renders to more than ${MAX_RENDERED_FILE_CHARS} characters`),
    );
    expect(answer.json.error).toBe('render_too_large');
    expect(answer.json.file).toBe('m/level3.txt');
    // Again (nothing cached beyond the bound, and still no 500).
    expect((await pull(MANY)).status).toBe(409);
  });

  it('renders the files within the limit: rawFile of level 2 is 1,000,000 characters', async () => {
    const answer = await read(server.url, `/rest/rawFile/${MANY}`, { Context: 'Prod;web;n1', File: 'm/level2.txt' });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('x'.repeat(1_000_000));
    expect(
      (await read(server.url, `/rest/rawFile/${MANY}`, { Context: 'Prod;web;n1', File: 'm/level4.txt' })).json.error,
    ).toBe('render_too_large');
    // Properties alone are fine.
    expect((await pull(MANY, { 'No-Files': 'true' })).status).toBe(200);
  });

  it('bounds the files of one answer together, naming the file that passed the bound', async () => {
    // Each file is 1,000,000 characters (within the file limit); 9 of them pass the answer limit.
    const big = 'y'.repeat(1_000_000);
    const data: unknown[] = [file('w/big.txt', big), embedKey('w.big', 'w/big.txt')];
    for (let i = 1; i <= 9; i++) data.push(file(`w/copy${i}.txt`, '${ w.big }'));
    await pushOk(WIDE, data);
    const answer = await pull(WIDE);
    expect(expectJsonError(answer, 409, [dir.path])).toMatch(
      new RegExp(`render to more than ${MAX_RENDERED_ANSWER_CHARS} characters together .*w/copy8.txt`),
    );
    expect(answer.json.file).toBe('w/copy8.txt');
  });
});

describe('chains of embedded files', () => {
  it(`accepts a chain ${MAX_EMBED_DEPTH} levels deep and renders it`, async () => {
    await pushOk(CHAIN, chain('c', 0, MAX_EMBED_DEPTH));
    const answer = await pull(CHAIN);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.files['c0000.txt'].content).toBe(
      `${Array.from({ length: MAX_EMBED_DEPTH }, (_, i) => `${i}<`).join('')}end${'>'.repeat(MAX_EMBED_DEPTH)}`,
    );
  });

  it('refuses at push time (304 naming the file) a chain one level deeper, and a chain of 1,200 files', async () => {
    const deeper = await push(CHAIN, chain('d', 0, MAX_EMBED_DEPTH + 1));
    expect(deeper.status).toBe(304);
    expect(reasonOf(deeper)).toMatch(
      new RegExp(`file d0000.txt: embeds files more than ${MAX_EMBED_DEPTH} levels deep \\(d0000.txt -> d0001.txt`),
    );
    // Made deeper by a new FileEmbed value alone: the end of the accepted chain now embeds another file.
    const extended = await push(CHAIN, [
      embedKey('c.more', 'more.txt'),
      file('more.txt', 'more'),
      file(`c${String(MAX_EMBED_DEPTH).padStart(4, '0')}.txt`, '${ c.more }'),
    ]);
    expect(extended.status).toBe(304);
    expect(reasonOf(extended)).toMatch(/file c0000.txt: embeds files more than/);
    const long = await withHealthz(push(CHAIN, chain('l', 0, 1200)));
    expect(long.status).toBe(304);
    expect(reasonOf(long)).toMatch(/file l0000.txt: embeds files more than/);
  });

  it('answers 409 naming the file, not a 500, for a chain 3,000 deep that plain git committed', async () => {
    // Chains within the limit through the API, then joined into one with plain git.
    const repo = 'acme/gitchain';
    cliOk(dir.path, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull');
    const pieces: [number, number][] = [];
    for (let from = 0; from < 3000; from += MAX_EMBED_DEPTH + 1)
      pieces.push([from, Math.min(from + MAX_EMBED_DEPTH, 2999)]);
    const data: unknown[] = [];
    for (const [from, to] of pieces)
      data.push(
        ...chain('g', from, to),
        ...(to < 2999
          ? [embedKey(`g${String(to + 1).padStart(4, '0')}.e`, `g${String(to + 1).padStart(4, '0')}.txt`)]
          : []),
      );
    await pushOk(repo, data);
    const gitdir = gitdirOf(dir.path, repo);
    const tree = git(gitdir, 'ls-tree', '-r', '--name-only', 'refs/heads/main').split('\n');
    const joins: Record<string, string> = {};
    for (const [, to] of pieces.slice(0, -1)) {
      const name = `g${String(to).padStart(4, '0')}`;
      const path = tree.find((p) => p.endsWith(`/${name}.txt`))!;
      joins[path] = `${to}<\${ g${String(to + 1).padStart(4, '0')}.e }>`;
    }
    plainGitCommit(gitdir, joins, 'join the chains');
    const answer = await withHealthz(pull(repo));
    expect(expectJsonError(answer, 409, [dir.path])).toMatch(
      new RegExp(`file g0000.txt embeds files more than ${MAX_EMBED_DEPTH} levels deep`),
    );
    expect(answer.json.error).toBe('embed_too_deep');
    const raw = await read(server.url, `/rest/rawFile/${repo}`, {
      Context: 'Prod;web;n1',
      File: `g${String(3000 - MAX_EMBED_DEPTH - 1).padStart(4, '0')}.txt`,
    });
    expect(raw.status, raw.text).toBe(200);
  }, 60_000);
});
