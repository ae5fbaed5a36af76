/**
 * Dry runs of revert and restore (docs/schemas.md): `Dry-Run: true` on both forms of
 * `/rest/revert` and `/rest/restore` and on the admin API's, and `cfghub revert|restore --dry-run`,
 * answer as a push's dry run does and write nothing (refs, `git count-objects -v` and every object
 * file unchanged); what they say each context would read is what the real revert or restore then
 * makes it read, pull by pull; a revert or restore the schemas or the required approvals refuse
 * is answered as would-refuse with the reason the real one gives; `If-Match` holds the real one to
 * the previewed head. The real server on loopback, real bare repositories, checked with git.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, runCommand, serverForFile } from '../../support/harness.js';
import { diskState, effectsBetween, readsOf, type ContextEntry, type Reads } from '../../support/dryRuns.js';

const REPO = 'acme/undo';
const GUARDED = 'acme/undo-guarded';
const fixture = serverForFile();
let token = '';
let adminToken = '';
/** The commits of REPO: the seed, a production change, a staging change. */
const commits = { seed: '', production: '', staging: '' };

async function made(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

const head = (repo = REPO) => git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
const disk = (repo = REPO) => diskState(gitdirOf(fixture.repos, repo));

async function pushed(repo: string, data: unknown[], changeComment: string, extra: object = {}): Promise<string> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
    enableKeyCreation: true,
    changeComment,
    data,
    ...extra,
  });
  expect(answer.status, reasonOf(answer)).toBe(200);
  return head(repo);
}

/** A POST with a JSON body (an empty one when undefined: the headers say it all). */
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  pushTo(fixture.server.url, path, body === undefined ? '' : body, headers);

const ALL = ['Production;Billing;node-7', 'Production;Web;node-1', 'Staging;Web;node-1', 'Development;Web;laptop'];

/** What each of ALL reads now. */
async function readsNow(repo = REPO): Promise<Map<string, Reads>> {
  return new Map(
    await Promise.all(ALL.map(async (c) => [c, await readsOf(fixture.server.url, `/rest/pull/${repo}`, c)] as const)),
  );
}

/**
 * The dry run's answer against what the write then did: for each context of `weighed` (those the
 * repository names and those the request listed), listed with exactly the keys and files whose
 * pull changed, with the values before and after; and the contexts that read the same not listed.
 */
async function expectDryRunMatches(
  answer: { contexts: { listed: (ContextEntry & { context: string })[]; changed: number; considered: number } },
  before: Map<string, Reads>,
  weighed: readonly string[],
): Promise<void> {
  const after = await readsNow();
  const listed = new Map(answer.contexts.listed.map((c) => [c.context, { keys: c.keys, files: c.files }]));
  let changed = 0;
  for (const context of weighed) {
    const effects = effectsBetween(before.get(context)!, after.get(context)!);
    if (effects) changed++;
    expect({ context, said: listed.get(context) }).toEqual({ context, said: effects });
  }
  expect(answer.contexts.considered).toBe(weighed.length);
  expect(answer.contexts.changed).toBe(changed);
  expect(answer.contexts.listed).toHaveLength(changed);
}

beforeAll(async () => {
  await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance', '--token-free-pull');
  token = await made('token', 'create', REPO, '--name', 'undoer');
  adminToken = await made('admin-token', 'create', '--name', 'undo-admin');
  const seed = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    {
      enableKeyCreation: true,
      changeComment: 'seed',
      data: [
        {
          key: 'db.host',
          values: [
            { context: '*;*;*', value: 'db.local' },
            { context: 'Production;*;*', value: 'db.prod' },
            { context: 'Staging;Web;node-1', value: 'db.stage' },
          ],
        },
        {
          key: 'db.port',
          vdt: 'Integer',
          values: [
            { context: '*;*;*', value: 5432 },
            { context: 'Production;Billing;node-7', value: 6432 },
          ],
        },
        { file: 'conf/app.properties', context: '*;*;*', content: 'host=${ db.host }\nport=${ db.port }\n' },
      ],
    },
    { 'Client-Token': token },
  );
  expect(seed.status, reasonOf(seed)).toBe(200);
  commits.seed = head();
  const change = (data: unknown[], comment: string) =>
    pushTo(fixture.server.url, `/rest/push/${REPO}`, { changeComment: comment, data }, { 'Client-Token': token }).then(
      (answer) => {
        expect(answer.status, reasonOf(answer)).toBe(200);
        return head();
      },
    );
  commits.production = await change(
    [
      { key: 'db.host', values: [{ context: 'Production;*;*', value: 'db2.prod' }] },
      { key: 'db.port', values: [{ context: 'Production;Billing;node-7', value: 7432 }] },
    ],
    'production move',
  );
  commits.staging = await change([{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 5433 }] }], 'staging');
});

