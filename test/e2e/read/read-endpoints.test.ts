/**
 * The other read endpoints end to end: `rawFile`, `keyData`, `info`
 * and `export`, the export round trip (push an export into a new repository: every pull answers
 * the same), and reading the past with `Tag` and `Repository-Date` on every endpoint. The real
 * server on loopback, real bare repositories, tags made with `cfghub tag create`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, gitdirOf, headOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import {
  commitTime,
  expectJsonError,
  ISO_SECONDS,
  isoOf,
  isoWithOffset,
  nextSecondAfter,
  read,
  type ReadAnswer,
} from '../../support/reads.js';

const LEVELS = 'Environment,Application,Instance';
const ANY = '*;*;*';
/** Many keys of many types and files in several contexts: read and exported. */
const EP = 'acme/ep';
/** Receives the export of EP. */
const COPY = 'acme/copy';
/** Tags and time travel. */
const TT = 'acme/tt';

const fixture = serverForFile();

const value = (context: string, v: unknown, active = true) => ({ context, value: v, active });

async function pushOk(repo: string, body: Record<string, unknown>): Promise<void> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
    changeComment: 'test data',
    enableKeyCreation: true,
    ...body,
  });
  expect(answer.status, `push to ${repo} refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
}

const get = (endpoint: string, repo: string, headers: Record<string, string> = {}) =>
  read(fixture.server.url, `/rest/${endpoint}/${repo}`, headers);

function ok(answer: ReadAnswer): ReadAnswer {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers.get('etag')).toMatch(/^"[^"]+"$/);
  return answer;
}

const EP_DATA = [
  {
    key: 'app.name',
    readme: 'Shop name',
    values: [
      value(ANY, 'shop'),
      value('Prod;*;*', 'shop-prod'),
      value('Dev;api;*', 'api-dev'),
      value('*;*;n1', 'off', false),
    ],
  },
  { key: 'app.port', vdt: 'Integer', readme: 'Port', values: [value(ANY, 8080), value('Prod;web;n1', 9090)] },
  { key: 'app.hosts', vdt: 'List', values: [value(ANY, ['a', 'b']), value('Prod;*;*', ['p1'])] },
  { key: 'app.limits', vdt: 'Map', values: [value(ANY, { cpu: 1, mem: '2G' })] },
  {
    key: 'app.flag',
    vdt: 'Boolean',
    deprecated: true,
    readme: 'old flag',
    values: [value(ANY, true), value('Dev;*;*', false)],
  },
  { key: 'app.locked', push: false, readme: 'set once', values: [value(ANY, 'fixed')] },
  { key: 'app.ref', vdt: 'FileRef', values: [value(ANY, 'conf/app.properties')] },
  {
    key: 'app.embed',
    vdt: 'FileEmbed',
    values: [value(ANY, 'snippets/common.txt'), value('Prod;*;*', 'snippets/prod.txt')],
  },
  { key: 'app.nothing', values: [value('Dev;*;*', null)] },
  { key: 'app.ratio', vdt: 'Double', values: [value(ANY, 1.5)] },
  { key: 'app.json', vdt: 'JSON', values: [value(ANY, '{"x":[1,2]}')] },
  { key: 'Mixed.Case', values: [value('*;web;*', 'mc')] },
  { key: 'app.unused', readme: 'no values yet', values: [] },
  {
    file: 'conf/app.properties',
    context: ANY,
    content:
      'name=${ app.name }\nport=${app.port}\nhosts=${ app.hosts }\nembed=${ app.embed }\nref=${ app.ref }\nnothing=${ app.nothing }\n',
  },
  { file: 'conf/app.properties', context: 'Prod;*;*', content: 'prod name=${ app.name } ${ app.limits }\n' },
  { file: 'snippets/common.txt', context: ANY, content: 'common ${ app.flag }' },
  { file: 'snippets/prod.txt', context: 'Prod;*;*', content: 'prod ${app.ratio} ${ app.locked }' },
  { file: 'conf/db.properties', context: ANY, content: 'db=${ app.json }' },
  { file: 'data/settings.json', context: 'Dev;*;*', content: '{"port": ${ app.port }}' },
  { file: 'conf/old.xml', context: ANY, content: '<old/>', active: false },
  { file: 'conf/web.xml', context: '*;web;*', content: '<name>${ Mixed.Case }</name>' },
];

/** Commits of TT: the first push, its committer time, the second, and the repository's creation. */
let tt: { created: number; c1: string; t1: number; c2: string; t2: number };

beforeAll(async () => {
  for (const repo of [EP, COPY, TT])
    cliOk(fixture.repos, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull');
  await pushOk(EP, { data: EP_DATA });

  const gitdir = gitdirOf(fixture.repos, TT);
  const created = commitTime(gitdir, headOf(fixture.repos, TT));
  await pushOk(TT, {
    data: [
      { key: 't.key', readme: 'first readme', values: [value(ANY, 'one')] },
      { file: 'conf/t.txt', context: ANY, content: 't=${ t.key }' },
    ],
  });
  const c1 = headOf(fixture.repos, TT);
  const t1 = commitTime(gitdir, c1);
  cliOk(fixture.repos, 'tag', 'create', TT, 'v1', '--comment', 'first release');
  // Two seconds apart at least, so that t1 + 1 is strictly between the two commits.
  await nextSecondAfter(t1 + 1);
  await pushOk(TT, {
    data: [
      { key: 't.key', readme: 'second readme', values: [value(ANY, 'two')] },
      { key: 't.new', values: [value(ANY, 'new')] },
      { file: 'conf/t.txt', context: ANY, content: 't2=${ t.key }' },
      { file: 'conf/new.txt', context: ANY, content: 'new' },
    ],
  });
  const c2 = headOf(fixture.repos, TT);
  tt = { created, c1, t1, c2, t2: commitTime(gitdir, c2) };
  expect(tt.t2).toBeGreaterThanOrEqual(tt.t1 + 2);
});

describe('GET /rest/rawFile', () => {
  it('answers the rendered text with the content type of the extension', async () => {
    const answer = ok(await get('rawFile', EP, { Context: 'Dev;web;n1', File: 'snippets/common.txt' }));
    expect(answer.text).toBe('common false');
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
    const props = ok(await get('rawFile', EP, { Context: 'Prod;web;n1', File: 'conf/app.properties' }));
    expect(props.headers.get('content-type')).toMatch(/^text\/x-java-properties/);
    expect(props.text).toMatch(/^prod name=shop-prod \{.*"cpu".*\}\n$/);
    const json = ok(await get('rawFile', EP, { Context: 'Dev;web;n1', File: 'data/settings.json' }));
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.text).toBe('{"port": 8080}');
    const xml = ok(await get('rawFile', EP, { Context: 'Dev;web;n1', File: 'conf/web.xml' }));
    expect(xml.headers.get('content-type')).toMatch(/^application\/xml/);
    expect(xml.text).toBe('<name>mc</name>');
  });

  it('answers exactly what the pull shows for that file and context', async () => {
    for (const context of ['Prod;web;n1', 'Dev;api;n1', 'Qa;web;n9']) {
      const pulled = ok(await get('pull', EP, { Context: context }));
      for (const [path, file] of Object.entries(pulled.json.files as Record<string, { content: string }>)) {
        const raw = ok(await get('rawFile', EP, { Context: context, File: path }));
        expect(raw.text, `${path} at ${context}`).toBe(file.content);
      }
    }
  });

  it('answers 404 JSON when no variant resolves for the context, the file is inactive or unknown', async () => {
    expectJsonError(await get('rawFile', EP, { Context: 'Prod;web;n1', File: 'data/settings.json' }), 404, [
      fixture.repos,
    ]);
    expectJsonError(await get('rawFile', EP, { Context: 'Dev;web;n1', File: 'conf/old.xml' }), 404, [fixture.repos]);
    expectJsonError(await get('rawFile', EP, { Context: 'Dev;web;n1', File: 'no/such.txt' }), 404, [fixture.repos]);
    expectJsonError(await get('rawFile', EP, { Context: 'Dev;api;n1', File: 'conf/web.xml' }), 404, [fixture.repos]);
  });

  it('answers 400 JSON without a File header, or without a Context', async () => {
    expect(expectJsonError(await get('rawFile', EP, { Context: 'Dev;web;n1' }), 400)).toMatch(/File/);
    expect(expectJsonError(await get('rawFile', EP, { File: 'snippets/common.txt' }), 400)).toMatch(/Context/);
  });
});

describe('GET /rest/keyData', () => {
  it('answers key, readme, deprecated, vdt and push, in that order', async () => {
    const port = ok(await get('keyData', EP, { KeyName: 'app.port' }));
    expect(port.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(port.json)).toEqual(['key', 'readme', 'deprecated', 'vdt', 'push']);
    expect(port.json).toEqual({ key: 'app.port', readme: 'Port', deprecated: false, vdt: 'Integer', push: true });
    expect(ok(await get('keyData', EP, { KeyName: 'app.flag' })).json).toEqual({
      key: 'app.flag',
      readme: 'old flag',
      deprecated: true,
      vdt: 'Boolean',
      push: true,
    });
    expect(ok(await get('keyData', EP, { KeyName: 'app.locked' })).json).toEqual({
      key: 'app.locked',
      readme: 'set once',
      deprecated: false,
      vdt: 'Text',
      push: false,
    });
  });

  it('finds the key without regard to case and answers its stored spelling', async () => {
    expect(ok(await get('keyData', EP, { KeyName: 'MIXED.case' })).json.key).toBe('Mixed.Case');
    expect(ok(await get('keyData', EP, { KeyName: 'APP.PORT' })).json.key).toBe('app.port');
  });

  it('answers 404 JSON for an unknown key and 400 JSON without KeyName', async () => {
    expect(expectJsonError(await get('keyData', EP, { KeyName: 'no.such.key' }), 404, [fixture.repos])).toContain(
      'no.such.key',
    );
    expect(expectJsonError(await get('keyData', EP), 400)).toMatch(/KeyName/);
  });
});

describe('GET /rest/info', () => {
  it('answers account, repository, generatedOn and the levels as context', async () => {
    const answer = ok(await get('info', EP));
    expect(Object.keys(answer.json)).toEqual(['account', 'repository', 'generatedOn', 'context']);
    expect(answer.json).toMatchObject({
      account: 'acme',
      repository: 'ep',
      context: ['Environment', 'Application', 'Instance'],
    });
    expect(answer.json.generatedOn).toMatch(ISO_SECONDS);
  });

  it('lists the item names of each level with Context-Elements: true', async () => {
    const answer = ok(await get('info', EP, { 'Context-Elements': 'true' }));
    expect(answer.json.contextElements).toEqual({
      Environment: ['Dev', 'Prod'],
      Application: ['api', 'web'],
      Instance: ['n1'],
    });
    expect(ok(await get('info', EP, { 'Context-Elements': 'no' })).json).not.toHaveProperty('contextElements');
  });

  it('lists only the levels named by Context-Labels (trimmed, any case), and answers 400 for an unknown label', async () => {
    const answer = ok(await get('info', EP, { 'Context-Labels': 'Environment, application' }));
    expect(answer.json.contextElements).toEqual({ Environment: ['Dev', 'Prod'], Application: ['api', 'web'] });
    const message = expectJsonError(await get('info', EP, { 'Context-Labels': 'Environment, Region' }), 400, [
      fixture.repos,
    ]);
    expect(message).toContain('Region');
  });

  it('lists every file variant with Files: true, and the matching ones with Files-Glob', async () => {
    const paths = async (headers: Record<string, string>) => {
      const files = ok(await get('info', EP, headers)).json.files as { name: string; path: string }[];
      for (const file of files) expect(file.name).toBe(file.path.slice(file.path.lastIndexOf('/') + 1));
      return files.map((file) => file.path).sort();
    };
    expect(await paths({ Files: 'true' })).toEqual([
      'conf/app.properties',
      'conf/app.properties',
      'conf/db.properties',
      'conf/old.xml',
      'conf/web.xml',
      'data/settings.json',
      'snippets/common.txt',
      'snippets/prod.txt',
    ]);
    expect(await paths({ 'Files-Glob': 'conf/*.properties' })).toEqual([
      'conf/app.properties',
      'conf/app.properties',
      'conf/db.properties',
    ]);
    // `*` also crosses `/`; the pattern matches the whole path.
    expect(await paths({ 'Files-Glob': '*.properties' })).toEqual([
      'conf/app.properties',
      'conf/app.properties',
      'conf/db.properties',
    ]);
    expect(await paths({ 'Files-Glob': 'conf' })).toEqual([]);
    expect(await paths({ 'Files-Glob': 'conf/{app,web}.*' })).toEqual([
      'conf/app.properties',
      'conf/app.properties',
      'conf/web.xml',
    ]);
    expect(await paths({ 'Files-Glob': '{data,snippets}/*' })).toEqual([
      'data/settings.json',
      'snippets/common.txt',
      'snippets/prod.txt',
    ]);
    expect(await paths({ 'Files-Glob': 'conf/???.xml' })).toEqual(['conf/old.xml', 'conf/web.xml']);
    expect(ok(await get('info', EP)).json).not.toHaveProperty('files');
  });

  it('lists the tags made with cfghub tag create, with Tags: true', async () => {
    const answer = ok(await get('info', TT, { Tags: 'true' }));
    expect(answer.json.tags).toHaveLength(1);
    const [tag] = answer.json.tags;
    expect(tag).toMatchObject({ name: 'v1', readme: 'first release' });
    expect(tag.date).toMatch(ISO_SECONDS);
    expect(tag.ts).toBe(Date.parse(tag.date));
    expect(ok(await get('info', TT)).json).not.toHaveProperty('tags');
    cliOk(fixture.repos, 'tag', 'create', TT, 'v2');
    const names = ok(await get('info', TT, { Tags: 'true' })).json.tags.map((t: { name: string }) => t.name);
    expect(names).toEqual(['v1', 'v2']);
  });
});

describe('GET /rest/export/{account}/{repository}', () => {
  it('answers the repository in the push format, inactive values and files included', async () => {
    const answer = ok(await get('export', EP));
    const { data } = answer.json as { data: Record<string, any>[] };
    expect(Object.keys(answer.json)).toEqual(['data']);
    const name = data.find((e) => e.key === 'app.name')!;
    expect(Object.keys(name)).toEqual(['key', 'readme', 'deprecated', 'vdt', 'push', 'values']);
    expect(name).toMatchObject({ readme: 'Shop name', deprecated: false, vdt: 'Text', push: true });
    expect(name.values).toHaveLength(4);
    expect(name.values).toContainEqual({ context: '*;*;n1', value: 'off', active: false });
    expect(name.values).toContainEqual({ context: 'Prod;*;*', value: 'shop-prod', active: true });
    expect(data.find((e) => e.key === 'app.locked')).toMatchObject({ push: false });
    expect(data.find((e) => e.key === 'app.flag')).toMatchObject({ deprecated: true, vdt: 'Boolean' });
    expect(data.find((e) => e.key === 'app.nothing')!.values).toEqual([
      { context: 'Dev;*;*', value: null, active: true },
    ]);
    expect(data.filter((e) => 'key' in e)).toHaveLength(13);
    expect(data.find((e) => e.key === 'app.unused')).toEqual({
      key: 'app.unused',
      readme: 'no values yet',
      deprecated: false,
      vdt: 'Text',
      push: true,
      values: [],
    });
    const files = data.filter((e) => 'file' in e);
    expect(files).toHaveLength(8);
    expect(files).toContainEqual({ file: 'conf/old.xml', context: ANY, content: '<old/>', active: false });
    expect(files).toContainEqual({
      file: 'conf/web.xml',
      context: '*;web;*',
      content: '<name>${ Mixed.Case }</name>',
      active: true,
    });
    // Keys come before files.
    const firstFile = data.findIndex((e) => 'file' in e);
    expect(data.slice(firstFile).every((e) => 'file' in e)).toBe(true);
  });

  it('leaves values out with Omit-Values and files with Omit-Files', async () => {
    const noValues = ok(await get('export', EP, { 'Omit-Values': 'true' })).json.data as Record<string, unknown>[];
    expect(noValues.filter((e) => 'key' in e)).toHaveLength(13);
    expect(noValues.some((e) => 'values' in e)).toBe(false);
    expect(noValues.filter((e) => 'file' in e)).toHaveLength(8);
    const noFiles = ok(await get('export', EP, { 'Omit-Files': 'true' })).json.data as Record<string, unknown>[];
    expect(noFiles.some((e) => 'file' in e)).toBe(false);
    expect(noFiles.filter((e) => 'values' in e)).toHaveLength(13);
    const neither = ok(await get('export', EP, { 'Omit-Files': 'true', 'Omit-Values': 'true' })).json.data as Record<
      string,
      unknown
    >[];
    expect(neither).toHaveLength(13);
    expect(neither.every((e) => Object.keys(e).join() === 'key,readme,deprecated,vdt,push')).toBe(true);
  });

  it('round-trips: pushed into a new repository with the same levels, every pull answers the same', async () => {
    const exported = ok(await get('export', EP)).json;
    await pushOk(COPY, { changeComment: 'import', enableKeyCreation: true, data: exported.data });
    // The copy exports the same.
    expect(ok(await get('export', COPY)).json).toEqual(exported);
    const items = [
      ['Prod', 'Dev', 'Qa', '*'],
      ['api', 'web', 'zzz', '*'],
      ['n1', 'n9', '*'],
    ];
    const headers = { 'Include-Comments': 'true', 'Include-Value-Context': 'true' };
    const strip = (body: Record<string, unknown>) => {
      const { account: _a, repo: _r, generatedOn: _g, ...rest } = body;
      return rest;
    };
    let compared = 0;
    for (const e of items[0]) {
      for (const a of items[1]) {
        for (const i of items[2]) {
          const context = `${e};${a};${i}`;
          const [source, copy] = await Promise.all([
            get('pull', EP, { Context: context, ...headers }),
            get('pull', COPY, { Context: context, ...headers }),
          ]);
          expect(ok(copy).json.repo).toBe('copy');
          expect(strip(copy.json), context).toEqual(strip(ok(source).json));
          compared++;
        }
      }
    }
    expect(compared).toBe(48);
    // And the pulls do hold something: typed values, embedded files.
    const prod = ok(await get('pull', COPY, { Context: 'Prod;web;n1' })).json;
    expect(prod.properties['app.port']).toEqual({ type: 'Integer', val: '9090' });
    expect(prod.properties['app.hosts']).toEqual({ type: 'List', val: ['p1'] });
    expect(prod.files['conf/app.properties'].content).toMatch(/^prod name=shop-prod /);
    const dev = ok(await get('pull', COPY, { Context: 'Dev;web;n1' })).json;
    expect(dev.files['conf/app.properties'].content).toBe(
      'name=shop\nport=8080\nhosts=["a","b"]\nembed=common false\nref=conf/app.properties\nnothing=null\n',
    );
  });
});

describe('ETag and If-None-Match', () => {
  it('answers every endpoint with an ETag, and 304 with an empty body to If-None-Match naming it', async () => {
    const headers = { Context: 'Prod;web;n1', File: 'conf/app.properties', KeyName: 'app.port' };
    for (const endpoint of ['pull', 'rawFile', 'info', 'keyData', 'export']) {
      const first = ok(await get(endpoint, EP, headers));
      const etag = first.headers.get('etag')!;
      const again = await get(endpoint, EP, { ...headers, 'If-None-Match': etag });
      expect(again.status, endpoint).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      // Another ETag, or another request, is answered in full.
      expect((await get(endpoint, EP, { ...headers, 'If-None-Match': '"0000"' })).status).toBe(200);
    }
    const dev = ok(await get('pull', EP, { Context: 'Dev;web;n1' }));
    const prod = ok(await get('pull', EP, { Context: 'Prod;web;n1' }));
    expect(dev.headers.get('etag')).not.toBe(prod.headers.get('etag'));
    expect((await get('pull', EP, { Context: 'Dev;web;n1', 'If-None-Match': prod.headers.get('etag')! })).status).toBe(
      200,
    );
  });
});

describe('reading the past: Tag and Repository-Date', () => {
  const pullTT = (headers: Record<string, string>) => get('pull', TT, { Context: 'Prod;web;n1', ...headers });
  const tKey = (answer: ReadAnswer) => ok(answer).json.properties['t.key'].val;

  it('reads at a tag with Tag, and says when with repoDate before generatedOn', async () => {
    const now = ok(await pullTT({}));
    expect(now.json.properties['t.key'].val).toBe('two');
    expect(now.json).not.toHaveProperty('repoDate');
    const old = ok(await pullTT({ Tag: 'v1' }));
    expect(Object.keys(old.json)).toEqual([
      'files',
      'properties',
      'account',
      'repo',
      'context',
      'repoDate',
      'generatedOn',
    ]);
    expect(old.json.properties).toEqual({ 't.key': { val: 'one' } });
    expect(old.json.files).toEqual({ 'conf/t.txt': { content: 't=one', 'content-type': 'text/plain' } });
    expect(old.json.repoDate).toBe(isoOf(tt.t1));
    expect(old.json.generatedOn).toMatch(ISO_SECONDS);
  });

  it('reads the last commit at or before Repository-Date', async () => {
    expect(tKey(await pullTT({ 'Repository-Date': isoOf(tt.t1) }))).toBe('one');
    const between = ok(await pullTT({ 'Repository-Date': isoOf(tt.t1 + 1) }));
    expect(between.json.properties['t.key'].val).toBe('one');
    expect(between.json.properties).not.toHaveProperty('t.new');
    expect(between.json.repoDate).toBe(isoOf(tt.t1));
    const second = ok(await pullTT({ 'Repository-Date': isoOf(tt.t2) }));
    expect(second.json.properties['t.new'].val).toBe('new');
    expect(second.json.repoDate).toBe(isoOf(tt.t2));
    expect(tKey(await pullTT({ 'Repository-Date': '2999-01-01T00:00:00Z' }))).toBe('two');
  });

  it('accepts a +hh:mm offset', async () => {
    expect(tKey(await pullTT({ 'Repository-Date': isoWithOffset(tt.t1 + 1, 120) }))).toBe('one');
    expect(tKey(await pullTT({ 'Repository-Date': isoWithOffset(tt.t2, 120) }))).toBe('two');
  });

  it('lets Tag win over Repository-Date, and treats empty headers as absent', async () => {
    expect(tKey(await pullTT({ Tag: 'v1', 'Repository-Date': isoOf(tt.t2) }))).toBe('one');
    const empty = ok(await pullTT({ Tag: '', 'Repository-Date': '' }));
    expect(empty.json.properties['t.key'].val).toBe('two');
    expect(empty.json).not.toHaveProperty('repoDate');
  });

  it('answers 404 JSON for a date before the repository existed and for an unknown tag', async () => {
    expectJsonError(await pullTT({ 'Repository-Date': isoOf(tt.created - 1) }), 404, [fixture.repos]);
    expectJsonError(await pullTT({ 'Repository-Date': '2000-01-01T00:00:00Z' }), 404, [fixture.repos]);
    expect(expectJsonError(await pullTT({ Tag: 'no-such-tag' }), 404, [fixture.repos])).toContain('no-such-tag');
    // A tag header names a tag, never another ref or a path.
    for (const tag of ['../heads/main', 'refs/heads/main', 'main', 'HEAD', tt.c1])
      expectJsonError(await pullTT({ Tag: tag }), 404, [fixture.repos]);
  });

  it('answers 400 JSON for a malformed date', async () => {
    for (const date of ['2020-02-30', 'yesterday', '2020-01-01 00:00:00', '2020-13-01T00:00:00Z']) {
      expect(expectJsonError(await pullTT({ 'Repository-Date': date }), 400, [fixture.repos]), date).toMatch(
        /Repository-Date|date/i,
      );
    }
  });

  it('applies to rawFile, info, keyData and export as well', async () => {
    for (const past of [{ Tag: 'v1' }, { 'Repository-Date': isoOf(tt.t1 + 1) }] as Record<string, string>[]) {
      const raw = ok(await get('rawFile', TT, { Context: 'Prod;web;n1', File: 'conf/t.txt', ...past }));
      expect(raw.text).toBe('t=one');
      expectJsonError(await get('rawFile', TT, { Context: 'Prod;web;n1', File: 'conf/new.txt', ...past }), 404);

      const info = ok(await get('info', TT, { Files: 'true', ...past }));
      expect(info.json.date).toBe(isoOf(tt.t1));
      expect(info.json.files.map((f: { path: string }) => f.path)).toEqual(['conf/t.txt']);

      expect(ok(await get('keyData', TT, { KeyName: 't.key', ...past })).json.readme).toBe('first readme');
      expectJsonError(await get('keyData', TT, { KeyName: 't.new', ...past }), 404);

      const exported = ok(await get('export', TT, past)).json.data as Record<string, any>[];
      expect(exported.map((e) => e.key ?? e.file)).toEqual(['t.key', 'conf/t.txt']);
      expect(exported[0].values).toEqual([{ context: ANY, value: 'one', active: true }]);
    }
    // The head, for comparison.
    expect(ok(await get('rawFile', TT, { Context: 'Prod;web;n1', File: 'conf/t.txt' })).text).toBe('t2=two');
    expect(ok(await get('keyData', TT, { KeyName: 't.key' })).json.readme).toBe('second readme');
    expect(ok(await get('info', TT)).json).not.toHaveProperty('date');
    for (const endpoint of ['rawFile', 'info', 'keyData', 'export']) {
      const headers = { Context: 'Prod;web;n1', File: 'conf/t.txt', KeyName: 't.key' };
      expectJsonError(await get(endpoint, TT, { ...headers, Tag: 'nope' }), 404);
      expectJsonError(await get(endpoint, TT, { ...headers, 'Repository-Date': 'yesterday' }), 400);
      expectJsonError(await get(endpoint, TT, { ...headers, 'Repository-Date': '2000-01-01T00:00:00Z' }), 404);
    }
  });
});
