/**
 * Every way a well-formed push is refused ("400 or 304" and "Applied or
 * refused as a whole"): 304, no body, the reason in the ETag header, and nothing changed in git.
 * The real server on loopback, real bare repositories, checked with the real git CLI.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { keyPath } from '../../../src/layout/layout.js';
import {
  cliOk,
  commitCount,
  git,
  gitdirOf,
  headOf,
  keyDocument,
  pushTo,
  reasonOf,
  serverForFile,
  type PushAnswer,
} from '../../support/harness.js';

const REPO = 'acme/app';
const NO_VDT = 'acme/novdt';
const ANY = '*;*;*';

const fixture = serverForFile();
/** A token of acme/app without force-key-push. */
let plainToken: string;
/** A token of acme/app created with --force-key-push. */
let forceToken: string;

interface PushVia {
  /** The repository of the path form (default acme/app); ignored when a token is given. */
  readonly repo?: string;
  /** Push through `/rest/push` with this token. */
  readonly token?: string;
}

function send(body: unknown, via: PushVia = {}): Promise<PushAnswer> {
  if (via.token !== undefined) return pushTo(fixture.server.url, '/rest/push', body, { 'Client-Token': via.token });
  return pushTo(fixture.server.url, `/rest/push/${via.repo ?? REPO}`, body);
}

/** Pushes and expects it applied with a new commit. */
async function applied(body: unknown, via: PushVia = {}): Promise<PushAnswer> {
  const repo = via.repo ?? REPO;
  const before = commitCount(fixture.repos, repo);
  const answer = await send(body, via);
  expect(answer.status, `expected 200, got ${answer.status} ${reasonOf(answer)}`).toBe(200);
  expect(answer.body).toBe('');
  expect(answer.etag).toBe(`"${headOf(fixture.repos, repo)}"`);
  expect(commitCount(fixture.repos, repo)).toBe(before + 1);
  return answer;
}

/** Pushes and expects 200 with no commit: HEAD stays, and is the ETag. */
async function noOp(body: unknown, via: PushVia = {}): Promise<PushAnswer> {
  const repo = via.repo ?? REPO;
  const head = headOf(fixture.repos, repo);
  const count = commitCount(fixture.repos, repo);
  const answer = await send(body, via);
  expect(answer.status, `expected 200, got ${answer.status} ${reasonOf(answer)}`).toBe(200);
  expect(answer.body).toBe('');
  expect(answer.etag).toBe(`"${head}"`);
  expect(headOf(fixture.repos, repo)).toBe(head);
  expect(commitCount(fixture.repos, repo)).toBe(count);
  return answer;
}

interface Refusal extends PushVia {
  /** The element the reason must start with, like `data[2]` or `data[0].values[1]`. */
  readonly at: string;
  /** What the reason must name after it, like `key db.port` or `file conf/x.txt`. */
  readonly names: string;
  /** What the reason must say. */
  readonly says: RegExp;
  /** Texts the reason must never contain: pushed values and passwords. */
  readonly secrets?: readonly string[];
}

/** Quoted, printable ASCII without `"` inside (so a single line). */
const ETAG_REASON = /^"[\x20\x21\x23-\x7e]+"$/;

/** Pushes and expects a 304 refusal: empty body, the reason in the ETag, nothing changed. */
async function refused(body: unknown, expected: Refusal): Promise<string> {
  const repo = expected.repo ?? REPO;
  const head = headOf(fixture.repos, repo);
  const count = commitCount(fixture.repos, repo);
  const answer = await send(body, expected);
  expect(answer.status, `expected 304, got ${answer.status} ${answer.body}`).toBe(304);
  expect(answer.body).toBe('');
  expect(answer.etag).toMatch(ETAG_REASON);
  const reason = reasonOf(answer);
  expect(reason.startsWith(expected.at), reason).toBe(true);
  expect(reason).toContain(expected.names);
  expect(reason).toMatch(expected.says);
  for (const secret of expected.secrets ?? []) expect(reason).not.toContain(secret);
  expect(headOf(fixture.repos, repo)).toBe(head);
  expect(commitCount(fixture.repos, repo)).toBe(count);
  return reason;
}

/** The key's YAML document at HEAD, parsed; null if the key does not exist. */
function keyAtHead(name: string, repo = REPO): any {
  const text = keyDocument(fixture.repos, repo, keyPath(name));
  return text === null ? null : YAML.parse(text);
}

/** The stored value of a key at a context (as written in the YAML), or undefined if none. */
function storedValue(name: string, context = ANY): string | null | undefined {
  const doc = keyAtHead(name);
  return doc?.values.find((v: { context: string }) => v.context === context)?.value;
}

