/**
 * Schemas checked on every write (docs/schemas.md): each kind (key, rendered file, context rule)
 * refusing and accepting, on both push forms, revert, restore and the admin API; a schema that
 * existing values break is refused listing them; nothing written on a refusal (git's refs and
 * object count unchanged). The real server on loopback, real bare repositories, the git CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectJsonError } from '../../support/reads.js';
import {
  cliOk,
  cliWithInput,
  commitCount,
  git,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  serverForFile,
  type PushAnswer,
} from '../../support/harness.js';

const REPO = 'acme/schemas';
const fixture = serverForFile();

/**
 * A token made by the command line while the server runs in this process: run as a child process
 * the test waits for (cliOk would hold this process's event loop, and the server's with it).
 */
async function tokenMade(...args: string[]): Promise<string> {
  const made = await cliWithInput(fixture.repos, '', ...args);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trim();
}

function send(body: unknown, headers: Record<string, string> = {}): Promise<PushAnswer> {
  return pushTo(fixture.server.url, `/rest/push/${REPO}`, body, headers);
}

/** Everything git holds of the repository: refs and the objects' count. */
function gitState(): string {
  const gitdir = gitdirOf(fixture.repos, REPO);
  return `${git(gitdir, 'show-ref')}\n${git(gitdir, 'count-objects', '-v')}`;
}

async function applied(body: unknown): Promise<void> {
  const before = commitCount(fixture.repos, REPO);
  const answer = await send(body);
  expect(answer.status, reasonOf(answer)).toBe(200);
  expect(commitCount(fixture.repos, REPO)).toBe(before + 1);
}

/** Pushes, expects the 304 refusal, nothing written; returns the reason. */
async function refused(body: unknown): Promise<string> {
  const state = gitState();
  const answer = await send(body);
  expect(answer.status, answer.body).toBe(304);
  expect(gitState()).toBe(state);
  return reasonOf(answer);
}

const portSchema = { key: 'db.port', schema: { type: 'integer', minimum: 1, maximum: 65535 } };

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application,Instance', '--token-free-push');
  await applied({
    changeComment: 'seed',
    enableKeyCreation: true,
    data: [
      {
        key: 'db.port',
        vdt: 'Integer',
        values: [
          { context: '*;*;*', value: 5432 },
          { context: 'Production;Billing;node-7', value: 6432 },
        ],
      },
      { key: 'db.host', values: [{ context: 'Production;*;*', value: 'db.prod' }] },
      { key: 'limits', vdt: 'Map', values: [{ context: '*;*;*', value: { max: 10 } }] },
      { file: 'conf/app.json', context: '*;*;*', content: '{"port": ${ db.port }, "host": "${ db.host }"}\n' },
    ],
  });
});

describe('key schemas', () => {
  it('a value its key schema refuses is a 304 naming key, context and rule; a fitting one is applied', async () => {
    await applied({ schemas: { keys: [portSchema] }, data: [] });
    const reason = await refused({
      data: [{ key: 'db.port', values: [{ context: 'Production;Billing;node-7', value: 0 }] }],
    });
    expect(reason).toContain('key db.port at Production;Billing;node-7');
    expect(reason).toContain('keys[0] (db.port)');
    expect(reason).toContain('must be >= 1');
    await applied({ data: [{ key: 'db.port', values: [{ context: 'Production;Billing;node-7', value: 7432 }] }] });
  });
});

