/**
 * Plain-text renderings of a pull, against the real server: each round-trips
 * through a standard parser of its format (`properties`, `yaml`; env with its four readers in
 * env-rendering.test.ts) with values holding
 * new lines, `=`, `#`, `:`, backslashes, quotes, leading spaces and characters outside ASCII;
 * chosen by Accept or the `format` query parameter; JSON stays the default for every client
 * that does not ask (the ConfigHub Java client's Accept included).
 */
import dotenv from 'dotenv';
import properties from 'properties';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, pushTo, serverForFile } from '../../support/harness.js';

const REPO = 'acme/rendered';
const CONTEXT = 'Prod;web';
const fixture = serverForFile();

const TEXT_VALUES: Record<string, string> = {
  plain: 'localhost',
  'with.equals': 'a=b=c',
  'with.hash': '#not a comment',
  'with.colon': 'http://host:8080/path',
  'with.newline': 'line one\nline two\n',
  'with.tab': 'a\tb',
  'with.unicode': 'héllo wörld ✓ 😀 日本',
  'with.backslash': 'C:\\Program Files\\app',
  'with.single-quote': "it's",
  'with.double-quote': 'say "hi"',
  'with.both-quotes': `it's "quoted"`,
  'with.leading-space': '   padded   ',
  'with.exclamation': '!important',
  'with.dollar': '${ not.a.reference } $HOME',
  empty: '',
};

const LIST = ['a', 'b,c', 'd=e'];
const MAP = { host: 'db', 'port#': '5432' };

async function pullText(
  headers: Record<string, string>,
  query = '',
): Promise<{ status: number; type: string | null; etag: string | null; text: string }> {
  const response = await fetch(`${fixture.server.url}/rest/pull/${REPO}${query}`, {
    headers: { Context: CONTEXT, ...headers },
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    etag: response.headers.get('etag'),
    text: await response.text(),
  };
}

/** The values as the JSON pull gives them, as text (List and Map values as their JSON). */
async function expectedText(): Promise<Record<string, string>> {
  const json = JSON.parse((await pullText({})).text);
  return Object.fromEntries(
    Object.entries(json.properties as Record<string, { val: unknown }>).map(([k, p]) => [
      k,
      typeof p.val === 'string' ? p.val : JSON.stringify(p.val),
    ]),
  );
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  const pushed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'awkward values',
    enableKeyCreation: true,
    data: [
      ...Object.entries(TEXT_VALUES).map(([key, value]) => ({ key, values: [{ context: '*;*', value }] })),
      { key: 'a.list', vdt: 'List', values: [{ context: '*;*', value: LIST }] },
      { key: 'a.map', vdt: 'Map', values: [{ context: '*;*', value: MAP }] },
      { key: 'other.context', values: [{ context: 'Dev;*', value: 'not for Prod' }] },
      { key: 'not(env)', values: [{ context: '*;*', value: 'x' }] },
    ],
  });
  expect(pushed.status, pushed.body).toBe(200);
});

describe('renderings of a pull', () => {
  it('Java properties round-trip through the properties parser, in printable ASCII', async () => {
    const answer = await pullText({ Accept: 'text/x-java-properties' });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('text/x-java-properties; charset=utf-8');
    expect(answer.text).toMatch(/^[\x20-\x7e\n]*$/);
    // The properties package reads an empty value as null (Java's Properties reads "").
    const parsed = Object.fromEntries(
      Object.entries(properties.parse(answer.text) as Record<string, string | null>).map(([k, v]) => [k, v ?? '']),
    );
    expect(parsed).toEqual(await expectedText());
    expect(parsed['with.unicode']).toBe(TEXT_VALUES['with.unicode']);
    expect(JSON.parse(parsed['a.map'])).toEqual(MAP);
  });

  it('env carries environment variable names only, naming the others on its first line', async () => {
    const answer = await pullText({ Accept: 'text/plain' });
    expect(answer.type).toBe('text/plain; charset=utf-8');
    const { plain, empty, ...others } = await expectedText();
    // A dotted name would be run as a command by a shell sourcing the file: every other key is left out.
    expect(dotenv.parse(answer.text)).toEqual({ plain, empty });
    expect(answer.text.split('\n')[0]).toBe(
      `# left out, not environment variable names: ${Object.keys(others).join(', ')}`,
    );
  });

  it('YAML round-trips through the yaml parser, with List and Map values as sequences and mappings', async () => {
    const answer = await pullText({}, '?format=yaml');
    expect(answer.type).toBe('application/x-yaml; charset=utf-8');
    const parsed = parseYaml(answer.text) as Record<string, unknown>;
    expect(parsed['a.list']).toEqual(LIST);
    expect(parsed['a.map']).toEqual(MAP);
    for (const [key, value] of Object.entries(TEXT_VALUES)) expect(parsed[key], key).toBe(value);
    expect(parsed).not.toHaveProperty('other.context');
  });

  it('is chosen by the format parameter over Accept, and by the most preferred type of Accept', async () => {
    expect((await pullText({ Accept: 'application/x-yaml' }, '?format=env')).type).toBe('text/plain; charset=utf-8');
    expect((await pullText({ Accept: 'text/plain;q=0.5, text/x-java-properties' })).type).toBe(
      'text/x-java-properties; charset=utf-8',
    );
    expect((await pullText({ Accept: 'application/json, text/plain;q=0.1' })).type).toBe(
      'application/json; charset=utf-8',
    );
  });

  it('stays JSON for clients that do not ask: the Java client, curl, no Accept', async () => {
    for (const accept of ['text/html, image/gif, image/jpeg, */*; q=0.2', '*/*', '']) {
      const answer = await pullText(accept ? { Accept: accept } : {});
      expect(answer.type, accept).toBe('application/json; charset=utf-8');
      expect(JSON.parse(answer.text).properties.plain.val).toBe('localhost');
    }
  });

  it('refuses an unknown format with 400 naming the choices', async () => {
    const answer = await pullText({}, '?format=xml');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).message).toBe('format must be one of json, yaml, properties, env');
  });

  it('has an ETag of its own, which a watch holds like the JSON one', async () => {
    const env = await pullText({ Accept: 'text/plain' });
    const json = await pullText({});
    expect(env.etag).not.toBe(json.etag);
    expect((await pullText({ Accept: 'text/plain', 'If-None-Match': env.etag! })).status).toBe(304);
  });
});
