/**
 * Required approvals hold every direct write that changes a protected context's answer, not only
 * a push: revert and restore (REST, the admin API, the command line on the folder) are refused
 * naming the rule and how to open a change request of them; on unprotected contexts they go
 * through. A change request of a revert or restore (its body the rollback's effect) is previewed,
 * approved and applied as any. A change request carries what a push carries: a schemas change
 * goes through create, preview, approve and apply, and a conflicting one is refused. The real
 * server on loopback, real bare repositories, checked with real git.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, runCommand, serverForFile } from '../../support/harness.js';
import { changeRequestCalls, hostAt } from '../../support/changeRequests.js';

const REPO = 'acme/guarded';
const fixture = serverForFile();
const tokens: Record<string, string> = {};
let adminToken = '';
/** The commits of the seed: the first values, a production change, a staging change. */
const commits: Record<'seed' | 'production' | 'staging', string> = { seed: '', production: '', staging: '' };

const { made, gitdir, head, call, act, pull } = changeRequestCalls(fixture, REPO, () => tokens.alice);

async function pushed(token: string, data: unknown[], changeComment: string): Promise<string> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { enableKeyCreation: true, changeComment, data },
    { 'Client-Token': token },
  );
  expect(answer.status, reasonOf(answer)).toBe(200);
  return head();
}

/** Approved by bob and applied by alice: the applied commit. */
async function approvedAndApplied(id: number): Promise<string> {
  const approved = await act(tokens.bob, id, 'approve');
  expect(approved.status, JSON.stringify(approved.json)).toBe(200);
  const applied = await act(tokens.alice, id, 'apply');
  expect(applied.status, JSON.stringify(applied.json)).toBe(200);
  expect(head()).toBe(applied.json.commit);
  return applied.json.commit;
}