/** A POST with a JSON body (or none), answered as text and JSON. */
async function post(path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${fixture.server.url}${path}`, {
    method: 'POST',
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : undefined };
}

describe('file schemas', () => {
  it('a change that makes a matched file fail to parse once rendered for a context is refused naming file, context and rule', async () => {
    await applied({
      schemas: {
        keys: [portSchema],
        files: [{ path: 'conf/*.json', format: 'json', schema: { type: 'object', required: ['port', 'host'] } }],
      },
      data: [],
    });
    // A quote in the host breaks the JSON where db.host resolves (Production contexts) only.
    const reason = await refused({
      data: [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db"prod' }] }],
    });
    expect(reason).toContain('file conf/app.json rendered for Production;Billing;node-7');
    expect(reason).toContain('files[0] (conf/*.json, json)');
    expect(reason).toMatch(/is not valid JSON/);
    expect(reason).not.toContain('for *;*;*');
    await applied({ data: [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db.prod.internal' }] }] });
  });

  it('the schema of a file is checked on the rendered data, context by context', async () => {
    const state = gitState();
    const answer = await send({
      data: [{ file: 'conf/app.json', context: '*;*;*', content: '{"port": ${ db.port }}\n' }],
    });
    expect(answer.status).toBe(304);
    expect(reasonOf(answer)).toMatch(
      /file conf\/app\.json rendered for .*: \(value\): must have required property 'host'/,
    );
    expect(gitState()).toBe(state);
  });
});

describe('context rules', () => {
  it('a change that leaves a matching context without a listed key is refused naming the context', async () => {
    await applied({
      schemas: {
        keys: [portSchema],
        files: [{ path: 'conf/*.json', format: 'json' }],
        rules: [{ context: 'Production;*;*', resolves: ['db.host'] }],
      },
      data: [],
    });
    const reason = await refused({ data: [{ key: 'db.host', values: { context: 'Production;*;*', opp: 'delete' } }] });
    expect(reason).toContain(
      'context Production;Billing;node-7 breaks schemas.yaml rules[0] (Production;*;*): does not resolve db.host',
    );
    // A new Production context is checked too: db.host resolves there through Production;*;*.
    await applied({ data: [{ key: 'db.port', values: [{ context: 'Production;Search;node-9', value: 9200 }] }] });
  });
});

describe('changing the schemas', () => {
  it('a schema that existing values break is refused listing them, by push (304) and by the admin API (409)', async () => {
    const tighter = {
      keys: [
        portSchema,
        { key: 'limits', schema: { type: 'object', properties: { max: { maximum: 5 } } } },
        { key: 'db.*', schema: { type: ['string', 'integer'], not: { const: 6432 } } },
      ],
    };
    const reason = await refused({ schemas: tighter, data: [] });
    expect(reason).toMatch(
      /^the change breaks the repository's schemas \(1 break\): key limits at \*;\*;\* breaks schemas\.yaml keys\[1\] \(limits\): \/max: must be <= 5/,
    );
    const token = await tokenMade('admin-token', 'create', '--name', 'schemas');
    const state = gitState();
    const answer = await post(
      `/rest/admin/repositories/${REPO}/schemas`,
      { schemas: tighter },
      { Authorization: `Bearer ${token}` },
    );
    expect(expectJsonError(answer, 409)).toContain('key limits at *;*;*');
    expect(gitState()).toBe(state);
    const shown = await fetch(`${fixture.server.url}/rest/admin/repositories/${REPO}/schemas`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect((await shown.json()).schemas.rules).toEqual([{ context: 'Production;*;*', resolves: ['db.host'] }]);
  });

  it('a schema that cannot be used (an unsafe pattern, too deep, not compiling) is a 4xx naming its entry', async () => {
    const token = await tokenMade('admin-token', 'create', '--name', 'bad-schemas');
    const auth = { Authorization: `Bearer ${token}` };
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'array', items: deep };
    for (const [schema, says] of [
      [{ type: 'string', pattern: '^(a+)+$' }, /exponential time/],
      [deep, /nests deeper than 32 levels/],
      [{ type: 'strnig' }, /does not compile/],
    ] as const) {
      const answer = await post(
        `/rest/admin/repositories/${REPO}/schemas`,
        { schemas: { keys: [{ key: 'db.host', schema }] } },
        auth,
      );
      const message = expectJsonError(answer, 400);
      expect(message).toMatch(says);
      expect(message).toContain('keys[0] (db.host)');
      expect(reasonOf(await send({ schemas: { keys: [{ key: 'db.host', schema }] }, data: [] }))).toMatch(says);
    }
  });
});

describe('revert and restore', () => {
  it('bringing back a value the schemas now refuse is refused (409), nothing written', async () => {
    await applied({ data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 99 }] }] });
    const low = headOf(fixture.repos, REPO);
    await applied({ data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 2000 }] }] });
    const changed = headOf(fixture.repos, REPO);
    await applied({
      schemas: {
        keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1000 } }],
        rules: [{ context: 'Production;*;*', resolves: ['db.host'] }],
      },
      data: [],
    });
    const state = gitState();
    const reverted = await post(`/rest/revert/${REPO}`, undefined, { Commit: changed });
    expect(expectJsonError(reverted, 409)).toContain(
      'key db.port at Staging;*;* breaks schemas.yaml keys[0] (db.port): (value): must be >= 1000',
    );
    const restored = await post(`/rest/restore/${REPO}`, undefined, { To: low });
    expect(expectJsonError(restored, 409)).toContain('key db.port at Staging;*;*');
    expect(gitState()).toBe(state);
  });
});

describe('the command line', () => {
  it('schemas set and show, on the repositories folder', () => {
    const file = join(fixture.repos, 'schemas-doc.yaml');
    writeFileSync(file, 'keys:\n  - key: db.port\n    schema: {type: integer, minimum: 1}\n');
    const set = JSON.parse(cliOk(fixture.repos, 'schemas', 'set', REPO, file, '--comment', 'Ports are positive'));
    expect(set.outcome).toBe('applied');
    expect(git(gitdirOf(fixture.repos, REPO), 'show', 'refs/heads/main:schemas.yaml')).toContain('minimum: 1');
    expect(JSON.parse(cliOk(fixture.repos, 'schemas', 'show', REPO))).toEqual({
      keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1 } }],
      files: [],
      rules: [],
    });
  });
});
