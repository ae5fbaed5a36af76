/**
 * File schemas in each format besides JSON (docs/schemas.md): YAML, properties, dotenv and TOML
 * files, rendered for each context a push reaches, accepted when they parse and satisfy their
 * schema, and refused (a push's 304 with the reason, nothing written) when the rendering for one
 * context no longer parses in its format or breaks its schema, naming the file, the context and
 * the entry of schemas.yaml. The real server on loopback, a real repository, checked with git.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';

const REPO = 'acme/formats';
const fixture = serverForFile();
const NODE = 'Production;Billing;node-7';

const head = () => git(gitdirOf(fixture.repos, REPO), 'rev-parse', 'refs/heads/main').trim();
const push = (body: object) => pushTo(fixture.server.url, `/rest/push/${REPO}`, body);
const hostAt = (context: string, value: string) => ({ data: [{ key: 'db.host', values: [{ context, value }] }] });

/** A push the schemas refuse with `breaks` breaks: a 304 whose reason holds each of `parts`, and the head unchanged. */
async function refused(body: object, breaks: number, ...parts: string[]): Promise<void> {
  const before = head();
  const answer = await push(body);
  expect(answer.status, answer.body).toBe(304);
  const reason = reasonOf(answer);
  expect(reason).toMatch(
    new RegExp(`^the change breaks the repository's schemas \\(${breaks} ${breaks === 1 ? 'break' : 'breaks'}\\): `),
  );
  for (const part of parts) expect(reason).toContain(part);
  expect(head()).toBe(before);
}

beforeAll(async () => {
  const made = await cliWithInput(
    fixture.repos,
    '',
    'repo',
    'create',
    REPO,
    '--context',
    'Environment,Application,Instance',
    '--token-free-push',
  );
  expect(made.code, made.stderr).toBe(0);
  const seed = await push({
    enableKeyCreation: true,
    data: [
      {
        key: 'db.host',
        values: [
          { context: '*;*;*', value: 'db.local' },
          { context: NODE, value: 'db7.prod' },
        ],
      },
      { key: 'db.port', vdt: 'Integer', values: [{ context: '*;*;*', value: 5432 }] },
      { file: 'conf/app.yaml', context: '*;*;*', content: 'host: ${ db.host }\nport: ${ db.port }\n' },
      { file: 'conf/app.properties', context: '*;*;*', content: 'host=${ db.host }\nport=${ db.port }\n' },
      { file: 'conf/app.env', context: '*;*;*', content: 'DB_HOST=${ db.host }\nDB_PORT=${ db.port }\n' },
      { file: 'conf/app.toml', context: '*;*;*', content: 'host = "${ db.host }"\nport = ${ db.port }\n' },
    ],
  });
  expect(seed.status, reasonOf(seed)).toBe(200);
});

describe('file schemas in YAML, properties, dotenv and TOML', () => {
  it('accepts a schemas document the renderings satisfy, and pushes that keep them valid', async () => {
    const before = head();
    const schemas = await push({
      data: [],
      schemas: {
        files: [
          {
            path: 'conf/*.yaml',
            format: 'yaml',
            schema: { type: 'object', required: ['host', 'port'], properties: { port: { type: 'integer' } } },
          },
          {
            path: 'conf/*.properties',
            format: 'properties',
            schema: { type: 'object', required: ['host', 'port'], properties: { port: { maximum: 65535 } } },
          },
          {
            path: 'conf/*.env',
            format: 'env',
            schema: { type: 'object', required: ['DB_HOST'], properties: { DB_HOST: { pattern: '^[^_]*$' } } },
          },
          {
            path: 'conf/*.toml',
            format: 'toml',
            schema: { type: 'object', required: ['host', 'port'], properties: { port: { type: 'integer' } } },
          },
        ],
      },
    });
    expect(schemas.status, reasonOf(schemas)).toBe(200);
    expect(git(gitdirOf(fixture.repos, REPO), 'show', 'refs/heads/main:schemas.yaml')).toContain('format: toml');
    const fine = await push(hostAt(NODE, 'db8.prod'));
    expect(fine.status, reasonOf(fine)).toBe(200);
    expect(git(gitdirOf(fixture.repos, REPO), 'rev-list', '--count', `${before}..refs/heads/main`).trim()).toBe('2');
  });

  it('refuses a YAML file that no longer parses once rendered, for the context where it breaks', async () => {
    await refused(
      hostAt(NODE, 'a: b: c'),
      1,
      `file conf/app.yaml rendered for ${NODE} breaks schemas.yaml files[0] (conf/*.yaml, yaml): is not valid YAML`,
    );
  });

  it('refuses a properties file whose data breaks its schema', async () => {
    await refused(
      { data: [{ key: 'db.port', values: [{ context: '*;*;*', value: 70000 }] }] },
      2, // at each context the change reaches: the named one and the file's own
      `file conf/app.properties rendered for ${NODE} breaks schemas.yaml files[1] (conf/*.properties, properties): /port: must be <= 65535`,
      'file conf/app.properties rendered for *;*;* breaks schemas.yaml files[1]',
    );
  });

  it('refuses a dotenv file whose data breaks its schema', async () => {
    await refused(
      hostAt(NODE, 'db_7'),
      1,
      `file conf/app.env rendered for ${NODE} breaks schemas.yaml files[2] (conf/*.env, env): /DB_HOST: must match pattern`,
    );
  });

  it('refuses a TOML file that no longer parses once rendered', async () => {
    await refused(
      hostAt(NODE, 'db"7'),
      1,
      `file conf/app.toml rendered for ${NODE} breaks schemas.yaml files[3] (conf/*.toml, toml): is not valid TOML`,
    );
  });
});