/** A file's content at HEAD (active files, wildcard context by default), or null. */
function fileAtHead(path: string, contextFolder = '_;_;_'): string | null {
  try {
    return git(gitdirOf(fixture.repos, REPO), 'show', `refs/heads/main:files/${contextFolder}/${path}`);
  } catch {
    return null;
  }
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application,Instance', '--token-free-push');
  cliOk(
    fixture.repos,
    'repo',
    'create',
    NO_VDT,
    '--context',
    'Environment,Application,Instance',
    '--token-free-push',
    '--no-vdt',
  );
  plainToken = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'plain').trim();
  forceToken = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'force', '--force-key-push').trim();
  // The state every test starts from.
  await applied({
    changeComment: 'seed',
    enableKeyCreation: true,
    data: [
      { key: 'db.port', vdt: 'Integer', values: [{ context: ANY, value: 5432 }] },
      { key: 'db.host', values: [{ context: ANY, value: 'db.local' }] },
      { file: 'conf/app.properties', context: ANY, content: 'port=${ db.port }\n' },
      { file: 'conf/ref.txt', context: ANY, content: 'referenced by a FileRef\n' },
      { key: 'pointer', vdt: 'FileRef', values: [{ context: ANY, value: 'conf/ref.txt' }] },
    ],
  });
});

describe('a key that does not exist', () => {
  const newKey = (name: string, extra: Record<string, unknown> = {}) => ({
    ...extra,
    data: [{ key: name, values: [{ context: ANY, value: 'v-new-1' }] }],
  });

  it('is refused when enableKeyCreation is false', async () => {
    await refused(newKey('create.off', { enableKeyCreation: false }), {
      at: 'data[0]',
      names: 'key create.off',
      says: /does not exist.*key creation is off/,
      secrets: ['v-new-1'],
    });
    expect(keyAtHead('create.off')).toBeNull();
  });

  it('is refused by default on the path form without a token', async () => {
    await refused(newKey('create.default.path'), {
      at: 'data[0]',
      names: 'key create.default.path',
      says: /key creation is off/,
    });
  });

  it('is refused by default with a token that lacks force-key-push', async () => {
    await refused(newKey('create.default.plain'), {
      token: plainToken,
      at: 'data[0]',
      names: 'key create.default.plain',
      says: /key creation is off/,
    });
  });

  it('is created by default with a force-key-push token', async () => {
    await applied(newKey('create.default.force'), { token: forceToken });
    expect(storedValue('create.default.force')).toBe('v-new-1');
  });

  it('is refused with a force-key-push token when the push turns key creation off', async () => {
    await refused(newKey('create.force.off', { enableKeyCreation: false }), {
      token: forceToken,
      at: 'data[0]',
      names: 'key create.force.off',
      says: /key creation is off/,
    });
  });

  it('is created when enableKeyCreation is true, with the defaults of a new key', async () => {
    await applied(newKey('create.on', { enableKeyCreation: true }));
    expect(keyAtHead('create.on')).toMatchObject({
      key: 'create.on',
      readme: '',
      deprecated: false,
      vdt: 'Text',
      push: true,
    });
  });

  it('is found without regard to case, so an existing key needs no key creation', async () => {
    await applied({ data: [{ key: 'DB.HOST', values: [{ context: 'Dev;*;*', value: 'db.dev' }] }] });
    expect(keyAtHead('db.host').key).toBe('db.host');
    expect(storedValue('db.host', 'Dev;*;*')).toBe('db.dev');
  });
});

describe('key names', () => {
  it.each([
    { name: 'a space', key: 'db port', names: 'key db port' },
    { name: '121 characters', key: 'k'.repeat(121), names: 'key kkkkkkkkkk' },
    { name: 'empty', key: '', names: 'key' },
    { name: 'a slash', key: 'db/port', names: 'key db/port' },
    { name: 'a quote', key: 'db"port', names: 'key db?port' },
    { name: 'a non-ASCII letter', key: 'café', names: 'key caf?' },
  ])('refuses a key name with $name', async ({ key, names }) => {
    await refused(
      { enableKeyCreation: true, data: [{ key, values: [{ context: ANY, value: 'v-name-1' }] }] },
      { at: 'data[0]', names, says: /key names are 1-120/, secrets: ['v-name-1'] },
    );
  });

  it('accepts every allowed character, and 120 characters', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        { key: 'db.x[0](a)*', values: [{ context: ANY, value: 'brackets' }] },
        { key: 'a-b_c+d', values: [{ context: ANY, value: 'signs' }] },
        { key: 'k'.repeat(120), values: [{ context: ANY, value: 'long' }] },
      ],
    });
    expect(keyAtHead('db.x[0](a)*')).toMatchObject({ key: 'db.x[0](a)*' });
    expect(storedValue('db.x[0](a)*')).toBe('brackets');
    expect(storedValue('a-b_c+d')).toBe('signs');
    expect(storedValue('k'.repeat(120))).toBe('long');
  });
});