beforeAll(async () => {
  await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance');
  for (const label of ['alice', 'bob']) tokens[label] = await made('token', 'create', REPO, '--name', label);
  adminToken = await made('admin-token', 'create', '--name', 'ops');
  commits.seed = await pushed(
    tokens.alice,
    [
      {
        key: 'db.host',
        values: [
          { context: '*;*;*', value: 'db.local' },
          { context: 'Production;*;*', value: 'db.prod' },
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
    ],
    'seed',
  );
  commits.production = await pushed(tokens.alice, [hostAt('Production;*;*', 'db2.prod')], 'production host');
  commits.staging = await pushed(tokens.alice, [hostAt('Staging;*;*', 'db.stage')], 'staging host');
  const rule = await call('PATCH', `/rest/admin/repositories/${REPO}`, adminToken, {
    requiredApprovals: [{ context: 'Production;*;*', approvals: 1 }],
  });
  expect(rule.status, JSON.stringify(rule.json)).toBe(200);
});

describe('revert and restore under required approvals', () => {
  it('a revert changing a protected context is refused over REST, the admin API and the command line, naming the rule and the change request to open', async () => {
    const before = head();
    const rest = await call('POST', `/rest/revert/${REPO}`, tokens.alice, undefined, { Commit: commits.production });
    expect(rest.status).toBe(409);
    expect(rest.json.message).toContain(
      'key db.host at Production;*;* is in contexts that need an approved change request: required approvals Production;*;* (1 approval)',
    );
    expect(rest.json.message).toContain(`cfghub change create ${REPO} --title … --revert ${commits.production}`);
    const admin = await call('POST', `/rest/admin/repositories/${REPO}/revert`, adminToken, {
      commit: commits.production,
    });
    expect(admin.status).toBe(409);
    expect(admin.json.message).toContain('required approvals Production;*;*');
    const local = await cliWithInput(fixture.repos, '', 'revert', REPO, commits.production);
    expect(local.code).not.toBe(0);
    expect(local.stderr).toContain('required approvals Production;*;*');
    expect(head()).toBe(before);
  });

  it('a restore changing a protected context is refused; one reaching only unprotected contexts goes through', async () => {
    const before = head();
    const refused = await call('POST', `/rest/restore/${REPO}`, tokens.alice, undefined, { To: commits.seed });
    expect(refused.status).toBe(409);
    expect(refused.json.message).toContain('required approvals Production;*;* (1 approval)');
    expect(refused.json.message).toContain(`--restore ${commits.seed}`);
    const admin = await call('POST', `/rest/admin/repositories/${REPO}/restore`, adminToken, { to: commits.seed });
    expect(admin.status).toBe(409);
    expect(head()).toBe(before);
    // Back to before the staging change: only Staging;*;* changes.
    const allowed = await call('POST', `/rest/restore/${REPO}`, tokens.alice, undefined, { To: commits.production });
    expect(allowed.status, JSON.stringify(allowed.json)).toBe(200);
    expect(head()).not.toBe(before);
    expect(await pull('Staging;Web;node-1')).toMatchObject({ 'db.host': 'db.local' });
  });

  it('a revert reaching only unprotected contexts goes through', async () => {
    const restored = head();
    const allowed = await call('POST', `/rest/revert/${REPO}`, tokens.alice, undefined, { Commit: restored });
    expect(allowed.status, JSON.stringify(allowed.json)).toBe(200);
    expect(await pull('Staging;Web;node-1')).toMatchObject({ 'db.host': 'db.stage' });
  });

  it('a change request of the revert is previewed, needs an approval by another identity, and is applied', async () => {
    const before = head();
    const created = await call('POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'Back to the old production host',
      changeComment: 'OPS-9',
      revert: commits.production,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const change = created.json;
    expect(change).toMatchObject({ author: 'alice', status: 'open', base: before });
    expect(change.comment).toBe(`OPS-9\n\nThis reverts commit ${commits.production}.`);
    expect(head()).toBe(before);
    expect(git(gitdir(), 'rev-parse', `refs/changes/${change.id}^`).trim()).toBe(before);
    const shown = await call('GET', `/rest/changes/${REPO}/${change.id}`, tokens.bob);
    expect(shown.json.requiredApprovals).toEqual({
      rules: ['Production;*;* (1 approval)'],
      needed: 1,
      approved: false,
    });
    expect(shown.json.preview.changed.keys).toEqual(['db.host']);
    expect(shown.json.preview.contexts.listed.map((one: { context: string }) => one.context)).toEqual([
      'Production;Billing;node-7',
    ]);
    expect(shown.json.preview.contexts.listed[0].keys).toEqual([
      { key: 'db.host', before: { val: 'db2.prod' }, after: { val: 'db.prod' } },
    ]);
    expect((await act(tokens.alice, change.id, 'apply')).status).toBe(409);
    const commit = await approvedAndApplied(change.id);
    expect(await pull('Production;Billing;node-7')).toMatchObject({ 'db.host': 'db.prod' });
    expect(git(gitdir(), 'log', '-1', '--format=%(trailers:key=Approved-By,valueonly)', commit).trim()).toBe('bob');
    git(gitdir(), 'fsck', '--strict', '--no-dangling');
  });

  it('a change request of the restore, made by the command line, is applied once approved', async () => {
    const created = await runCommand(
      ['change', 'create', REPO, '--server', fixture.server.url, '--title', 'Production as after its change'].concat([
        '--restore',
        commits.production,
      ]),
      { env: { ...process.env, CFGHUB_TOKEN: tokens.alice, CFGHUB_SERVER: '' } },
    );
    expect(created.code, created.stderr).toBe(0);
    const id = Number(created.stdout.trim());
    expect(git(gitdir(), 'log', '-1', '--format=%an: %s', `refs/changes/${id}`).trim()).toBe(
      'alice: Production as after its change',
    );
    await approvedAndApplied(id);
    expect(await pull('Production;Billing;node-7')).toMatchObject({ 'db.host': 'db2.prod' });
    expect(await pull('Staging;Web;node-1')).toMatchObject({ 'db.host': 'db.local' });
  });

  it('a change request of a revert or restore is checked at creation: a body beside it, or nothing to change, is refused', async () => {
    const both = await call('POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'both',
      revert: commits.production,
      data: [],
    });
    expect(both.status).toBe(400);
    expect(both.json.message).toContain('a revert change request takes only title and changeComment');
    const nothing = await call('POST', `/rest/changes/${REPO}`, tokens.alice, { title: 'same', restore: head() });
    expect(nothing.status).toBe(409);
    expect(nothing.json.message).toContain('changes nothing');
  });
});

describe('context groups under required approvals', () => {
  const GROUPS = 'acme/guarded-groups';
  const group = (...args: string[]) => cliWithInput(fixture.repos, '', 'context-group', ...args);

  it('a change of a group whose values reach a protected context is refused naming the rule; other groups change', async () => {
    await made('repo', 'create', GROUPS, '--context', 'Environment,Application,Instance', '--context-groups');
    await made('repo', 'settings', GROUPS, '--token-free-push', '--token-free-pull');
    expect((await group('create', GROUPS, 'Environment', 'Live', 'Production')).code).toBe(0);
    expect((await group('create', GROUPS, 'Environment', 'Trial', 'Staging')).code).toBe(0);
    const seeded = await pushTo(fixture.server.url, `/rest/push/${GROUPS}`, {
      enableKeyCreation: true,
      data: [
        { key: 'db.host', values: [{ context: 'Live;*;*', value: 'db.live' }] },
        { key: 'db.user', values: [{ context: 'Trial;*;*', value: 'trial' }] },
      ],
    });
    expect(seeded.status, reasonOf(seeded)).toBe(200);
    await made('repo', 'settings', GROUPS, '--require-approvals', 'Production;*;*=1');
    const before = git(gitdirOf(fixture.repos, GROUPS), 'rev-parse', 'main').trim();
    const refused = await group('remove', GROUPS, 'Environment', 'Live', 'Production');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'key db.host at Live;*;* (its context group changes) is in contexts that need an approved change request: required approvals Production;*;* (1 approval)',
    );
    expect(git(gitdirOf(fixture.repos, GROUPS), 'rev-parse', 'main').trim()).toBe(before);
    const allowed = await group('add', GROUPS, 'Environment', 'Trial', 'QA');
    expect(allowed.code, allowed.stderr).toBe(0);
  });
});

describe('a change request carries what a push carries', () => {
  const tighter = { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1024, maximum: 65535 } }] };

  it('a schemas change goes through create, preview, approval and apply', async () => {
    const created = await call('POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'Ports above 1024',
      schemas: tighter,
      data: [{ key: 'db.port', values: [{ context: 'Production;*;*', value: 6432 }] }],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(git(gitdir(), 'show', `refs/changes/${created.json.id}:schemas.yaml`)).toContain('minimum: 1024');
    const shown = await call('GET', `/rest/changes/${REPO}/${created.json.id}`, tokens.bob);
    expect(shown.json.preview).toMatchObject({ outcome: 'applied', changed: { keys: ['db.port'], schemas: true } });
    await approvedAndApplied(created.json.id);
    expect(git(gitdir(), 'show', 'main:schemas.yaml')).toContain('minimum: 1024');
    const breaking = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 80 }] }] },
      { 'Client-Token': tokens.alice },
    );
    expect(breaking.status).toBe(304);
    expect(reasonOf(breaking)).toContain('schemas');
  });

  it('a schemas change that breaks values is refused at creation; one conflicting with a schemas change on main since is refused at apply', async () => {
    const refs = git(gitdir(), 'for-each-ref', 'refs/changes');
    const breaking = await call('POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'Ports above 6000',
      schemas: { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 6000 } }] },
      data: [],
    });
    expect(breaking.status).toBe(409);
    expect(breaking.json.message).toContain("the change breaks the repository's schemas");
    expect(git(gitdir(), 'for-each-ref', 'refs/changes')).toBe(refs);
    const mine = await call('POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'Ports below 60000',
      schemas: { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1024, maximum: 60000 } }] },
      data: [],
    });
    expect(mine.status, JSON.stringify(mine.json)).toBe(201);
    const theirs = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { schemas: { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1000 } }] }, data: [] },
      { 'Client-Token': tokens.alice },
    );
    expect(theirs.status, reasonOf(theirs)).toBe(200);
    const before = head();
    await act(tokens.bob, mine.json.id, 'approve');
    const conflict = await act(tokens.alice, mine.json.id, 'apply');
    expect(conflict.status).toBe(409);
    expect(conflict.json.message).toContain('schemas.yaml: changed on the branch since the change request was made');
    expect(head()).toBe(before);
  });
});
