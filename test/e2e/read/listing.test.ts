/**
 * The listing, `GET /rest/info/all`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, getJson, git, gitdirOf, pushTo, serverForFile, startTestServer } from '../../support/harness.js';

const fixture = serverForFile();

beforeAll(() => {
  cliOk(
    fixture.repos,
    'repo',
    'create',
    'beta/one',
    '--context',
    'Env,App',
    '--token-free-push',
    '--description',
    'The first',
  );
  cliOk(
    fixture.repos,
    'repo',
    'create',
    'Alpha/zed',
    '--context',
    'Env',
    '--private',
    '--personal',
    '--access-controls',
    '--no-security',
    '--context-groups',
  );
  cliOk(fixture.repos, 'repo', 'create', 'alpha/Beta', '--context', 'Env');
});

const FIELD_ORDER = [
  'account',
  'name',
  'isPrivate',
  'isPersonal',
  'description',
  'created',
  'accessControlsEnabled',
  'vdtEnabled',
  'securityEnabled',
  'contextGroupsEnabled',
  'keyCount',
  'valueCount',
  'userCount',
  'context',
];

/** ConfigHub's listing record: every field marked "always", with its type; `description` optional. */
function expectSeedShape(record: Record<string, unknown>): void {
  const types: Record<string, string> = {
    account: 'string',
    name: 'string',
    isPrivate: 'boolean',
    isPersonal: 'boolean',
    created: 'string',
    accessControlsEnabled: 'boolean',
    vdtEnabled: 'boolean',
    securityEnabled: 'boolean',
    contextGroupsEnabled: 'boolean',
    keyCount: 'number',
    valueCount: 'number',
    userCount: 'number',
  };
  for (const [field, type] of Object.entries(types))
    expect(typeof record[field], `${field} of ${JSON.stringify(record)}`).toBe(type);
  expect(
    Array.isArray(record.context) && record.context.every((level) => typeof level === 'string'),
    JSON.stringify(record),
  ).toBe(true);
  expect(record.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  expect(
    Object.keys(record).every((field) => field in types || field === 'context' || field === 'description'),
    JSON.stringify(record),
  ).toBe(true);
}

describe('GET /rest/info/all', () => {
  it('lists every repository sorted by account then name without regard to case, fields in the seed order', async () => {
    const { status, json, headers } = await getJson(fixture.server.url, '/rest/info/all');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    // `alpha` and `Alpha` are one account: the folder keeps the spelling it was created with.
    expect(json.map((r: { account: string; name: string }) => `${r.account}/${r.name}`)).toEqual([
      'Alpha/Beta',
      'Alpha/zed',
      'beta/one',
    ]);
    for (const record of json) {
      const order = FIELD_ORDER.filter((field) => field in record);
      expect(Object.keys(record)).toEqual(order);
      expect(record.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect(json[1]).toMatchObject({
      isPrivate: true,
      isPersonal: true,
      accessControlsEnabled: true,
      securityEnabled: false,
      contextGroupsEnabled: true,
      vdtEnabled: true,
    });
    expect('description' in json[0]).toBe(false);
    expect(json[2].description).toBe('The first');
  });

  it('counts keys and values, inactive values included', async () => {
    const answer = await pushTo(fixture.server.url, '/rest/push/beta/one', {
      enableKeyCreation: true,
      data: [
        {
          key: 'a',
          values: [
            { context: '*;*', value: '1' },
            { context: 'Prod;*', value: '2', active: false },
          ],
        },
        { key: 'b', values: [] },
      ],
    });
    expect(answer.status).toBe(200);
    const { json } = await getJson(fixture.server.url, '/rest/info/all');
    expect(json[2]).toMatchObject({ keyCount: 2, valueCount: 2, userCount: 0 });
  });

  it('counts only active tokens as users', async () => {
    cliOk(fixture.repos, 'token', 'create', 'beta/one', '--name', 'a');
    cliOk(fixture.repos, 'token', 'create', 'beta/one', '--name', 'b');
    cliOk(fixture.repos, 'token', 'revoke', 'beta/one', 'a');
    const { json } = await getJson(fixture.server.url, '/rest/info/all');
    expect(json[2].userCount).toBe(1);
  });

  it('indents with Pretty: true in any case, and only then', async () => {
    const pretty = await getJson(fixture.server.url, '/rest/info/all', { Pretty: 'TRUE' });
    expect(pretty.text).toContain('\n  {\n    "account"');
    const compact = await getJson(fixture.server.url, '/rest/info/all', { Pretty: 'yes' });
    expect(compact.text).not.toContain('\n');
    expect(compact.json).toEqual(pretty.json);
  });

  it('accepts Client-Version v1.x and an empty one, and refuses a malformed or other major version with 400', async () => {
    expect((await getJson(fixture.server.url, '/rest/info/all', { 'Client-Version': 'v1.2' })).status).toBe(200);
    expect((await getJson(fixture.server.url, '/rest/info/all', { 'Client-Version': 'v1.3.0' })).status).toBe(200);
    expect((await getJson(fixture.server.url, '/rest/info/all', { 'Client-Version': '' })).status).toBe(200);
    for (const version of ['junk', 'v2.0', '1.0', 'v2.0.0', 'v1.3.0.1']) {
      const answer = await getJson(fixture.server.url, '/rest/info/all', { 'Client-Version': version });
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ error: 'bad_request', message: expect.stringContaining('Client-Version') });
    }
  });

  it('shows a commit made with plain git at once', async () => {
    const gitdir = gitdirOf(fixture.repos, 'Alpha/Beta');
    const blob = execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], {
      input:
        'key: outside\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*"\n    value: x\n    active: true\n',
    })
      .toString()
      .trim();
    const index = join(fixture.repos, 'plain-index');
    const env = { ...process.env, GIT_INDEX_FILE: index };
    execFileSync('git', ['--git-dir', gitdir, 'read-tree', 'main'], { env });
    // sha1("outside") starts with 45.
    execFileSync(
      'git',
      ['--git-dir', gitdir, 'update-index', '--add', '--cacheinfo', `100644,${blob},keys/45/outside.yaml`],
      { env },
    );
    const tree = execFileSync('git', ['--git-dir', gitdir, 'write-tree'], { env }).toString().trim();
    const commit = execFileSync('git', ['--git-dir', gitdir, 'commit-tree', tree, '-p', 'main', '-m', 'outside'], {
      env,
    })
      .toString()
      .trim();
    execFileSync('git', ['--git-dir', gitdir, 'update-ref', 'refs/heads/main', commit]);
    const { json } = await getJson(fixture.server.url, '/rest/info/all');
    expect(json[0]).toMatchObject({ name: 'Beta', keyCount: 1, valueCount: 1 });
  });

  it('leaves an unreadable repository out, logs it without a path, lists the others, and repo list names it on stderr', async () => {
    mkdirSync(join(fixture.repos, 'broken', 'empty.git'), { recursive: true });
    cliOk(fixture.repos, 'repo', 'create', 'broken/badyaml', '--context', 'Env');
    const gitdir = gitdirOf(fixture.repos, 'broken/badyaml');
    const blob = execFileSync('git', ['--git-dir', gitdir, 'hash-object', '-w', '--stdin'], {
      input: 'context: [unclosed\n',
    })
      .toString()
      .trim();
    const tree = execFileSync('git', ['--git-dir', gitdir, 'mktree'], {
      input: `100644 blob ${blob}\trepository.yaml\n`,
    })
      .toString()
      .trim();
    const commit = execFileSync('git', ['--git-dir', gitdir, 'commit-tree', tree, '-p', 'main', '-m', 'break it'])
      .toString()
      .trim();
    git(gitdir, 'update-ref', 'refs/heads/main', commit);
    writeFileSync(join(fixture.repos, 'broken', 'not-a-repo.txt'), 'stray file');
    const { status, json } = await getJson(fixture.server.url, '/rest/info/all');
    expect(status).toBe(200);
    expect(json.map((r: { name: string }) => r.name)).toEqual(['Beta', 'zed', 'one']);
    // Every record carries every field the seed marks "always", with its type.
    for (const record of json) expectSeedShape(record);
    const warnings = fixture.server.logs.filter((line) => line.event === 'unreadable-repository');
    expect(warnings.map((line) => line.repository).sort()).toEqual(['broken/badyaml', 'broken/empty']);
    expect(fixture.server.logText()).not.toContain(fixture.repos);

    const listed = cli(fixture.repos, 'repo', 'list');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(json);
    expect(listed.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^cfghub: repository broken/badyaml is left out of the list: repository_content_invalid: repository\\.yaml at commit ${commit.slice(0, 12)} is not valid YAML.* \\(file repository\\.yaml, commit ${commit}\\)$`,
        ),
      ),
      'cfghub: repository broken/empty is left out of the list: repository_content_invalid: repository broken/empty has no refs/heads/main',
    ]);
    expect(listed.stderr).not.toContain(fixture.repos);
    expect(fixture.server.logText()).not.toContain(fixture.repos);
  });

  it("lists a repository from its head's summary kept in its folder, used only while that commit is the head", async () => {
    const gitdir = gitdirOf(fixture.repos, 'beta/one');
    const summaryFile = join(gitdir, 'cfghub-summary.json');
    const one = async (url: string) =>
      (await getJson(url, '/rest/info/all')).json.find((r: { name: string }) => r.name === 'one');
    const listed = await one(fixture.server.url);
    const head = git(gitdir, 'rev-parse', 'main').trim();
    const kept = JSON.parse(readFileSync(summaryFile, 'utf8'));
    expect(kept).toMatchObject({ commit: head, summary: { keyCount: listed.keyCount, description: 'The first' } });

    // A new server lists it from the summary of its head, without reading the commit's keys.
    writeFileSync(summaryFile, JSON.stringify({ ...kept, summary: { ...kept.summary, keyCount: 4242 } }));
    const fresh = await startTestServer(fixture.repos);
    try {
      expect(await one(fresh.url)).toEqual({ ...listed, keyCount: 4242 });
    } finally {
      await fresh.close();
    }

    // A summary of another commit, or one that does not read back, is not used: the head is read.
    const pushed = await pushTo(fixture.server.url, '/rest/push/beta/one', {
      enableKeyCreation: true,
      data: [{ key: 'c', values: [{ context: '*;*', value: '3' }] }],
    });
    expect(pushed.status).toBe(200);
    for (const bytes of [JSON.stringify({ ...kept, summary: { ...kept.summary, keyCount: 4242 } }), '{"format":1,']) {
      writeFileSync(summaryFile, bytes);
      const another = await startTestServer(fixture.repos);
      try {
        expect(await one(another.url)).toEqual({
          ...listed,
          keyCount: listed.keyCount + 1,
          valueCount: listed.valueCount + 1,
        });
      } finally {
        await another.close();
      }
      expect(JSON.parse(readFileSync(summaryFile, 'utf8')).commit).toBe(git(gitdir, 'rev-parse', 'main').trim());
    }
  });
});