describe('value data types', () => {
  const fits: { type: string; value: unknown; stored: string | null }[] = [
    { type: 'Text', value: 'any text at all', stored: 'any text at all' },
    { type: 'Text', value: 5432, stored: '5432' },
    { type: 'Text', value: -12.5, stored: '-12.5' },
    { type: 'Text', value: true, stored: 'true' },
    { type: 'Text', value: null, stored: null },
    { type: 'Code', value: 'if (a) { b(); }', stored: 'if (a) { b(); }' },
    { type: 'JSON', value: '{"a":[1,2]}', stored: '{"a":[1,2]}' },
    { type: 'JSON', value: '"a string"', stored: '"a string"' },
    { type: 'JSON', value: { a: [1, 2] }, stored: '{"a":[1,2]}' },
    { type: 'Boolean', value: 'true', stored: 'true' },
    { type: 'Boolean', value: 'false', stored: 'false' },
    { type: 'Boolean', value: false, stored: 'false' },
    { type: 'Integer', value: '2147483647', stored: '2147483647' },
    { type: 'Integer', value: '-2147483648', stored: '-2147483648' },
    { type: 'Integer', value: 42, stored: '42' },
    { type: 'Long', value: '2147483648', stored: '2147483648' },
    { type: 'Long', value: 2147483648, stored: '2147483648' },
    { type: 'Long', value: '9223372036854775807', stored: '9223372036854775807' },
    { type: 'Long', value: '-9223372036854775808', stored: '-9223372036854775808' },
    { type: 'Float', value: '1.5', stored: '1.5' },
    { type: 'Float', value: '3.4e38', stored: '3.4e38' },
    { type: 'Float', value: 0.25, stored: '0.25' },
    { type: 'Double', value: '1e308', stored: '1e308' },
    { type: 'Double', value: '-2.5', stored: '-2.5' },
    { type: 'Map', value: '{"a":1}', stored: '{"a":1}' },
    { type: 'Map', value: { a: 1 }, stored: '{"a":1}' },
    { type: 'List', value: '[1,2]', stored: '[1,2]' },
    { type: 'List', value: [1, 'x'], stored: '[1,"x"]' },
    { type: 'FileRef', value: 'conf/ref.txt', stored: 'conf/ref.txt' },
    { type: 'FileEmbed', value: 'conf/app.properties', stored: 'conf/app.properties' },
  ];

  it.each(fits.map((c, i) => ({ ...c, i, shown: JSON.stringify(c.value) })))(
    'a $type key accepts $shown, stored as its text',
    async ({ type, value, stored, i }) => {
      const key = `fits.${type.toLowerCase()}.${i}`;
      await applied({ enableKeyCreation: true, data: [{ key, vdt: type, values: [{ context: ANY, value }] }] });
      const doc = keyAtHead(key);
      expect(doc.vdt).toBe(type);
      expect(doc.values).toEqual([{ context: ANY, value: stored, active: true }]);
    },
  );

  it('stores a number value as its text in the key YAML, as git show prints it', () => {
    const text = keyDocument(fixture.repos, REPO, keyPath('db.port'))!;
    expect(text).toBeTruthy();
    expect(YAML.parse(text).values[0].value).toBe('5432');
    // Quoted in YAML: a string, not a YAML number.
    expect(text).toMatch(/value: ["']5432["']/);
  });

  const misfits: { type: string; value: unknown; says: RegExp; secret?: string }[] = [
    { type: 'Boolean', value: 'True', says: /not a Boolean/, secret: 'True' },
    { type: 'Boolean', value: 'yes', says: /not a Boolean/, secret: 'yes' },
    { type: 'Boolean', value: 12, says: /not a Boolean/, secret: '12' },
    { type: 'Integer', value: '2147483648', says: /not an Integer/, secret: '2147483648' },
    { type: 'Integer', value: 2147483648, says: /not an Integer/, secret: '2147483648' },
    { type: 'Integer', value: '-2147483649', says: /not an Integer/, secret: '2147483649' },
    { type: 'Integer', value: '12a', says: /not an Integer/, secret: '12a' },
    { type: 'Integer', value: '1.5', says: /not an Integer/, secret: '1.5' },
    { type: 'Long', value: '9223372036854775808', says: /not a Long/, secret: '9223372036854775808' },
    { type: 'Long', value: '-9223372036854775809', says: /not a Long/, secret: '9223372036854775809' },
    { type: 'Long', value: 9223372036854775808, says: /number too large|not a Long/, secret: '922337203685477' },
    { type: 'Float', value: '1e39', says: /not a Float/, secret: '1e39' },
    { type: 'Float', value: 'NaN', says: /not a Float/, secret: 'NaN' },
    { type: 'Double', value: 'NaN', says: /not a Double/, secret: 'NaN' },
    { type: 'Double', value: 'Infinity', says: /not a Double/, secret: 'Infinity' },
    { type: 'Double', value: '-Infinity', says: /not a Double/, secret: 'Infinity' },
    { type: 'Double', value: '1e400', says: /not a Double/, secret: '1e400' },
    { type: 'Double', value: 'abc', says: /not a Double/, secret: 'abc' },
    { type: 'Map', value: '[1]', says: /not a Map/, secret: '[1]' },
    { type: 'Map', value: [1, 2], says: /not a Map/, secret: '[1,2]' },
    { type: 'Map', value: 'not json', says: /not a Map/, secret: 'not json' },
    { type: 'List', value: '{}', says: /not a List/, secret: '{}' },
    { type: 'List', value: { a: 1 }, says: /not a List/, secret: '{"a":1}' },
    { type: 'JSON', value: '{', says: /not a JSON/, secret: '{' },
    { type: 'JSON', value: "{'a':1}", says: /not a JSON/, secret: "'a'" },
    { type: 'Text', value: { a: 1 }, says: /object.*Text/, secret: '{"a":1}' },
    { type: 'Text', value: [1, 2], says: /array.*Text/, secret: '[1,2]' },
    { type: 'Code', value: { a: 1 }, says: /object.*Code/, secret: '{"a":1}' },
    { type: 'FileRef', value: 'no/such/file.txt', says: /names no file/, secret: 'no/such/file.txt' },
    { type: 'FileEmbed', value: 'no/such/embed.txt', says: /names no file/, secret: 'no/such/embed.txt' },
  ];

  it.each(misfits.map((c, i) => ({ ...c, i, shown: JSON.stringify(c.value) })))(
    'a $type key refuses $shown',
    async ({ type, value, says, secret, i }) => {
      const key = `misfit.${type.toLowerCase()}.${i}`;
      await refused(
        { enableKeyCreation: true, data: [{ key, vdt: type, values: [{ context: ANY, value }] }] },
        { at: 'data[0]', names: `key ${key}`, says, secrets: secret ? [secret] : [] },
      );
      expect(keyAtHead(key)).toBeNull();
    },
  );

  it('refuses a value that does not fit an existing key whose vdt is not in the element', async () => {
    await refused(
      { data: [{ key: 'db.port', values: [{ context: 'Prod;*;*', value: 'port-eighty' }] }] },
      { at: 'data[0]', names: 'key db.port', says: /not an Integer/, secrets: ['port-eighty'] },
    );
  });

  it('names the value element that does not fit, not only the key element', async () => {
    const reason = await refused(
      {
        data: [
          { key: 'db.host', values: [{ context: 'Qa;*;*', value: 'db.qa' }] },
          {
            key: 'db.port',
            values: [
              { context: 'Qa;*;*', value: 5433 },
              { context: 'Prod;*;*', value: 'nope-port' },
            ],
          },
        ],
      },
      { at: 'data[1]', names: 'key db.port', says: /not an Integer/, secrets: ['nope-port'] },
    );
    expect(reason).toMatch(/^data\[1\]\.values\[1\]/);
  });

  it('refuses an unknown vdt, also in another case (integer)', async () => {
    for (const vdt of ['integer', 'Int', 'TEXT', '']) {
      await refused(
        { enableKeyCreation: true, data: [{ key: 'vdt.unknown', vdt, values: [{ context: ANY, value: '7' }] }] },
        { at: 'data[0]', names: 'key vdt.unknown', says: /unknown vdt/ },
      );
    }
    expect(keyAtHead('vdt.unknown')).toBeNull();
  });

  it('keeps the stored vdt when the element has none', async () => {
    await applied({
      enableKeyCreation: true,
      data: [{ key: 'keeps.vdt', vdt: 'Boolean', values: [{ context: ANY, value: 'true' }] }],
    });
    await applied({ data: [{ key: 'keeps.vdt', values: [{ context: ANY, value: 'false' }] }] });
    expect(keyAtHead('keeps.vdt').vdt).toBe('Boolean');
    await refused(
      { data: [{ key: 'keeps.vdt', values: [{ context: ANY, value: 'maybe' }] }] },
      {
        at: 'data[0]',
        names: 'key keeps.vdt',
        says: /not a Boolean/,
        secrets: ['maybe'],
      },
    );
  });
});

describe('a repository with value data types off (--no-vdt)', () => {
  it('refuses a vdt other than Text', async () => {
    for (const vdt of ['Integer', 'Boolean', 'FileRef']) {
      await refused(
        { enableKeyCreation: true, data: [{ key: 'typed', vdt, values: [{ context: ANY, value: '1' }] }] },
        { repo: NO_VDT, at: 'data[0]', names: 'key typed', says: /value data types are off/ },
      );
    }
  });

  it('accepts vdt Text and no vdt', async () => {
    await applied(
      {
        enableKeyCreation: true,
        data: [
          { key: 'typed', vdt: 'Text', values: [{ context: ANY, value: 'one' }] },
          { key: 'untyped', values: [{ context: ANY, value: 'two' }] },
        ],
      },
      { repo: NO_VDT },
    );
    expect(keyAtHead('typed', NO_VDT).vdt).toBe('Text');
  });
});

describe('changing the vdt of a key', () => {
  beforeAll(async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        {
          key: 'retype.me',
          values: [
            { context: 'Production;*;*', value: 'abc-text' },
            { context: ANY, value: '7' },
          ],
        },
        { key: 'retype.ref', values: [{ context: ANY, value: 'nowhere/file.txt' }] },
      ],
    });
  });

  it('re-checks the existing values and names the context of the one that does not fit', async () => {
    const reason = await refused(
      { data: [{ key: 'retype.me', vdt: 'Integer' }] },
      {
        at: 'data[0]',
        names: 'key retype.me',
        says: /not an Integer/,
        secrets: ['abc-text'],
      },
    );
    expect(reason).toContain('Production;*;*');
    expect(keyAtHead('retype.me').vdt).toBe('Text');
  });

  it('re-checks FileRef values against the files of the repository', async () => {
    await refused(
      { data: [{ key: 'retype.ref', vdt: 'FileRef' }] },
      {
        at: 'data[0]',
        names: 'key retype.ref',
        says: /names no file/,
        secrets: ['nowhere/file.txt'],
      },
    );
  });

  it('is applied when the same push replaces the values that would not fit', async () => {
    await applied({
      data: [{ key: 'retype.me', vdt: 'Integer', values: [{ context: 'Production;*;*', value: '8' }] }],
    });
    expect(keyAtHead('retype.me')).toMatchObject({ vdt: 'Integer' });
    expect(storedValue('retype.me', 'Production;*;*')).toBe('8');
  });
});

