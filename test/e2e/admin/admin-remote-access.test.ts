/**
 * Rule sets, context groups and replication tokens administered from another machine : each command runs on a repositories folder
 * and through a server's admin API, printing the same and exiting alike; each change is a commit
 * like any other; the admin API answers what only it can be asked with JSON errors.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { bothWaysServer, runBothWays, step, type Step } from '../../support/bothWays.js';
import { commitCount, git, gitdirOf } from '../../support/harness.js';

const REPO = 'acme/rules';

const world = bothWaysServer();
const admin = world.admin;

const RULES: Step[] = [
  step(0, ['repo', 'create', REPO, '--context', 'Environment,Application', '--access-controls', '--context-groups']),
  step(0, ['repo', 'create', 'acme/plain', '--context', 'Environment']),
  step(0, ['rules', 'list', REPO]),
  step(0, ['rules', 'create', REPO, 'payments']),
  step(1, ['rules', 'create', REPO, 'PAYMENTS']),
  step(2, ['rules', 'create', REPO, 'bad name']),
  step(2, ['rules', 'create', REPO, 'x', '--stop-on-first-match', 'maybe']),
  step(1, ['rules', 'create', 'acme/none', 'payments']),
  step(0, ['rules', 'create', REPO, 'ops', '--stop-on-first-match', 'false', '--unmatched-editable', 'true']),
  step(0, ['rules', 'set', REPO, 'payments', '--unmatched-editable', 'true']),
  step(2, ['rules', 'set', REPO, 'payments']),
  step(1, ['rules', 'set', REPO, 'nope', '--unmatched-editable', 'true']),
  step(2, ['rules', 'set', REPO, '..', '--unmatched-editable', 'true']),
  step(0, ['rules', 'add', REPO, 'payments', 'key', 'StartsWith', 'payments.', '--can-edit', 'true']),
  step(0, [
    'rules',
    'add',
    REPO,
    'payments',
    'value',
    'Resolves',
    'Production;*',
    '--can-edit',
    'false',
    '--priority',
    '1',
  ]),
  step(0, ['rules', 'add', REPO, 'payments', 'value', 'ContainsAny', 'Development,Test', '--can-edit', 'true']),
  step(2, ['rules', 'add', REPO, 'payments', 'value', 'Resolves', 'a;b;c', '--can-edit', 'false']),
  step(2, ['rules', 'add', REPO, 'payments', 'key', 'Resolves', 'x', '--can-edit', 'true']),
  step(2, ['rules', 'add', REPO, 'payments', 'value', 'Is', 'x', '--can-edit', 'true']),
  step(2, ['rules', 'add', REPO, 'payments', 'team', 'Is', 'x', '--can-edit', 'true']),
  step(2, ['rules', 'add', REPO, 'payments', 'key', 'Is', 'x', '--can-edit', 'maybe']),
  step(2, ['rules', 'add', REPO, 'payments', 'key', 'Is', 'x', '--can-edit', 'true', '--priority', '9']),
  step(1, ['rules', 'add', REPO, 'nope', 'key', 'Is', 'x', '--can-edit', 'true']),
  step(0, ['rules', 'move', REPO, 'payments', '3', '1']),
  step(2, ['rules', 'move', REPO, 'payments', '1', '7']),
  step(2, ['rules', 'move', REPO, 'payments', 'x', '1']),
  step(0, ['rules', 'delete', REPO, 'payments', '2']),
  step(2, ['rules', 'delete', REPO, 'payments', '5']),
  step(0, ['rules', 'list', REPO]),
  step(0, ['token', 'create', REPO, '--name', 'member', '--rules', 'Payments']),
  step(1, ['rules', 'delete', REPO, 'payments']), // a token is assigned to it
  step(0, ['token', 'revoke', REPO, 'member']),
  step(0, ['rules', 'delete', REPO, 'payments']),
  step(0, ['rules', 'delete', REPO, 'ops']),
  step(1, ['rules', 'delete', REPO, 'ops']),
];

const GROUPS: Step[] = [
  step(0, ['context-group', 'list', REPO]),
  step(0, ['context-group', 'create', REPO, 'Environment', 'EU', 'Germany', 'France']),
  step(1, ['context-group', 'create', REPO, 'environment', 'eu']),
  step(2, ['context-group', 'create', REPO, 'Nope', 'G']),
  step(2, ['context-group', 'create', REPO, 'Environment', 'bad group']),
  step(2, ['context-group', 'create', REPO, '..', 'G']),
  step(1, ['context-group', 'create', 'acme/plain', 'Environment', 'G']), // context groups are off there
  step(1, ['context-group', 'create', 'acme/none', 'Environment', 'G']),
  step(2, ['context-group', 'create', REPO, 'Environment', 'EU2', 'EU']), // no group of groups
  step(0, ['context-group', 'add', REPO, 'Environment', 'EU', 'Spain']),
  step(1, ['context-group', 'add', REPO, 'Environment', 'EU', 'spain']),
  step(1, ['context-group', 'add', REPO, 'Environment', 'Nope', 'Spain']),
  step(2, ['context-group', 'add', REPO, 'Environment', 'EU', '..']),
  step(0, ['context-group', 'remove', REPO, 'Environment', 'EU', 'France']),
  step(1, ['context-group', 'remove', REPO, 'Environment', 'EU', 'France']),
  step(2, ['context-group', 'remove', REPO, 'Environment', '.', 'France']),
  // Listed in the order a fresh read gives (by level, then name), by the server that made the commits too.
  step(0, ['context-group', 'create', REPO, 'Application', 'Backends']),
  step(0, ['context-group', 'list', REPO]),
  step(0, ['context-group', 'delete', REPO, 'Environment', 'EU']),
  step(1, ['context-group', 'delete', REPO, 'Environment', 'EU']),
  step(2, ['context-group', 'delete', REPO, '..', 'EU']),
  step(0, ['context-group', 'list', REPO]),
];

const REPLICATION: Step[] = [
  step(0, ['token', 'create', '--replication', '--name', 'replica-a']),
  step(1, ['token', 'create', '--replication', '--name', 'REPLICA-A']),
  step(2, ['token', 'create', '--replication', '--name', 'bad label']),
  step(2, ['token', 'create', REPO, '--replication']),
  step(2, ['token', 'create', '--replication', '--expires', '2099-01-01T00:00:00Z']),
  step(0, ['token', 'create', '--replication']),
  step(0, ['token', 'revoke', 'replica-a', '--replication']),
  step(1, ['token', 'revoke', 'replica-a', '--replication']),
  step(2, ['token', 'revoke', '..', '--replication']),
  step(2, ['token', 'revoke', 'replica-2', 'extra', '--replication']),
];

describe('rules, context-group and replication token commands, on a folder and on a server', () => {
  it('print the same and exit alike both ways, each change a commit made the same way', async () => {
    await runBothWays(world.sides(), [...RULES, ...GROUPS, ...REPLICATION]);
    expect(commitCount(world.remote.path, REPO)).toBe(commitCount(world.local.path, REPO));
    const subjects = (repos: string) => git(gitdirOf(repos, REPO), 'log', '--format=%s', 'refs/heads/main');
    expect(subjects(world.remote.path)).toBe(subjects(world.local.path));
    expect(subjects(world.remote.path)).toContain('Create rule set payments');
    expect(subjects(world.remote.path)).toContain('Remove France from context group EU');
    const files = (repos: string, path: string) => git(gitdirOf(repos, REPO), 'show', `refs/heads/main:${path}`);
    expect(files(world.remote.path, 'context-groups.yaml')).toBe(files(world.local.path, 'context-groups.yaml'));
    expect(files(world.remote.path, 'context-groups.yaml')).toContain('Backends');
    expect(git(gitdirOf(world.remote.path, REPO), 'fsck', '--strict', '--no-dangling').trim()).toBe('');
  }, 400_000);
});

describe('the admin API for rule sets, context groups and replication tokens', () => {
  beforeAll(async () => {
    await admin('POST', '/rest/admin/repositories', {
      account: 'acme',
      name: 'api',
      context: ['Environment'],
      accessControlsEnabled: true,
      contextGroupsEnabled: true,
    });
  });
  const API = '/rest/admin/repositories/acme/api';

  it('needs an admin token on every route', async () => {
    for (const [method, path] of [
      ['GET', `${API}/rule-sets`],
      ['POST', `${API}/rule-sets`],
      ['DELETE', `${API}/context-groups/Environment/EU`],
      ['POST', '/rest/admin/replication-tokens'],
    ]) {
      const answer = await admin(method, path, method === 'POST' ? { name: 'x' } : undefined, null);
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.json).toMatchObject({ error: 'unauthorized' });
    }
  });

  it('takes rules as fields, answers each change with its commit, and refuses a malformed body naming the field', async () => {
    const before = commitCount(world.remote.path, 'acme/api');
    const created = await admin('POST', `${API}/rule-sets`, { name: 'team' });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      ruleSet: { name: 'team', stopOnFirstMatch: true, unmatchedEditable: false, rules: [] },
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    const added = await admin('POST', `${API}/rule-sets/team/rules`, {
      match: 'Resolves',
      context: ['Production'],
      canEdit: false,
    });
    expect(added.status, added.text).toBe(201);
    expect(added.json.ruleSet.rules).toEqual([{ match: 'Resolves', context: ['Production'], canEdit: false }]);
    expect(git(gitdirOf(world.remote.path, 'acme/api'), 'rev-parse', 'refs/heads/main').trim()).toBe(added.json.commit);
    expect(commitCount(world.remote.path, 'acme/api')).toBe(before + 2);

    const notInt = await admin('POST', `${API}/rule-sets/team/rules`, {
      match: 'Is',
      key: 'a',
      canEdit: true,
      priority: 1.5,
    });
    expect(notInt.status).toBe(400);
    expect(notInt.json).toMatchObject({ error: 'bad_request' });
    expect(notInt.json.message).toContain('priority');
    const both = await admin('POST', `${API}/rule-sets/team/rules`, {
      match: 'Is',
      key: 'a',
      context: ['x'],
      canEdit: true,
    });
    expect(both.status).toBe(400);
    expect(both.json.message).toContain('not both');
    const badPriority = await admin('DELETE', `${API}/rule-sets/team/rules/first`);
    expect(badPriority.status).toBe(400);
    expect(badPriority.json.message).toBe('the priority is a whole number, got "first"');
    const moved = await admin('POST', `${API}/rule-sets/team/rules/1/move`, { to: 2 });
    expect(moved.status).toBe(400);
    expect(moved.json.message).toContain('from 1 to 1');
    expect(commitCount(world.remote.path, 'acme/api')).toBe(before + 2); // nothing half-written
    const groupActs = () =>
      world.server.logs.filter((line) => line.event === 'admin' && String(line.route).includes('context-groups'))
        .length;
    const actsBefore = groupActs();
    const group = await admin('POST', `${API}/context-groups`, {
      level: 'Environment',
      name: 'EU',
      members: ['Germany'],
    });
    expect(group.status, group.text).toBe(201);
    const member = await admin('POST', `${API}/context-groups/environment/eu/members`, { member: 'France' });
    expect(member.status, member.text).toBe(200);
    expect((await admin('GET', `${API}/context-groups`)).json).toEqual([
      { level: 'Environment', name: 'EU', members: ['Germany', 'France'] },
    ]);
    // Each change is logged as an admin act, by the admin token's label.
    expect(groupActs()).toBe(actsBefore + 2);
    expect(
      world.server.logs.find(
        (line) =>
          line.event === 'admin' && line.route === 'POST /rest/admin/repositories/:account/:repository/context-groups',
      ),
    ).toMatchObject({ admin: 'ops' });
  });

  it('makes a replication token that a replica can follow with, and revokes it', async () => {
    const made = await admin('POST', '/rest/admin/replication-tokens', { label: 'far-replica' });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({ label: 'far-replica', token: expect.stringMatching(/^cfg_/) });
    const state = await fetch(`${world.server.url}/rest/replication/state`, {
      headers: { Authorization: `Bearer ${made.json.token}` },
    });
    expect(state.status).toBe(200);
    expect((await admin('DELETE', '/rest/admin/replication-tokens/far-replica')).status).toBe(200);
    const refused = await fetch(`${world.server.url}/rest/replication/state`, {
      headers: { Authorization: `Bearer ${made.json.token}` },
    });
    expect(refused.status).toBe(401);
    const again = await admin('DELETE', '/rest/admin/replication-tokens/far-replica');
    expect(again.status).toBe(404);
    expect(again.json).toMatchObject({ error: 'not_found' });
  });
});

describe('the remote form of every administrative command', () => {
  it('is offered by every command but serve, admin-token, promote and ha, which the command line page names with why', async () => {
    const program = await buildProgram();
    const leaves = program.commands.flatMap((command) =>
      command.commands.length
        ? command.commands.map((sub) => ({ name: `${command.name()} ${sub.name()}`, command: sub }))
        : [{ name: command.name(), command }],
    );
    const withoutServer = leaves
      .filter(({ command }) => !command.options.some((option) => option.long === '--server'))
      .map(({ name }) => name);
    expect(withoutServer.sort()).toEqual([
      'admin-token create',
      'admin-token list',
      'admin-token revoke',
      'ha bootstrap',
      'ha promote',
      'ha status',
      'promote',
      'serve',
    ]);
    const readme = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    const exceptions = readme.slice(readme.indexOf('Commands with no remote form, on purpose:'));
    expect(exceptions).toMatch(/- `serve` starts the server itself/);
    expect(exceptions).toMatch(/- `admin-token create\|list\|revoke`: admin tokens are the root of trust/);
    expect(exceptions).toMatch(/- `promote` changes a stopped replica's folder/);
    expect(exceptions).toMatch(/- `ha status\|promote\|bootstrap` speak to the cluster's etcd/);
  });
});