describe('Dry-Run: true on revert', () => {
  it('answers what the revert would change, context by context, writes nothing, and the revert then does exactly that', async () => {
    const state = disk();
    const was = head();
    const answer = await post(`/rest/revert/${REPO}`, undefined, {
      'Client-Token': token,
      Commit: commits.production,
      'Dry-Run': 'true',
      'Dry-Run-Contexts': 'Production;Web;node-1',
    });
    expect(answer.status, answer.body).toBe(200);
    expect(answer.json).toMatchObject({
      wouldCommit: true,
      outcome: 'applied',
      head: was,
      changed: { keys: ['db.host', 'db.port'], files: [] },
    });
    expect(
      answer.json.contexts.listed.find((c: { context: string }) => c.context === 'Production;Billing;node-7'),
    ).toEqual({
      context: 'Production;Billing;node-7',
      keys: [
        { key: 'db.host', before: { val: 'db2.prod' }, after: { val: 'db.prod' } },
        { key: 'db.port', before: { val: '7432', type: 'Integer' }, after: { val: '6432', type: 'Integer' } },
      ],
      files: [
        {
          path: 'conf/app.properties',
          before: { content: 'host=db2.prod\nport=7432\n' },
          after: { content: 'host=db.prod\nport=6432\n' },
        },
      ],
    });
    expect(disk()).toBe(state);

    // The same dry run through the admin API (what `cfghub revert --dry-run --server` asks) answers the same.
    const admin = await post(
      `/rest/admin/repositories/${REPO}/revert`,
      { commit: commits.production },
      { Authorization: `Bearer ${adminToken}`, 'Dry-Run': 'true', 'Dry-Run-Contexts': 'Production;Web;node-1' },
    );
    expect(admin.status, admin.body).toBe(200);
    expect(admin.json).toEqual(answer.json);
    expect(disk()).toBe(state);

    // Made on the previewed head (If-Match): a moved head would be a 412; this one has not moved.
    const before = await readsNow();
    const real = await post(`/rest/revert/${REPO}`, undefined, {
      'Client-Token': token,
      Commit: commits.production,
      'If-Match': `"${answer.json.head}"`,
    });
    expect(real.status, real.body).toBe(200);
    expect(git(gitdirOf(fixture.repos, REPO), 'rev-parse', `${head()}^`).trim()).toBe(was);
    await expectDryRunMatches(answer.json, before, [
      'Production;Billing;node-7',
      'Staging;Web;node-1',
      'Production;Web;node-1',
    ]);
  });

  it('If-Match on another head than the current one is a 412, and nothing is written', async () => {
    const state = disk();
    const answer = await post(`/rest/revert/${REPO}`, undefined, {
      'Client-Token': token,
      Commit: commits.staging,
      'If-Match': `"${commits.seed}"`,
    });
    expect(answer.status).toBe(412);
    expect(answer.json.message).toContain(`not ${commits.seed}`);
    const restore = await post(
      `/rest/restore/${REPO}`,
      { to: commits.seed },
      {
        'Client-Token': token,
        'If-Match': `"${commits.seed}"`,
      },
    );
    expect(restore.status).toBe(412);
    expect(disk()).toBe(state);
  });

  it('a revert that would change nothing says so', async () => {
    const state = disk();
    const answer = await post(
      `/rest/revert/${REPO}`,
      { commit: commits.production },
      {
        'Client-Token': token,
        'Dry-Run': 'true',
      },
    );
    expect(answer.status, answer.body).toBe(200);
    expect(answer.json).toEqual({
      wouldCommit: false,
      outcome: 'unchanged',
      head: head(),
      changed: { keys: [], files: [] },
      contexts: { considered: 0, changed: 0, listed: [], more: 0 },
    });
    expect(disk()).toBe(state);
  });
});

describe('cfghub revert --dry-run and cfghub restore --dry-run', () => {
  it('print what each context would read instead, exit 0, write nothing; --json is the dry run answer', async () => {
    const state = disk();
    const server = { env: { ...process.env, CFGHUB_SERVER: fixture.server.url, CFGHUB_ADMIN_TOKEN: adminToken } };
    const shown = await runCommand(['revert', REPO, commits.staging, '--dry-run'], server);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(
      [
        `the revert would commit on head ${head().slice(0, 12)}, changing:`,
        '  keys: db.port',
        '1 of 2 contexts would read something else:',
        '',
        'Staging;Web;node-1',
        '  ~ db.port: 5433 -> 5432',
        '  ~ file conf/app.properties',
        '      - port=5433',
        '      + port=5432',
        '',
      ].join('\n'),
    );
    // On the repositories folder (no server between): the same answer.
    const json = await cliWithInput(fixture.repos, '', 'revert', REPO, commits.staging, '--dry-run', '--json');
    expect(json.code, json.stderr).toBe(0);
    const rest = await post(
      `/rest/revert/${REPO}`,
      { commit: commits.staging },
      {
        'Client-Token': token,
        'Dry-Run': 'true',
      },
    );
    expect(JSON.parse(json.stdout)).toEqual(rest.json);
    const restore = await runCommand(['restore', REPO, commits.seed, '--dry-run'], server);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain(
      `the restore would commit on head ${head().slice(0, 12)}, changing:\n  keys: db.port\n`,
    );
    expect(disk()).toBe(state);
  });
});