describe('contexts', () => {
  it.each([
    { name: 'too few items', context: '*;*', says: /context has 2 items/ },
    { name: 'one item', context: 'Prod', says: /context has 1 item/ },
    { name: 'too many items', context: '*;*;*;*', says: /context has 4 items/ },
    { name: 'an item with a space', context: 'bad name;*;*', says: /context item 1/ },
    { name: 'an item with a double dot', context: '*;a..b;*', says: /context item 2/ },
    { name: 'an item with a slash', context: '*;*;a/b', says: /context item 3/ },
    { name: 'an item of 121 characters', context: `${'p'.repeat(121)};*;*`, says: /context item 1/ },
  ])('refuses a value context with $name', async ({ context, says }) => {
    await refused(
      { data: [{ key: 'db.host', values: [{ context, value: 'ctx-value-1' }] }] },
      {
        at: 'data[0].values[0]',
        names: 'key db.host',
        says,
        secrets: ['ctx-value-1'],
      },
    );
  });

  it('refuses a value without context', async () => {
    await refused(
      { data: [{ key: 'db.host', values: [{ value: 'no-ctx-value' }] }] },
      {
        at: 'data[0].values[0]',
        names: 'key db.host',
        says: /no context/,
        secrets: ['no-ctx-value'],
      },
    );
  });

  it('refuses a file without context, or with a wrong one', async () => {
    await refused(
      { data: [{ file: 'ctx/none.txt', content: 'x' }] },
      { at: 'data[0]', names: 'file ctx/none.txt', says: /no context/ },
    );
    await refused(
      { data: [{ file: 'ctx/few.txt', context: '*', content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file ctx/few.txt',
        says: /context has 1 item/,
      },
    );
    await refused(
      { data: [{ file: 'ctx/bad.txt', context: 'bad name;*;*', content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file ctx/bad.txt',
        says: /context item 1/,
      },
    );
  });

  it('takes an empty item as a wildcard', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        {
          key: 'ctx.empty',
          values: [
            { context: ';;', value: 'global' },
            { context: 'Prod;;', value: 'prod' },
          ],
        },
      ],
    });
    const doc = keyAtHead('ctx.empty');
    expect(doc.values.map((v: { context: string }) => v.context).sort()).toEqual(['*;*;*', 'Prod;*;*']);
    // The same contexts written with `*` are the same values: nothing changes.
    await noOp({
      data: [
        {
          key: 'ctx.empty',
          values: [
            { context: '*;*;*', value: 'global' },
            { context: 'prod;*;*', value: 'prod' },
          ],
        },
      ],
    });
  });
});

