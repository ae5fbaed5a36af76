/**
 * The listing, `GET /rest/info/all` (seed section 4.1, contract section 5).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, getJson, git, gitdirOf, pushTo, startTestServer, tempDir, type TestServer } from '../support/harness.js';

let dir: ReturnType<typeof tempDir>;
let server: TestServer;

beforeAll(async () => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', 'beta/one', '--context', 'Env,App', '--token-free-push', '--description', 'The first');
  cliOk(dir.path, 'repo', 'create', 'Alpha/zed', '--context', 'Env', '--private', '--personal', '--access-controls', '--no-security', '--context-groups');
  cliOk(dir.path, 'repo', 'create', 'alpha/Beta', '--context', 'Env');
  server = await startTestServer(dir.path);
});

afterAll(async () => {
  await server.close();
  dir.remove();
});

const FIELD_ORDER = [
  'account', 'name', 'isPrivate', 'isPersonal', 'description', 'created', 'accessControlsEnabled', 'vdtEnabled',
  'securityEnabled', 'contextGroupsEnabled', 'keyCount', 'valueCount', 'userCount', 'context',
];

/** The seed's section 2.1: every field marked "always", with its type; `description` optional. */
function expectSeedShape(record: Record<string, unknown>): void {
  const types: Record<string, string> = {
    account: 'string', name: 'string', isPrivate: 'boolean', isPersonal: 'boolean', created: 'string', accessControlsEnabled: 'boolean',
    vdtEnabled: 'boolean', securityEnabled: 'boolean', contextGroupsEnabled: 'boolean', keyCount: 'number', valueCount: 'number', userCount: 'number',
  };
  for (const [field, type] of Object.entries(types)) expect(typeof record[field], `${field} of ${JSON.stringify(record)}`).toBe(type);
  expect(Array.isArray(record.context) && record.context.every((level) => typeof level === 'string'), JSON.stringify(record)).toBe(true);
  expect(record.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(Object.keys(record).every((field) => field in types || field === 'context' || field === 'description'), JSON.stringify(record)).toBe(true);
}

describe('GET /rest/info/all', () => {
  it('lists every repository sorted by account then name without regard to case, fields in the seed order', async () => {
    const { status, json, headers } = await getJson(server.url, '/rest/info/all');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    // `alpha` and `Alpha` are one account: the folder keeps the spelling it was created with.
    expect(json.map((r: { account: string; name: string }) => `${r.account}/${r.name}`)).toEqual(['Alpha/Beta', 'Alpha/zed', 'beta/one']);
    for (const record of json) {
      const order = FIELD_ORDER.filter((field) => field in record);
      expect(Object.keys(record)).toEqual(order);
      expect(record.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect(json[1]).toMatchObject({ isPrivate: true, isPersonal: true, accessControlsEnabled: true, securityEnabled: false, contextGroupsEnabled: true, vdtEnabled: true });
    expect('description' in json[0]).toBe(false);
    expect(json[2].description).toBe('The first');
  });

  it('counts keys and values, inactive values included', async () => {
    const answer = await pushTo(server.url, '/rest/push/beta/one', {
      enableKeyCreation: true,
      data: [
        { key: 'a', values: [{ context: '*;*', value: '1' }, { context: 'Prod;*', value: '2', active: false }] },
        { key: 'b', values: [] },
      ],
    });
    expect(answer.status).toBe(200);
    const { json } = await getJson(server.url, '/rest/info/all');
    expect(json[2]).toMatchObject({ keyCount: 2, valueCount: 2, userCount: 0 });
  });

  it('counts only active tokens as users', async () => {
    cliOk(dir.path, 'token', 'create', 'beta/one', '--name', 'a');
    cliOk(dir.path, 'token', 'create', 'beta/one', '--name', 'b');
    cliOk(dir.path, 'token', 'revoke', 'beta/one', 'a');
    const { json } = await getJson(server.url, '/rest/info/all');
    expect(json[2].userCount).toBe(1);
  });

  it('indents with Pretty: true in any case, and only then', async () => {
    const pretty = await getJson(server.url, '/rest/info/all', { Pretty: 'TRUE' });
    expect(pretty.text).toContain('\n  {\n    "account"');
    const compact = await getJson(server.url, '/rest/info/all', { Pretty: 'yes' });
    expect(compact.text).not.toContain('\n');
    expect(compact.json).toEqual(pretty.json);
  });

  it('accepts Client-Version v1.x and an empty one, and refuses a malformed or other major version with 400', async () => {
    expect((await getJson(server.url, '/rest/info/all', { 'Client-Version': 'v1.2' })).status).toBe(200);
    expect((await getJson(server.url, '/rest/info/all', { 'Client-Version': 'v1.3.0' })).status).toBe(200);
    expect((await getJson(server.url, '/rest/info/all', { 'Client-Version': '' })).status).toBe(200);
    for (const version of ['junk', 'v2.0', '1.0', 'v2.0.0', 'v1.3.0.1']) {
      const answer = await getJson(server.url, '/rest/info/all', { 'Client-Version': version });
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ error: 'bad_request', message: expect.stringContaining('Client-Version') });
    }
  });

  it('shows a commit made with plain git at once', async () => {
    const gitdir = gitdirOf(dir.path, 'Alpha/Beta');
    const blob = execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], {
      input: 'key: outside\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*"\n    value: x\n    active: true\n',
    }).toString().trim();
    const index = join(dir.path, 'plain-index');
    const env = { ...process.env, GIT_INDEX_FILE: index };
    execFileSync('git', ['--git-dir', gitdir, 'read-tree', 'main'], { env });
    // sha1("outside") starts with 45.
    execFileSync('git', ['--git-dir', gitdir, 'update-index', '--add', '--cacheinfo', `100644,${blob},keys/45/outside.yaml`], { env });
    const tree = execFileSync('git', ['--git-dir', gitdir, 'write-tree'], { env }).toString().trim();
    const commit = execFileSync('git', ['--git-dir', gitdir, 'commit-tree', tree, '-p', 'main', '-m', 'outside'], { env }).toString().trim();
    execFileSync('git', ['--git-dir', gitdir, 'update-ref', 'refs/heads/main', commit]);
    const { json } = await getJson(server.url, '/rest/info/all');
    expect(json[0]).toMatchObject({ name: 'Beta', keyCount: 1, valueCount: 1 });
  });

  it('leaves an unreadable repository out, logs it without a path, lists the others, and repo list names it on stderr', async () => {
    mkdirSync(join(dir.path, 'broken', 'empty.git'), { recursive: true });
    cliOk(dir.path, 'repo', 'create', 'broken/badyaml', '--context', 'Env');
    const gitdir = gitdirOf(dir.path, 'broken/badyaml');
    const blob = execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], { input: 'context: [unclosed\n' }).toString().trim();
    const tree = execFileSync('git', ['--git-dir', gitdir, 'mktree'], { input: `100644 blob ${blob}\trepository.yaml\n` }).toString().trim();
    const commit = execFileSync('git', ['--git-dir', gitdir, 'commit-tree', tree, '-p', 'main', '-m', 'break it']).toString().trim();
    git(gitdir, 'update-ref', 'refs/heads/main', commit);
    writeFileSync(join(dir.path, 'broken', 'not-a-repo.txt'), 'stray file');
    const { status, json } = await getJson(server.url, '/rest/info/all');
    expect(status).toBe(200);
    expect(json.map((r: { name: string }) => r.name)).toEqual(['Beta', 'zed', 'one']);
    // Every record carries every field the seed marks "always", with its type.
    for (const record of json) expectSeedShape(record);
    const warnings = server.logs.filter((line) => line.event === 'unreadable-repository');
    expect(warnings.map((line) => line.repository).sort()).toEqual(['broken/badyaml', 'broken/empty']);
    expect(server.logText()).not.toContain(dir.path);

    const listed = cli(dir.path, 'repo', 'list');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(json);
    expect(listed.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^cfghub: repository broken/badyaml is left out of the list: repository_content_invalid: repository\\.yaml at commit ${commit.slice(0, 12)} is not valid YAML.* \\(file repository\\.yaml, commit ${commit}\\)$`)),
      'cfghub: repository broken/empty is left out of the list: repository_content_invalid: repository broken/empty has no refs/heads/main',
    ]);
    expect(listed.stderr).not.toContain(dir.path);
    expect(server.logText()).not.toContain(dir.path);
  });
});