describe('Dry-Run: true on restore', () => {
  it('on the token form: what the restore would change against the head, nothing written, and the restore then does exactly that', async () => {
    const state = disk();
    const was = head();
    const answer = await post(
      '/rest/restore',
      { to: commits.seed },
      {
        'Client-Token': token,
        'Dry-Run': 'true',
        'Dry-Run-Contexts': 'Development;Web;laptop',
      },
    );
    expect(answer.status, answer.body).toBe(200);
    expect(answer.json).toMatchObject({
      wouldCommit: true,
      outcome: 'applied',
      head: was,
      changed: { keys: ['db.port'], files: [] },
    });
    expect(disk()).toBe(state);
    const before = await readsNow();
    const real = await post('/rest/restore', { to: commits.seed }, { 'Client-Token': token, 'If-Match': was });
    expect(real.status, real.body).toBe(200);
    expect(
      git(gitdirOf(fixture.repos, REPO), 'diff', '--stat', commits.seed, head(), '--', 'keys', 'files').trim(),
    ).toBe('');
    await expectDryRunMatches(answer.json, before, [
      'Production;Billing;node-7',
      'Staging;Web;node-1',
      'Development;Web;laptop',
    ]);
  });
});

describe('a refused revert or restore, run dry', () => {
  const guarded = { seed: '', port: '' };

  beforeAll(async () => {
    await made(
      'repo',
      'create',
      GUARDED,
      '--context',
      'Environment,Application,Instance',
      '--token-free-push',
      '--token-free-pull',
    );
    guarded.seed = await pushed(
      GUARDED,
      [{ key: 'db.port', vdt: 'Integer', values: [{ context: '*;*;*', value: 99 }] }],
      'seed',
    );
    guarded.port = await pushed(GUARDED, [{ key: 'db.port', values: [{ context: '*;*;*', value: 5432 }] }], 'port');
    await pushed(GUARDED, [], 'ports of 1000 and up', {
      schemas: { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1000 } }] },
    });
  });

  it('a revert and a restore the schemas refuse are answered would-refuse with the reason the real ones give; nothing is written', async () => {
    const state = disk(GUARDED);
    const revert = await post(`/rest/revert/${GUARDED}`, { commit: guarded.port }, { 'Dry-Run': 'true' });
    expect(revert.status, revert.body).toBe(200);
    expect(revert.json).toEqual({
      wouldCommit: false,
      outcome: 'refused',
      refusal: expect.stringContaining('key db.port at *;*;* breaks schemas.yaml keys[0] (db.port)'),
      head: head(GUARDED),
      changed: { keys: [], files: [] },
      contexts: { considered: 0, changed: 0, listed: [], more: 0 },
    });
    const restore = await post(`/rest/restore/${GUARDED}`, { to: guarded.seed }, { 'Dry-Run': 'true' });
    expect(restore.json).toMatchObject({ outcome: 'refused', refusal: revert.json.refusal });
    expect(disk(GUARDED)).toBe(state);

    const realRevert = await post(`/rest/revert/${GUARDED}`, { commit: guarded.port });
    expect(realRevert.status).toBe(409);
    expect(realRevert.json.message).toBe(revert.json.refusal);
    const realRestore = await post(`/rest/restore/${GUARDED}`, { to: guarded.seed });
    expect(realRestore.status).toBe(409);
    expect(realRestore.json.message).toBe(restore.json.refusal);
    expect(disk(GUARDED)).toBe(state);
  });

  it('a revert the required approvals hold is answered would-refuse naming the rule and the change request to open', async () => {
    const rule = await fetch(`${fixture.server.url}/rest/admin/repositories/${GUARDED}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ requiredApprovals: [{ context: '*;*;*', approvals: 1 }] }),
    });
    expect(rule.status, await rule.text()).toBe(200);
    const state = disk(GUARDED);
    const answer = await post(`/rest/revert/${GUARDED}`, { commit: guarded.port }, { 'Dry-Run': 'true' });
    expect(answer.json.outcome, answer.body).toBe('refused');
    expect(answer.json.refusal).toContain('need an approved change request: required approvals *;*;* (1 approval)');
    expect(answer.json.refusal).toContain(`--revert ${guarded.port}`);
    const real = await post(`/rest/revert/${GUARDED}`, { commit: guarded.port });
    expect(real.status).toBe(409);
    expect(real.json.message).toBe(answer.json.refusal);
    expect(disk(GUARDED)).toBe(state);
  });
});