describe('the push flag of a key', () => {
  beforeAll(async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        {
          key: 'locked.key',
          push: false,
          values: [
            { context: ANY, value: 'locked-1' },
            { context: 'Prod;*;*', value: 'locked-2' },
          ],
        },
        { key: 'locked.gone', push: false, values: [{ context: ANY, value: 'x' }] },
      ],
    });
    expect(keyAtHead('locked.key').push).toBe(false);
  });

  const locked = { names: 'key locked.key', says: /push is disabled/ };

  it('refuses an update without a force-key-push token', async () => {
    await refused(
      { data: [{ key: 'locked.key', values: [{ context: ANY, value: 'changed-1' }] }] },
      { at: 'data[0]', ...locked, secrets: ['changed-1'] },
    );
    await refused(
      { data: [{ key: 'locked.key', values: [{ context: ANY, value: 'changed-1' }] }] },
      { token: plainToken, at: 'data[0]', ...locked },
    );
  });

  it('refuses turning the flag back on, or only changing the readme', async () => {
    await refused({ data: [{ key: 'locked.key', push: true }] }, { at: 'data[0]', ...locked });
    await refused(
      { data: [{ key: 'LOCKED.KEY', readme: 'new docs' }] },
      { token: plainToken, at: 'data[0]', names: 'key LOCKED.KEY', says: /push is disabled/ },
    );
  });

  it('refuses deleting the key or one of its values without a force-key-push token', async () => {
    await refused({ data: [{ key: 'locked.key', opp: 'delete' }] }, { at: 'data[0]', ...locked });
    await refused(
      { data: [{ key: 'locked.key', values: [{ context: 'Prod;*;*', opp: 'delete' }] }] },
      { token: plainToken, at: 'data[0]', ...locked },
    );
    expect(storedValue('locked.key', 'Prod;*;*')).toBe('locked-2');
  });

  it('applies an update, a value delete and a key delete with a force-key-push token', async () => {
    await applied(
      { data: [{ key: 'locked.key', values: [{ context: ANY, value: 'forced-1' }] }] },
      { token: forceToken },
    );
    expect(storedValue('locked.key')).toBe('forced-1');
    await applied(
      { data: [{ key: 'locked.key', values: [{ context: 'Prod;*;*', opp: 'delete' }] }] },
      { token: forceToken },
    );
    expect(storedValue('locked.key', 'Prod;*;*')).toBeUndefined();
    await applied({ data: [{ key: 'locked.gone', opp: 'delete' }] }, { token: forceToken });
    expect(keyAtHead('locked.gone')).toBeNull();
  });
});

