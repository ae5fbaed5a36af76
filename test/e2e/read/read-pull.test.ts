/**
 * `GET /rest/pull` end to end: context resolution, the response's
 * shape, rendered files, and freshness (no stale answer after a push from this server, another
 * cfghub process or plain git; ETag and If-None-Match). The real server on loopback, real bare
 * repositories.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import {
  expectJsonError,
  ISO_SECONDS,
  keyPath,
  keyYaml,
  plainGitCommit,
  read,
  startServerProcess,
  type ReadAnswer,
} from '../../support/reads.js';

const LEVELS = 'Environment,Application,Instance';
const ANY = '*;*;*';
/** Resolution cases. */
const RES = 'acme/res';
/** Typed values, metadata and files. */
const SHAPE = 'acme/shape';
/** Files that embed each other. */
const CYCLE = 'acme/cycle';
/** Changed by pushes, another process and plain git. */
const FRESH = 'acme/fresh';

const fixture = serverForFile();

const value = (context: string, v: unknown, active = true) => ({ context, value: v, active });

async function pushOk(repo: string, data: unknown[]): Promise<string> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
    changeComment: 'test data',
    enableKeyCreation: true,
    data,
  });
  expect(answer.status, `push to ${repo} refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
  return answer.etag!;
}

const pull = (repo: string, context: string, headers: Record<string, string> = {}) =>
  read(fixture.server.url, `/rest/pull/${repo}`, { Context: context, ...headers });

/** The values of `properties` by key name. */
function vals(answer: ReadAnswer): Record<string, unknown> {
  expect(answer.status, answer.text).toBe(200);
  return Object.fromEntries(
    Object.entries(answer.json.properties as Record<string, { val: unknown }>).map(([k, p]) => [k, p.val]),
  );
}

beforeAll(async () => {
  for (const repo of [RES, SHAPE, CYCLE, FRESH])
    cliOk(fixture.repos, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull');

  await pushOk(RES, [
    // ConfigHub's own example.
    { key: 'example', values: [value(ANY, 'a'), value('Prod;*;*', 'b'), value('*;*;i1', 'c')] },
    // A deeper level outweighs wider ones together.
    { key: 'deeper', values: [value('Prod;web;*', 'pw'), value('*;*;i1', 'i1')] },
    { key: 'appenv', values: [value('*;web;*', 'app'), value('Prod;*;*', 'env')] },
    {
      key: 'pair',
      values: [value('Prod;web;*', 'pw'), value('*;web;i1', 'wi'), value('Prod;*;i1', 'pi'), value(ANY, 'any')],
    },
    { key: 'full', values: [value('Prod;web;i1', 'full'), value('*;web;i1', 'wi2')] },
    // Inactive values never qualify.
    { key: 'inactive', values: [value(ANY, 'base'), value('Prod;*;*', 'hidden', false)] },
    { key: 'allinactive', values: [value(ANY, 'gone', false)] },
    { key: 'devonly', values: [value('Dev;*;*', 'd')] },
    // Stored items in another case than the request's.
    { key: 'cased', values: [value('PROD;Web;*', 'cased')] },
  ]);

  await pushOk(SHAPE, [
    { key: 'app.name', readme: 'The name of the shop', values: [value(ANY, 'shop'), value('Prod;*;*', 'shop-prod')] },
    { key: 'app.port', vdt: 'Integer', readme: 'Port', values: [value(ANY, 12)] },
    { key: 'app.hosts', vdt: 'List', values: [value(ANY, ['a', 'b']), value('Dev;*;*', [])] },
    { key: 'app.limits', vdt: 'Map', values: [value(ANY, { cpu: 2, mem: '1G' })] },
    { key: 'app.old', deprecated: true, readme: 'Do not use', values: [value(ANY, 'legacy')] },
    { key: 'app.none', values: [value(ANY, null)] },
    { key: 'app.flag', vdt: 'Boolean', values: [value(ANY, true)] },
    { key: 'app.blank', readme: '   ', values: [value(ANY, 'x')] },
    { key: 'dev.only', values: [value('Dev;*;*', 'devvalue')] },
    { key: 'file.ref', vdt: 'FileRef', values: [value(ANY, 'conf/app.properties')] },
    { key: 'file.embed', vdt: 'FileEmbed', values: [value(ANY, 'snippets/outer.txt')] },
    { key: 'inner.embed', vdt: 'FileEmbed', values: [value(ANY, 'snippets/inner.txt')] },
    {
      file: 'conf/app.properties',
      context: ANY,
      content: 'name=${ app.name }\nport=${app.port}\nagain=${app.name}\ndev=${ dev.only }\nembed=${ file.embed }\n',
    },
    { file: 'conf/app.properties', context: 'Dev;*;*', content: 'dev file ${dev.only}\n' },
    { file: 'conf/settings.json', context: ANY, content: '{"port": ${ app.port }}' },
    { file: 'conf/web.xml', context: '*;web;*', content: '<port>${app.port}</port>' },
    { file: 'notes/readme.zzz', context: ANY, content: 'plain' },
    { file: 'snippets/outer.txt', context: ANY, content: 'outer(${ inner.embed })' },
    { file: 'snippets/inner.txt', context: ANY, content: 'inner ${ app.name } ${ dev.only }' },
    { file: 'conf/hidden.properties', context: ANY, content: 'hidden', active: false },
  ]);

  await pushOk(CYCLE, [
    { key: 'emb.a', vdt: 'FileEmbed', values: [value(ANY, 'cyc/b.txt')] },
    { key: 'emb.b', vdt: 'FileEmbed', values: [value(ANY, 'cyc/end.txt'), value('Prod;*;*', 'cyc/a.txt')] },
    { file: 'cyc/a.txt', context: ANY, content: 'A[${ emb.a }]' },
    { file: 'cyc/b.txt', context: ANY, content: 'B[${ emb.b }]' },
    { file: 'cyc/end.txt', context: ANY, content: 'end' },
  ]);
});

describe('resolution', () => {
  it("follows ConfigHub's example: *;*;*=a, Prod;*;*=b, *;*;i1=c", async () => {
    expect(vals(await pull(RES, 'Prod;web;i1')).example).toBe('c');
    expect(vals(await pull(RES, 'Prod;web;i2')).example).toBe('b');
    expect(vals(await pull(RES, 'Dev;web;i2')).example).toBe('a');
  });

  // Every key of acme/res, for each request: the whole `properties` as key → val, so a key with no
  // qualifying value must be left out.
  const table: [string, Record<string, string>][] = [
    [
      'Prod;web;i1',
      { example: 'c', deeper: 'i1', appenv: 'app', pair: 'wi', full: 'full', inactive: 'base', cased: 'cased' },
    ],
    ['Prod;web;i2', { example: 'b', deeper: 'pw', appenv: 'app', pair: 'pw', inactive: 'base', cased: 'cased' }],
    ['Dev;web;i2', { example: 'a', appenv: 'app', pair: 'any', inactive: 'base', devonly: 'd' }],
    ['Prod;api;i1', { example: 'c', deeper: 'i1', appenv: 'env', pair: 'pi', inactive: 'base' }],
    ['Dev;api;i1', { example: 'c', deeper: 'i1', pair: 'any', inactive: 'base', devonly: 'd' }],
    [
      'Dev;web;i1',
      { example: 'c', deeper: 'i1', appenv: 'app', pair: 'wi', full: 'wi2', inactive: 'base', devonly: 'd' },
    ],
    ['Qa;zzz;n9', { example: 'a', pair: 'any', inactive: 'base' }],
    // A request item `*` matches only values that are wildcards at that level.
    ['*;*;*', { example: 'a', pair: 'any', inactive: 'base' }],
    ['Prod;*;*', { example: 'b', appenv: 'env', pair: 'any', inactive: 'base' }],
    ['*;web;i1', { example: 'c', deeper: 'i1', appenv: 'app', pair: 'wi', full: 'wi2', inactive: 'base' }],
    ['*;*;i1', { example: 'c', deeper: 'i1', pair: 'any', inactive: 'base' }],
    ['PROD;web;*', { example: 'b', deeper: 'pw', appenv: 'app', pair: 'pw', inactive: 'base', cased: 'cased' }],
    // Items are compared without regard to case.
    [
      'prod;WEB;I1',
      { example: 'c', deeper: 'i1', appenv: 'app', pair: 'wi', full: 'full', inactive: 'base', cased: 'cased' },
    ],
    ['dEV;Api;I1', { example: 'c', deeper: 'i1', pair: 'any', inactive: 'base', devonly: 'd' }],
  ];
  it.each(table)('resolves %s', async (context, expected) => {
    expect(vals(await pull(RES, context, { 'No-Files': 'true' }))).toEqual(expected);
  });

  it('lets a value specific at a deeper level beat any number of wider ones', async () => {
    // Prod;web;* (two items) against *;*;i1 (one, deeper): the Instance one wins.
    expect(vals(await pull(RES, 'Prod;web;i1')).deeper).toBe('i1');
    // *;web;i1 against Prod;*;i1, Prod;web;* and *;*;*.
    expect(vals(await pull(RES, 'Prod;web;i1')).pair).toBe('wi');
    // Application beats Environment.
    expect(vals(await pull(RES, 'Prod;web;i9')).appenv).toBe('app');
  });

  it('never lets an inactive value qualify', async () => {
    const answer = await pull(RES, 'Prod;web;i1', { 'Include-Value-Context': 'true' });
    expect(answer.json.properties.inactive).toEqual({ val: 'base', context: ['*', '*', '*'] });
    expect(answer.json.properties).not.toHaveProperty('allinactive');
  });
});

describe('the pull answer', () => {
  it('has files, properties, account, repo, context (verbatim) and generatedOn, in that order', async () => {
    const answer = await pull(SHAPE, 'prod;WEB;I1');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(answer.json)).toEqual(['files', 'properties', 'account', 'repo', 'context', 'generatedOn']);
    expect(answer.json.account).toBe('acme');
    expect(answer.json.repo).toBe('shape');
    expect(answer.json.context).toBe('prod;WEB;I1');
    expect(answer.json.generatedOn).toMatch(ISO_SECONDS);
    expect(Math.abs(Date.parse(answer.json.generatedOn) - Date.now())).toBeLessThan(60_000);
    expect(answer.json).not.toHaveProperty('repoDate');
    // Items with spaces around them are read trimmed, and echoed as sent.
    const spaced = await pull(SHAPE, 'Prod ; web;  i1');
    expect(spaced.json.context).toBe('Prod ; web;  i1');
    expect(vals(spaced)['app.name']).toBe('shop-prod');
  });

  it('types each value: type (not for Text), deprecated only when set, val as JSON for List and Map', async () => {
    const { properties } = (await pull(SHAPE, 'Prod;web;i1')).json;
    expect(properties['app.name']).toEqual({ val: 'shop-prod' });
    expect(properties['app.port']).toEqual({ type: 'Integer', val: '12' });
    expect(properties['app.hosts']).toEqual({ type: 'List', val: ['a', 'b'] });
    expect(properties['app.limits']).toEqual({ type: 'Map', val: { cpu: 2, mem: '1G' } });
    expect(properties['app.old']).toEqual({ deprecated: true, val: 'legacy' });
    expect(properties['app.none']).toEqual({ val: null });
    expect(properties['app.flag']).toEqual({ type: 'Boolean', val: 'true' });
    expect(properties['file.ref']).toEqual({ type: 'FileRef', val: 'conf/app.properties' });
    expect(properties['file.embed']).toEqual({ type: 'FileEmbed', val: 'snippets/outer.txt' });
    expect(properties).not.toHaveProperty('dev.only');
    const dev = (await pull(SHAPE, 'Dev;web;i1')).json.properties;
    expect(dev['app.hosts']).toEqual({ type: 'List', val: [] });
    expect(dev['dev.only']).toEqual({ val: 'devvalue' });
  });

  it('adds comment with Include-Comments (non-blank readme only) and context with Include-Value-Context', async () => {
    const answer = await pull(SHAPE, 'Prod;web;i1', { 'Include-Comments': 'true', 'Include-Value-Context': 'TRUE' });
    const { properties } = answer.json;
    expect(properties['app.name']).toEqual({
      comment: 'The name of the shop',
      val: 'shop-prod',
      context: ['Prod', '*', '*'],
    });
    expect(Object.keys(properties['app.old'])).toEqual(['deprecated', 'comment', 'val', 'context']);
    expect(Object.keys(properties['app.port'])).toEqual(['type', 'comment', 'val', 'context']);
    expect(properties['app.port'].context).toEqual(['*', '*', '*']);
    expect(properties['app.blank']).toEqual({ val: 'x', context: ['*', '*', '*'] });
    expect(properties['app.hosts']).not.toHaveProperty('comment');
    // Without the headers (or with anything but true) neither appears.
    const plain = await pull(SHAPE, 'Prod;web;i1', { 'Include-Comments': 'yes', 'Include-Value-Context': 'false' });
    expect(plain.json.properties['app.name']).toEqual({ val: 'shop-prod' });
  });

  it('drops files with No-Files and properties with No-Properties', async () => {
    const noFiles = await pull(SHAPE, 'Prod;web;i1', { 'No-Files': 'true' });
    expect(Object.keys(noFiles.json)).toEqual(['properties', 'account', 'repo', 'context', 'generatedOn']);
    const noProps = await pull(SHAPE, 'Prod;web;i1', { 'No-Properties': 'true' });
    expect(Object.keys(noProps.json)).toEqual(['files', 'account', 'repo', 'context', 'generatedOn']);
    const neither = await pull(SHAPE, 'Prod;web;i1', { 'No-Properties': 'true', 'No-Files': 'True' });
    expect(Object.keys(neither.json)).toEqual(['account', 'repo', 'context', 'generatedOn']);
  });

  it('indents by two spaces with Pretty: true, and is compact otherwise', async () => {
    const pretty = await pull(SHAPE, 'Prod;web;i1', { Pretty: 'true' });
    expect(pretty.text).toMatch(/^\{\n {2}"files": \{\n {4}"/);
    const compact = await pull(SHAPE, 'Prod;web;i1', { Pretty: 'yes' });
    expect(compact.text).not.toContain('\n');
    const { generatedOn: _a, ...a } = pretty.json;
    const { generatedOn: _b, ...b } = compact.json;
    expect(a).toEqual(b);
  });
});

describe('files in a pull', () => {
  it('renders ${ key } and ${key} with the values of the same context, embedded files two levels deep', async () => {
    const { files } = (await pull(SHAPE, 'Prod;web;i1')).json;
    expect(Object.keys(files).sort()).toEqual([
      'conf/app.properties',
      'conf/settings.json',
      'conf/web.xml',
      'notes/readme.zzz',
      'snippets/inner.txt',
      'snippets/outer.txt',
    ]);
    expect(files['conf/app.properties'].content).toBe(
      'name=shop-prod\nport=12\nagain=shop-prod\ndev=[ ERROR: No property value resolved ]\nembed=outer(inner shop-prod [ ERROR: No property value resolved ])\n',
    );
    expect(files['conf/settings.json'].content).toBe('{"port": 12}');
    expect(files['conf/web.xml'].content).toBe('<port>12</port>');
  });

  it("lists the keys without a value in the file's unresolved array, and leaves it out when all resolve", async () => {
    const prod = (await pull(SHAPE, 'Prod;web;i1')).json.files;
    expect(prod['conf/app.properties'].unresolved).toEqual(['dev.only']);
    expect(prod['snippets/inner.txt'].unresolved).toEqual(['dev.only']);
    expect(prod['conf/settings.json']).not.toHaveProperty('unresolved');
    const dev = (await pull(SHAPE, 'Dev;api;i1')).json.files;
    expect(dev['conf/app.properties']).toEqual({
      content: 'dev file devvalue\n',
      'content-type': 'text/x-java-properties',
    });
    expect(dev['snippets/inner.txt'].content).toBe('inner shop devvalue');
    expect(dev['snippets/inner.txt']).not.toHaveProperty('unresolved');
    // conf/web.xml exists only for Application web; inactive files never show.
    expect(dev).not.toHaveProperty('conf/web.xml');
    expect(dev).not.toHaveProperty('conf/hidden.properties');
  });

  it('gives each file the content-type of its extension', async () => {
    const { files } = (await pull(SHAPE, 'Prod;web;i1')).json;
    expect(files['conf/app.properties']['content-type']).toBe('text/x-java-properties');
    expect(files['conf/settings.json']['content-type']).toBe('application/json');
    expect(files['conf/web.xml']['content-type']).toBe('application/xml');
    expect(files['notes/readme.zzz']['content-type']).toBe('text/plain');
    expect(files['snippets/outer.txt']['content-type']).toBe('text/plain');
    expect(Object.keys(files['conf/settings.json'])).toEqual(['content', 'content-type']);
  });

  it('answers 400 JSON naming the cycle when files embed each other, and renders the same files where no cycle resolves', async () => {
    const dev = await pull(CYCLE, 'Dev;web;i1');
    expect(dev.status).toBe(200);
    expect(dev.json.files['cyc/a.txt'].content).toBe('A[B[end]]');
    const prod = await pull(CYCLE, 'Prod;web;i1');
    const message = expectJsonError(prod, 400, [fixture.repos]);
    expect(message).toMatch(/cycle/i);
    expect(message).toContain('cyc/a.txt');
    expect(message).toContain('cyc/b.txt');
    // Without files, the same context pulls fine.
    expect((await pull(CYCLE, 'Prod;web;i1', { 'No-Files': 'true' })).status).toBe(200);
  });
});

describe('freshness', () => {
  const fresh = (headers: Record<string, string> = {}) => pull(FRESH, 'Prod;web;i1', headers);

  beforeAll(async () => {
    await pushOk(FRESH, [
      { key: 'k', values: [value(ANY, 'v1')] },
      { file: 'conf/f.txt', context: ANY, content: 'f=${ k }' },
    ]);
  });

  it('carries an ETag on every 200, answers If-None-Match with 304 and an empty body, and sees a push at once', async () => {
    const first = await fresh();
    expect(vals(first).k).toBe('v1');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await fresh({ 'If-None-Match': etag! });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);

    await pushOk(FRESH, [{ key: 'k', values: [value(ANY, 'v2')] }]);
    const after = await fresh({ 'If-None-Match': etag! });
    expect(after.status).toBe(200);
    expect(vals(after).k).toBe('v2');
    expect(after.json.files['conf/f.txt'].content).toBe('f=v2');
    expect(after.headers.get('etag')).toMatch(/^"[^"]+"$/);
    expect(after.headers.get('etag')).not.toBe(etag);
  });

  it('sees a push made through another cfghub process at once', async () => {
    expect(vals(await fresh()).k).toBe('v2'); // warm whatever this server keeps
    const other = await startServerProcess(fixture.repos);
    try {
      const answer = await pushTo(other.url, `/rest/push/${FRESH}`, {
        data: [{ key: 'k', values: [value(ANY, 'v3')] }],
      });
      expect(answer.status, reasonOf(answer)).toBe(200);
      const after = await fresh();
      expect(vals(after).k).toBe('v3');
      expect(after.json.files['conf/f.txt'].content).toBe('f=v3');
    } finally {
      await other.stop();
    }
  });

  it('sees a commit made with plain git (commit-tree and update-ref) at once', async () => {
    const before = await fresh();
    expect(vals(before).k).toBe('v3');
    const gitdir = gitdirOf(fixture.repos, FRESH);
    const document = keyYaml(gitdir, 'k');
    expect(document).toContain('value: v3');
    plainGitCommit(
      gitdir,
      { [keyPath('k')]: document.replace('value: v3', 'value: v4-git'), 'files/_;_;_/conf/f.txt': 'git f=${ k }' },
      'changed with plain git',
    );
    const after = await fresh({ 'If-None-Match': before.headers.get('etag')! });
    expect(after.status).toBe(200);
    expect(vals(after).k).toBe('v4-git');
    expect(after.json.files['conf/f.txt'].content).toBe('git f=v4-git');
    const raw = await read(fixture.server.url, `/rest/rawFile/${FRESH}`, {
      Context: 'Prod;web;i1',
      File: 'conf/f.txt',
    });
    expect(raw.text).toBe('git f=v4-git');
  });

  it('still reads, and sees new commits, after git gc repacked and pruned every object', async () => {
    const gitdir = gitdirOf(fixture.repos, FRESH);
    await fixture.server.settle(FRESH);
    git(gitdir, 'gc', '--quiet', '--prune=now');
    expect(vals(await fresh()).k).toBe('v4-git');
    plainGitCommit(
      gitdir,
      { [keyPath('k')]: keyYaml(gitdir, 'k').replace('value: v4-git', 'value: v5-after-gc') },
      'after gc',
    );
    expect(vals(await fresh()).k).toBe('v5-after-gc');
    await pushOk(FRESH, [{ key: 'k', values: [value(ANY, 'v6')] }]);
    const after = await fresh();
    expect(vals(after).k).toBe('v6');
    expect(after.json.files['conf/f.txt'].content).toBe('git f=v6');
  });
});

describe('pull errors', () => {
  it('answers 400 JSON for a context that does not fit the repository', async () => {
    expect(expectJsonError(await pull(SHAPE, 'Prod;web'), 400)).toMatch(/2 items/);
    expect(expectJsonError(await read(fixture.server.url, `/rest/pull/${SHAPE}`), 400)).toMatch(/Context/);
  });
});
