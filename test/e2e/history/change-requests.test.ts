/**
 * Change requests through the HTTP API (docs/changes.md): a push body kept as a commit on the
 * head under refs/changes/<n>, reviewed with a preview computed on the current head, approved by
 * others than its author, applied key by key and context by context onto what changed on main
 * (a conflict refused, naming key and context) with Approved-By and Change-Request trailers; and
 * required approvals, which refuse a direct push to a protected context. The real server on
 * loopback, real bare repositories, checked with real git (refs, trailers, fsck --strict).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitdirOf, pushTo, reasonOf, runCommand, serverForFile, tempDir } from '../../support/harness.js';
import { changeRequestCalls, hostAt } from '../../support/changeRequests.js';

const REPO = 'acme/changes';
const fixture = serverForFile();
const tokens: Record<string, string> = {};
let adminToken = '';

const { made, gitdir, head, call, act, pull } = changeRequestCalls(fixture, REPO, () => tokens.alice);

const create = (token: string, title: string, data: unknown[], changeComment?: string) =>
  call('POST', `/rest/changes/${REPO}`, token, { title, ...(changeComment ? { changeComment } : {}), data });
const show = (token: string, id: number) => call('GET', `/rest/changes/${REPO}/${id}`, token);

beforeAll(async () => {
  await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance');
  for (const label of ['alice', 'bob', 'carol']) tokens[label] = await made('token', 'create', REPO, '--name', label);
  adminToken = await made('admin-token', 'create', '--name', 'ops');
  const seed = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    {
      enableKeyCreation: true,
      data: [
        {
          key: 'db.host',
          values: [
            { context: '*;*;*', value: 'db.local' },
            { context: 'Production;*;*', value: 'db.prod' },
          ],
        },
        { key: 'db.port', vdt: 'Integer', values: [{ context: '*;*;*', value: 5432 }] },
      ],
    },
    { 'Client-Token': tokens.alice },
  );
  expect(seed.status, reasonOf(seed)).toBe(200);
});

describe('a change request from creation to applied commit', () => {
  it('is a commit on the head under refs/changes/<n>; main does not move until it is applied', async () => {
    const before = head();
    const answer = await create(
      tokens.alice,
      'Move staging to the new host',
      [hostAt('Staging;Web;node-1', 'db.stage')],
      'Ticket OPS-7',
    );
    expect(answer.status, JSON.stringify(answer.json)).toBe(201);
    const change = answer.json;
    expect(change).toMatchObject({
      title: 'Move staging to the new host',
      comment: 'Ticket OPS-7',
      author: 'alice',
      status: 'open',
      approvals: [],
      base: before,
    });
    expect(head()).toBe(before);
    const ref = git(gitdir(), 'rev-parse', `refs/changes/${change.id}`).trim();
    expect(ref).toBe(change.commit);
    expect(git(gitdir(), 'rev-parse', `${ref}^`).trim()).toBe(before);
    expect(git(gitdir(), 'log', '-1', '--format=%an%n%B', ref)).toContain(
      'alice\nMove staging to the new host\n\nTicket OPS-7',
    );
    expect(git(gitdir(), 'log', '-1', '--format=%(trailers:key=Change-Request,valueonly)', ref).trim()).toBe(
      String(change.id),
    );

    // Main moves on elsewhere: the preview is computed on the current head.
    const other = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { data: [hostAt('Development;*;*', 'db.dev')] },
      { 'Client-Token': tokens.bob },
    );
    expect(other.status, reasonOf(other)).toBe(200);
    const shown = await show(tokens.carol, change.id);
    expect(shown.status, JSON.stringify(shown.json)).toBe(200);
    expect(shown.json.preview).toMatchObject({ outcome: 'applied', head: head(), changed: { keys: ['db.host'] } });
    expect(shown.json.preview.contexts.listed).toEqual([
      {
        context: 'Staging;Web;node-1',
        keys: [{ key: 'db.host', before: { val: 'db.local' }, after: { val: 'db.stage' } }],
        files: [],
      },
    ]);

    const listed = await call('GET', `/rest/changes/${REPO}?status=open`, tokens.bob);
    expect(listed.json.changes.map((c: { id: number }) => c.id)).toContain(change.id);

    const self = await act(tokens.alice, change.id, 'approve');
    expect(self.status).toBe(403);
    expect(self.json.message).toContain('alice is the author of change request');
    const approved = await act(tokens.bob, change.id, 'approve');
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    expect(approved.json.approvals.map((a: { by: string }) => a.by)).toEqual(['bob']);
    const byAdmin = await act(adminToken, change.id, 'approve');
    expect(byAdmin.json.approvals.map((a: { by: string }) => a.by)).toEqual(['bob', 'ops']);

    const applied = await act(tokens.carol, change.id, 'apply');
    expect(applied.status, JSON.stringify(applied.json)).toBe(200);
    expect(applied.json.change).toMatchObject({
      status: 'applied',
      applied: { by: 'carol', commit: applied.json.commit },
    });
    expect(head()).toBe(applied.json.commit);
    expect(git(gitdir(), 'rev-parse', `${head()}^`).trim()).toBe(other.etag!.replace(/"/g, ''));
    const trailers = git(gitdir(), 'log', '-1', '--format=%(trailers)', head());
    expect(trailers).toContain(`Change-Request: ${change.id}`);
    expect(trailers).toContain('Approved-By: bob');
    expect(trailers).toContain('Approved-By: ops');
    expect(trailers).toContain('Token: carol');
    expect(await pull('Staging;Web;node-1')).toMatchObject({ 'db.host': 'db.stage' });
    expect(await pull('Development;Web;node-1')).toMatchObject({ 'db.host': 'db.dev' });
    git(gitdir(), 'fsck', '--strict', '--no-dangling');

    const again = await act(tokens.carol, change.id, 'apply');
    expect(again.status).toBe(409);
    expect(again.json.message).toContain('is applied');
  });

  it('a conflict (the same key and context changed on main since) is refused naming them; other contexts merge', async () => {
    const conflicting = (
      await create(tokens.alice, 'Production host', [hostAt('Production;*;*', 'db2.prod'), hostAt('QA;*;*', 'db.qa')])
    ).json;
    const merging = (
      await create(tokens.alice, 'QA port', [{ key: 'db.port', values: [{ context: 'QA;*;*', value: 6000 }] }])
    ).json;
    const main = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      {
        data: [
          hostAt('Production;*;*', 'db3.prod'),
          { key: 'db.port', values: [{ context: 'Production;*;*', value: 7000 }] },
        ],
      },
      { 'Client-Token': tokens.bob },
    );
    expect(main.status, reasonOf(main)).toBe(200);
    const before = head();
    const refused = await act(tokens.bob, conflicting.id, 'apply');
    expect(refused.status).toBe(409);
    expect(refused.json.message).toContain('key db.host at Production;*;*');
    expect(refused.json.message).not.toContain('QA');
    expect(head()).toBe(before);
    const shown = await show(tokens.bob, conflicting.id);
    expect(shown.json.preview).toMatchObject({ outcome: 'refused' });
    expect(shown.json.preview.refusal).toContain('key db.host at Production;*;*');

    const applied = await act(tokens.bob, merging.id, 'apply');
    expect(applied.status, JSON.stringify(applied.json)).toBe(200);
    expect(await pull('QA;Web;a'), JSON.stringify(applied.json)).toMatchObject({ 'db.port': '6000' });
    expect(await pull('Production;Web;a')).toMatchObject({ 'db.port': '7000', 'db.host': 'db3.prod' });

    const closed = await act(tokens.alice, conflicting.id, 'close');
    expect(closed.json).toMatchObject({ status: 'closed', closed: { by: 'alice' } });
    expect((await act(tokens.bob, conflicting.id, 'approve')).status).toBe(409);
    git(gitdir(), 'fsck', '--strict', '--no-dangling');
  });

  it('is checked as a push at creation: a value of the wrong type is refused and nothing is stored', async () => {
    const refs = git(gitdir(), 'for-each-ref', 'refs/changes');
    const answer = await create(tokens.alice, 'Bad port', [
      { key: 'db.port', values: [{ context: '*;*;*', value: 'many' }] },
    ]);
    expect(answer.status).toBe(409);
    expect(answer.json.message).toContain('db.port');
    expect(git(gitdir(), 'for-each-ref', 'refs/changes')).toBe(refs);
    expect((await create('', 'No token', [hostAt('QA;*;*', 'x')])).status).toBe(403);
  });
});

describe('required approvals', () => {
  beforeAll(async () => {
    const set = await call('PATCH', `/rest/admin/repositories/${REPO}`, adminToken, {
      requiredApprovals: [{ context: 'Production;*;*', approvals: 2 }],
    });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    expect(set.json.requiredApprovals).toEqual([{ context: 'Production;*;*', approvals: 2 }]);
  });

  it('a direct push touching a protected context is refused, naming the rule and how to open a change request', async () => {
    const before = head();
    for (const context of ['Production;Billing;node-7', '*;*;*']) {
      const refused = await pushTo(
        fixture.server.url,
        `/rest/push/${REPO}`,
        { data: [hostAt(context, 'sneaky')] },
        { 'Client-Token': tokens.alice },
      );
      expect(refused.status).toBe(304);
      expect(reasonOf(refused)).toContain('required approvals Production;*;* (2 approvals)');
      expect(reasonOf(refused)).toContain(`cfghub change create ${REPO}`);
    }
    expect(head()).toBe(before);
    const staging = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { data: [hostAt('Staging;Web;*', 'db.web')] },
      { 'Client-Token': tokens.alice },
    );
    expect(staging.status, reasonOf(staging)).toBe(200);
  });

  it('a change request touching it is applied only with enough approvals by others than its author', async () => {
    const change = (await create(tokens.alice, 'Production host', [hostAt('Production;*;*', 'db4.prod')])).json;
    expect(change.id).toBeGreaterThan(0);
    const shown = await show(tokens.bob, change.id);
    expect(shown.json.requiredApprovals).toEqual({
      rules: ['Production;*;* (2 approvals)'],
      needed: 2,
      approved: false,
    });
    expect((await act(tokens.alice, change.id, 'approve')).status).toBe(403);
    await act(tokens.bob, change.id, 'approve');
    const short = await act(tokens.carol, change.id, 'apply');
    expect(short.status).toBe(409);
    expect(short.json.message).toContain('needs 2 approvals by others than its author alice');
    expect(short.json.message).toContain('it has 1');
    await act(tokens.carol, change.id, 'approve');
    const applied = await act(tokens.alice, change.id, 'apply');
    expect(applied.status, JSON.stringify(applied.json)).toBe(200);
    expect(await pull('Production;Billing;node-7')).toMatchObject({ 'db.host': 'db4.prod' });
    const trailers = git(gitdir(), 'log', '-1', '--format=%(trailers:key=Approved-By,valueonly)', head());
    expect(trailers.trim().split('\n')).toEqual(['bob', 'carol']);
    git(gitdir(), 'fsck', '--strict', '--no-dangling');
  });
});

describe('cfghub change, against the server', () => {
  const CLI_REPO = 'acme/changes-cli';
  const cliTokens: Record<string, string> = {};
  const change = (token: string, ...args: string[]) =>
    runCommand(['change', ...args, '--server', fixture.server.url], {
      env: { ...process.env, CFGHUB_TOKEN: token, CFGHUB_SERVER: '' },
    });

  beforeAll(async () => {
    await made('repo', 'create', CLI_REPO, '--context', 'Environment,Application,Instance');
    for (const label of ['alice', 'bob']) cliTokens[label] = await made('token', 'create', CLI_REPO, '--name', label);
    const seed = await pushTo(
      fixture.server.url,
      `/rest/push/${CLI_REPO}`,
      { enableKeyCreation: true, data: [hostAt('Production;Billing;node-7', 'db.prod')] },
      { 'Client-Token': cliTokens.alice },
    );
    expect(seed.status, reasonOf(seed)).toBe(200);
    await made('repo', 'settings', CLI_REPO, '--require-approvals', 'Production;*;*=1');
  });

  it('creates, shows the preview, refuses self-approval, approves, applies and lists', async () => {
    const folder = tempDir();
    const bodyFile = join(folder.path, 'change-body.json');
    writeFileSync(bodyFile, JSON.stringify({ data: [hostAt('Production;Billing;node-7', 'db2.prod')] }));
    const created = await change(
      cliTokens.alice,
      'create',
      CLI_REPO,
      '--title',
      'New production host',
      '--body',
      bodyFile,
    );
    folder.remove();
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toBe('1');
    expect(git(gitdirOf(fixture.repos, CLI_REPO), 'rev-parse', '--verify', 'refs/changes/1').trim()).toMatch(
      /^[0-9a-f]{40}$/,
    );

    const shown = await change(cliTokens.bob, 'show', CLI_REPO, id);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('change request 1: New production host');
    expect(shown.stdout).toContain('required: Production;*;* (1 approval): needs 1');
    expect(shown.stdout).toContain('    Production;Billing;node-7\n      db.host: "db.prod" -> "db2.prod"');

    const self = await change(cliTokens.alice, 'approve', CLI_REPO, id);
    expect(self.code).not.toBe(0);
    expect(self.stderr).toContain('alice is the author of change request 1');
    const early = await change(cliTokens.alice, 'apply', CLI_REPO, id);
    expect(early.code).not.toBe(0);
    expect(early.stderr).toContain('needs 1 approval by others than its author alice');

    const approved = await change(cliTokens.bob, 'approve', CLI_REPO, id);
    expect(approved.stdout).toBe('change request 1 approved (approvals: bob)\n');
    const applied = await change(cliTokens.alice, 'apply', CLI_REPO, id);
    expect(applied.code, applied.stderr).toBe(0);
    const commit = /^change request 1 applied as ([0-9a-f]{40})\n$/.exec(applied.stdout)?.[1];
    const gitdirCli = gitdirOf(fixture.repos, CLI_REPO);
    expect(git(gitdirCli, 'rev-parse', 'refs/heads/main').trim()).toBe(commit);
    expect(
      git(
        gitdirCli,
        'log',
        '-1',
        '--format=%(trailers:key=Approved-By,valueonly)%(trailers:key=Change-Request,valueonly)',
        commit!,
      ),
    ).toBe('bob\n1\n\n');
    git(gitdirCli, 'fsck', '--strict', '--no-dangling');

    const listed = await change(cliTokens.bob, 'list', CLI_REPO);
    expect(listed.stdout).toBe('1\tapplied\talice\t1 approval(s)\tNew production host\n');
  });
});