describe('security groups', () => {
  it('refuses a non-empty securityGroup on a key, without echoing the password or the value', async () => {
    await refused(
      {
        enableKeyCreation: true,
        data: [
          {
            key: 'secret.key',
            securityGroup: 'admins',
            password: 'hunter2-password',
            values: [{ context: ANY, value: 'secret-value-9' }],
          },
        ],
      },
      {
        at: 'data[0]',
        names: 'key secret.key',
        says: /security group admins does not exist/,
        secrets: ['hunter2-password', 'secret-value-9'],
      },
    );
    await refused(
      { data: [{ key: 'db.host', securityGroup: 'ops', password: 'pw-ops-1' }] },
      {
        at: 'data[0]',
        names: 'key db.host',
        says: /security group ops does not exist/,
        secrets: ['pw-ops-1'],
      },
    );
  });

  it('refuses a non-empty securityGroup on a file', async () => {
    await refused(
      {
        data: [
          {
            file: 'secure/file.txt',
            context: ANY,
            content: 'secret-content-7',
            securityGroup: 'admins',
            password: 'hunter3-password',
          },
        ],
      },
      {
        at: 'data[0]',
        names: 'file secure/file.txt',
        says: /security group admins does not exist/,
        secrets: ['hunter3-password', 'secret-content-7'],
      },
    );
  });

  it('accepts an empty securityGroup, and ignores a password on a key that has no group', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        { key: 'open.key', securityGroup: '', password: '', values: [{ context: ANY, value: 'open' }] },
        { key: 'open.key2', password: 'ignored-password', values: [{ context: ANY, value: 'open2' }] },
        { file: 'open/file.txt', context: ANY, content: 'open', securityGroup: '' },
      ],
    });
    expect(storedValue('open.key')).toBe('open');
    expect(storedValue('open.key2')).toBe('open2');
    expect(fileAtHead('open/file.txt')).toBe('open');
  });
});

describe('file paths', () => {
  const long1025 = `${'d'.repeat(99)}/`.repeat(10) + 'f'.repeat(25); // 1,025 characters
  const long1024 = long1025.slice(0, 1024);

  it.each([
    { name: 'a .. segment', file: 'conf/../etc/passwd', says: /'\.\.' segment/ },
    { name: 'only ..', file: '..', says: /'\.\.' segment/ },
    { name: 'a . segment', file: 'conf/./x.txt', says: /'\.' segment/ },
    { name: 'an empty segment', file: 'a//b', says: /empty segment/ },
    { name: 'a trailing slash', file: 'conf/', says: /empty segment/ },
    { name: 'two leading slashes', file: '//etc/x', says: /empty segment/ },
    { name: 'a backslash', file: 'conf\\x.txt', says: /backslash/ },
    { name: 'a control character', file: 'conf/a\u0001b.txt', says: /control character/ },
    { name: 'a newline', file: 'conf/a\nb.txt', says: /control character/ },
    { name: 'a .git segment', file: '.git/config', says: /'\.git' segment/ },
    { name: 'a .GIT segment', file: 'a/.GIT/b', says: /'\.git' segment/ },
    { name: 'a .Git segment at the end', file: 'a/.Git', says: /'\.git' segment/ },
    { name: '1,025 characters', file: long1025, says: /longer than 1024/ },
    { name: 'nothing', file: '', says: /empty/ },
    { name: 'only a slash', file: '/', says: /empty/ },
  ])('refuses a path with $name', async ({ file, says }) => {
    const reason = await refused(
      { data: [{ file, context: ANY, content: 'path-content-1' }] },
      {
        at: 'data[0]',
        names: 'file',
        says,
        secrets: ['path-content-1'],
      },
    );
    expect(reason).toMatch(/^data\[0\] file /);
  });

  it('accepts a path of 1,024 characters and drops one leading slash', async () => {
    expect(long1024).toHaveLength(1024);
    await applied({
      data: [
        { file: `/${long1024}`, context: ANY, content: 'long' },
        { file: '/lead/slash.txt', context: ANY, content: 'lead' },
      ],
    });
    expect(fileAtHead(long1024)).toBe('long');
    expect(fileAtHead('lead/slash.txt')).toBe('lead');
  });

  it('refuses a path that differs only in case from an existing one', async () => {
    await refused(
      { data: [{ file: 'conf/App.properties', context: ANY, content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file conf/App.properties',
        says: /differs only in case/,
      },
    );
    await refused(
      { data: [{ file: 'CONF/other.txt', context: 'Prod;*;*', content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file CONF/other.txt',
        says: /differs only in case/,
      },
    );
  });

  it('refuses two new paths that differ only in case in one push', async () => {
    await refused(
      {
        data: [
          { file: 'twin/a.txt', context: ANY, content: 'x' },
          { file: 'twin/A.txt', context: ANY, content: 'y' },
        ],
      },
      { at: 'data[1]', names: 'file twin/A.txt', says: /differs only in case/ },
    );
  });

  it('refuses a path under an existing file, and a path that is a folder of an existing file', async () => {
    await refused(
      { data: [{ file: 'conf/app.properties/inner.txt', context: ANY, content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file conf/app.properties/inner.txt',
        says: /already a file/,
      },
    );
    await refused(
      { data: [{ file: 'conf', context: 'Prod;*;*', content: 'x' }] },
      {
        at: 'data[0]',
        names: 'file conf',
        says: /already a folder/,
      },
    );
  });

  it('accepts the same path in another context (paths are case-sensitive, contexts are not)', async () => {
    await applied({ data: [{ file: 'conf/app.properties', context: 'Prod;*;*', content: 'port=${db.port}\nprod\n' }] });
    expect(fileAtHead('conf/app.properties', 'Prod;_;_')).toBe('port=${db.port}\nprod\n');
  });
});

describe('file templates', () => {
  it('refuses a template that references a key that does not exist', async () => {
    await refused(
      { data: [{ file: 'tpl/missing.txt', context: ANY, content: 'a=${ no.such.key }\n' }] },
      {
        at: 'data[0]',
        names: 'file tpl/missing.txt',
        says: /references key no\.such\.key/,
      },
    );
  });

  it('accepts a template that references an existing key, in any case', async () => {
    await applied({ data: [{ file: 'tpl/ok.txt', context: ANY, content: 'host=${ DB.Host }\nport=${db.port}\n' }] });
    expect(fileAtHead('tpl/ok.txt')).toBe('host=${ DB.Host }\nport=${db.port}\n');
  });

  it('accepts a template whose key is created later in the same push', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        { file: 'tpl/later.txt', context: ANY, content: 'x=${ made.later }\n' },
        { key: 'made.later', values: [{ context: ANY, value: 'later' }] },
      ],
    });
    expect(storedValue('made.later')).toBe('later');
  });

  it('refuses a template whose key is deleted later in the same push', async () => {
    await applied({ enableKeyCreation: true, data: [{ key: 'short.lived', values: [{ context: ANY, value: 'x' }] }] });
    await refused(
      {
        data: [
          { file: 'tpl/dangling.txt', context: ANY, content: 'x=${short.lived}\n' },
          { key: 'short.lived', opp: 'delete' },
        ],
      },
      // Either element may carry the blame: the file's reference or the key's deletion.
      {
        at: 'data[',
        names: 'short.lived',
        says: /^data\[0\] file tpl\/dangling\.txt: .*does not exist|^data\[1\] key short\.lived: cannot delete/,
      },
    );
    expect(keyAtHead('short.lived')).not.toBeNull();
  });

  it('refuses deleting a key that a file references', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        { key: 'ref.target', values: [{ context: ANY, value: 'target' }] },
        { file: 'tpl/uses.txt', context: ANY, content: 'v=${ref.target}\n' },
      ],
    });
    await refused(
      { data: [{ key: 'ref.target', opp: 'delete' }] },
      {
        at: 'data[0]',
        names: 'key ref.target',
        says: /cannot delete, file tpl\/uses\.txt references it/,
      },
    );
    expect(keyAtHead('ref.target')).not.toBeNull();
  });

  it('applies deleting the file and the key it references together, in either order', async () => {
    await applied({
      data: [
        { key: 'ref.target', opp: 'delete' },
        { file: 'tpl/uses.txt', context: ANY, opp: 'delete' },
      ],
    });
    expect(keyAtHead('ref.target')).toBeNull();
    expect(fileAtHead('tpl/uses.txt')).toBeNull();
  });

  it('keeps a key whose last value is deleted', async () => {
    await applied({ data: [{ key: 'made.later', values: [{ context: ANY, opp: 'delete' }] }] });
    expect(keyAtHead('made.later')).toMatchObject({ key: 'made.later', values: [] });
  });
});

