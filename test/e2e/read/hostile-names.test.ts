/**
 * Names that are also properties of every JavaScript object: `__proto__`,
 * `constructor`, `toString`, `hasOwnProperty` as key names and file paths round-trip through
 * every answer (pull, info, export, keyData, history, diff). The real server and real repositories.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { read } from '../../support/reads.js';

const REPO = 'acme/proto';
const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

const fixture = serverForFile();
let first: string;
let second: string;

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment', '--token-free-push', '--token-free-pull');
  const base = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'base',
    enableKeyCreation: true,
    data: [{ key: 'plain', values: [{ context: '*', value: 'p' }] }],
  });
  expect(base.status).toBe(200);
  first = base.etag!.replace(/"/g, '');
  const data = [
    ...NAMES.map((name) => ({ key: name, values: [{ context: '*', value: `value of ${name}` }] })),
    ...NAMES.map((name) => ({ file: name, context: '*', content: `file ${name}` })),
    ...NAMES.map((name) => ({ file: `dir/${name}`, context: '*', content: `nested ${name}` })),
  ];
  const answer = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'hostile names',
    enableKeyCreation: true,
    data,
  });
  expect(answer.status, reasonOf(answer)).toBe(200);
  second = answer.etag!.replace(/"/g, '');
});

const own = (object: object, name: string) => Object.getOwnPropertyDescriptor(object, name)?.value;

describe('names of Object.prototype round-trip through every answer', () => {
  it('pull gives every such key and file', async () => {
    const answer = await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Prod' });
    expect(answer.status).toBe(200);
    for (const name of NAMES) {
      expect(own(answer.json.properties, name), name).toEqual({ val: `value of ${name}` });
      expect(own(answer.json.files, name)?.content, name).toBe(`file ${name}`);
      expect(own(answer.json.files, `dir/${name}`)?.content, name).toBe(`nested ${name}`);
    }
    expect(Object.keys(answer.json.properties)).toHaveLength(NAMES.length + 1);
  });

  it('keyData, rawFile, info and export give them', async () => {
    for (const name of NAMES) {
      const key = await read(fixture.server.url, `/rest/keyData/${REPO}`, { KeyName: name });
      expect(key.status, name).toBe(200);
      expect(key.json.key).toBe(name);
      const raw = await read(fixture.server.url, `/rest/rawFile/${REPO}`, { Context: 'Prod', File: name });
      expect(raw.text, name).toBe(`file ${name}`);
    }
    const info = await read(fixture.server.url, `/rest/info/${REPO}`, { Files: 'true' });
    expect(info.status).toBe(200);
    expect(info.json.files.map((file: { path: string }) => file.path).sort()).toEqual(
      [...NAMES, ...NAMES.map((n) => `dir/${n}`)].sort(),
    );
    const exported = await read(fixture.server.url, `/rest/export/${REPO}`);
    expect(exported.status).toBe(200);
    const keys = exported.json.data
      .filter((e: { key?: string }) => e.key !== undefined)
      .map((e: { key: string }) => e.key);
    expect(keys.sort()).toEqual([...NAMES, 'plain'].sort());
  });

  it('history and diff list every such key and file', async () => {
    const history = await read(fixture.server.url, `/rest/history/${REPO}`, { Limit: '1' });
    expect(history.status).toBe(200);
    const entry = history.json.commits[0];
    expect(entry.id).toBe(second);
    expect(entry.keys.map((k: { key: string }) => k.key).sort()).toEqual([...NAMES].sort());
    expect(entry.files).toHaveLength(NAMES.length * 2);
    const diff = await read(fixture.server.url, `/rest/diff/${REPO}`, { From: first, Context: 'Prod' });
    expect(diff.status).toBe(200);
    expect(diff.json.keys.map((k: { key: string }) => k.key).sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      expect(own(diff.json.resolved.properties.added, name), name).toEqual({ val: `value of ${name}` });
      expect(own(diff.json.resolved.files.added, name), name).toBeDefined();
    }
    const byKey = await read(fixture.server.url, `/rest/history/${REPO}`, { Key: '__proto__' });
    expect(byKey.json.commits.map((c: { id: string }) => c.id)).toEqual([second]);
  });
});