describe('file references (FileRef, FileEmbed)', () => {
  it('refuses deleting a file that a FileRef value points at', async () => {
    await refused(
      { data: [{ file: 'conf/ref.txt', context: ANY, opp: 'delete' }] },
      {
        at: 'data[0]',
        names: 'file conf/ref.txt',
        // Several keys point at it (pointer, and FileRef keys of the vdt tests): any may be named.
        says: /cannot delete, key \S+ refers to it/,
      },
    );
    expect(fileAtHead('conf/ref.txt')).not.toBeNull();
  });

  it('accepts a FileRef value that names the file with a leading slash', async () => {
    await applied({
      enableKeyCreation: true,
      data: [{ key: 'pointer.slash', vdt: 'FileRef', values: [{ context: ANY, value: '/conf/ref.txt' }] }],
    });
    expect(['/conf/ref.txt', 'conf/ref.txt']).toContain(storedValue('pointer.slash'));
  });

  it('accepts a FileRef value to a file created later in the same push', async () => {
    await applied({
      enableKeyCreation: true,
      data: [
        { key: 'pointer.later', vdt: 'FileEmbed', values: [{ context: ANY, value: 'later/target.txt' }] },
        { file: 'later/target.txt', context: 'Prod;*;*', content: 'target' },
      ],
    });
    expect(storedValue('pointer.later')).toBe('later/target.txt');
  });

  it('refuses a FileRef value to a file deleted later in the same push', async () => {
    await refused(
      {
        data: [
          { key: 'pointer.later', values: [{ context: 'Qa;*;*', value: 'later/target.txt' }] },
          { file: 'later/target.txt', context: 'prod;*;*', opp: 'delete' },
        ],
      },
      // Either element may carry the blame: the key's value or the file's deletion.
      {
        at: 'data[',
        names: 'pointer.later',
        says: /^data\[0\]\S* key pointer\.later: .*names no file|^data\[1\] file later\/target\.txt: cannot delete/,
      },
    );
    expect(storedValue('pointer.later', 'Qa;*;*')).toBeUndefined();
  });
});

describe('deleting', () => {
  it('refuses opp delete on a key together with values', async () => {
    await refused(
      { data: [{ key: 'db.host', opp: 'delete', values: [{ context: ANY, value: 'del-value-3' }] }] },
      {
        at: 'data[0]',
        names: 'key db.host',
        says: /deleting a key takes no values/,
        secrets: ['del-value-3'],
      },
    );
    expect(keyAtHead('db.host')).not.toBeNull();
  });

  it('answers 200 without a commit for a key, a value or a file that does not exist', async () => {
    await noOp({ data: [{ key: 'never.existed', opp: 'delete' }] });
    await noOp({ data: [{ key: 'db.host', values: [{ context: 'Nowhere;*;*', opp: 'delete' }] }] });
    await noOp({ data: [{ file: 'no/such/file.txt', context: ANY, opp: 'delete' }] });
    await noOp({ data: [{ file: 'conf/app.properties', context: 'Nowhere;*;*', opp: 'delete' }] });
  });

  // "Deleting what does not exist is a no-op", also for a value of a key that
  // does not exist, whether key creation is off
  it('answers 200 without a commit for a value of a key that does not exist, key creation off', async () => {
    await noOp({ data: [{ key: 'never.existed', values: [{ context: ANY, opp: 'delete' }] }] });
  });

  // ... or on (the key must not be created with no values).
  it('answers 200 without a commit for a value of a key that does not exist, key creation on', async () => {
    await noOp({
      enableKeyCreation: true,
      data: [{ key: 'never.existed2', values: [{ context: ANY, opp: 'delete' }] }],
    });
    expect(keyAtHead('never.existed2')).toBeNull();
  });
});

describe('the change comment', () => {
  it('refuses a change comment with a NUL character (git cannot carry it)', async () => {
    await refused(
      {
        changeComment: 'before\u0000after',
        enableKeyCreation: true,
        data: [{ key: 'nul.comment', values: [{ context: ANY, value: 'x' }] }],
      },
      { at: 'changeComment', names: 'changeComment', says: /NUL/ },
    );
    expect(keyAtHead('nul.comment')).toBeNull();
  });
});

describe('atomicity', () => {
  it('changes nothing when the last element is refused after valid ones', async () => {
    const hostBefore = storedValue('db.host');
    await refused(
      {
        changeComment: 'half a push',
        enableKeyCreation: true,
        data: [
          { key: 'atom.one', values: [{ context: ANY, value: 'one' }] },
          { key: 'db.host', values: [{ context: ANY, value: 'atom-host' }] },
          { file: 'atom/file.txt', context: ANY, content: 'atom' },
          { key: 'db.host', readme: 'changed readme' },
          { key: 'bad key', values: [{ context: ANY, value: 'x' }] },
        ],
      },
      { at: 'data[4]', names: 'key bad key', says: /key names/ },
    );
    expect(keyAtHead('atom.one')).toBeNull();
    expect(storedValue('db.host')).toBe(hostBefore);
    expect(keyAtHead('db.host').readme).toBe('');
    expect(fileAtHead('atom/file.txt')).toBeNull();
    expect(git(gitdirOf(fixture.repos, REPO), 'log', '--format=%s')).not.toContain('half a push');
  });

  it('changes nothing when a late reference check fails after valid elements', async () => {
    await refused(
      {
        enableKeyCreation: true,
        data: [
          { key: 'atom.two', values: [{ context: ANY, value: 'two' }] },
          { file: 'atom/tpl.txt', context: ANY, content: '${ atom.missing }' },
        ],
      },
      { at: 'data[1]', names: 'file atom/tpl.txt', says: /atom\.missing/ },
    );
    expect(keyAtHead('atom.two')).toBeNull();
  });
});

describe('Float bounds', () => {
  // "3.4028235E38" is Java's Float.toString(Float.MAX_VALUE), a decimal that rounds to the largest
  // finite 32-bit float; the check is against the rounding threshold, not the exact double.
  it('accepts the text of the largest finite Float, and refuses the next decimal that overflows', async () => {
    await applied({
      enableKeyCreation: true,
      data: [{ key: 'float.max', vdt: 'Float', values: [{ context: ANY, value: '3.4028235E38' }] }],
    });
    expect(storedValue('float.max')).toBe('3.4028235E38');
    await refused(
      { data: [{ key: 'float.max', values: [{ context: ANY, value: '3.4028236E38' }] }] },
      {
        at: 'data[0]',
        names: 'key float.max',
        says: /not a Float/,
        secrets: ['3.4028236E38'],
      },
    );
  });
});

describe('number values', () => {
  // A JSON number too large for a double (1e400) parses to Infinity, whose JSON text is "null": it
  // must be kept as its text ("1e400") or refused with a 304, never stored as "null".
  it('never stores a number as the text "null"', async () => {
    const head = headOf(fixture.repos, REPO);
    const answer = await send(
      '{"enableKeyCreation":true,"data":[{"key":"num.huge","values":[{"context":"*;*;*","value":1e400}]}]}',
    );
    if (answer.status === 304) {
      expect(headOf(fixture.repos, REPO)).toBe(head);
      expect(reasonOf(answer)).not.toContain('1e400');
    } else {
      expect(answer.status).toBe(200);
      expect(storedValue('num.huge')).toBe('1e400');
    }
  });
});
