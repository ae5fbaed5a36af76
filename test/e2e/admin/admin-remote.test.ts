/**
 * The admin API and the CLI against a remote server: every
 * administrative command is run twice, once on a repositories folder (`--repos`) and once on a
 * server serving another folder (`--server`, admin token in CFGHUB_ADMIN_TOKEN), and the two runs
 * must print the same thing and exit alike. Then what only the API has: admin tokens (missing,
 * wrong, revoked), JSON errors, passwords never logged, repository changes as commits.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bothWaysServer, run, runBothWays, step, type Step } from '../../support/bothWays.js';
import { commitCount, git, gitdirOf, headOf, pushTo } from '../../support/harness.js';

const REPO = 'acme/app';

const world = bothWaysServer();
const admin = world.admin;

const STEPS: Step[] = [
  step(0, ['repo', 'create', REPO, '--context', 'Environment,Application', '--description', 'The app']),
  step(1, ['repo', 'create', 'ACME/App', '--context', 'Environment']),
  step(2, ['repo', 'create', 'acme/x', '--context', 'Bad Level']),
  step(2, ['repo', 'create', 'acme', '--context', 'A']),
  step(0, ['repo', 'list']),
  step(0, ['repo', 'settings', REPO, '--description', 'The app, described', '--private', '--token-free-pull']),
  step(0, ['repo', 'settings', REPO, '--private']), // already so: no commit, the same record
  step(1, ['repo', 'settings', 'acme/none', '--private']),
  // `repo set` is the same command; its switches also take true|false.
  step(0, ['repo', 'set', REPO, '--personal', 'true']),
  step(2, ['repo', 'set', REPO, '--personal', 'maybe']),
  step(0, ['repo', 'create', 'acme/gone', '--context', 'Environment']),
  step(0, ['token', 'create', 'acme/gone', '--name', 'orphan']),
  step(2, ['repo', 'delete', 'acme/gone']),
  step(0, ['repo', 'delete', 'acme/gone', '--yes']),
  step(1, ['tag', 'list', 'acme/gone']),
  step(1, ['repo', 'delete', 'acme/gone', '--yes']),
  step(0, ['tag', 'create', REPO, 'v1', '--comment', 'first']),
  step(1, ['tag', 'create', REPO, 'V1']),
  step(2, ['tag', 'create', REPO, 'x.lock']),
  step(1, ['tag', 'list', 'acme/none']),
  step(0, ['token', 'create', REPO, '--name', 'deployer', '--force-key-push']),
  step(1, ['token', 'create', REPO, '--name', 'deployer']),
  step(2, ['token', 'create', REPO, '--expires', 'tomorrow']),
  step(2, ['token', 'create', REPO, '--expires', '2001-01-01T00:00:00Z']),
  step(2, ['token', 'create', REPO, '--name', 'bad label']),
  step(0, ['token', 'create', REPO, '--expires', '2099-01-01T00:00:00Z']),
  // The token kinds of access rules: read-only, and assigned to a rule set (which must exist).
  step(0, ['token', 'create', REPO, '--name', 'viewer', '--read-only']),
  step(1, ['token', 'create', REPO, '--name', 'ruled', '--rules', 'nope']),
  step(0, ['token', 'list', REPO]),
  step(0, ['token', 'revoke', REPO, 'deployer']),
  step(1, ['token', 'revoke', REPO, 'deployer']),
  step(1, ['token', 'list', 'acme/none']),
  step(0, ['group', 'create', REPO, 'secret'], 'correct horse\n'),
  step(2, ['group', 'create', REPO, 'short'], 'short\n'),
  step(2, ['group', 'create', REPO, 'nopassword'], ''),
  step(1, ['group', 'create', 'acme/none', 'secret'], 'correct horse\n'),
  step(1, ['group', 'create', REPO, 'SECRET'], 'correct horse\n'),
  step(0, ['group', 'list', REPO]),
  step(1, ['repo', 'settings', REPO, '--no-security']), // a group exists
  step(1, ['group', 'passwd', REPO, 'secret'], 'wrong horse\nbattery staple\n'),
  step(0, ['group', 'passwd', REPO, 'secret'], 'correct horse\nbattery staple\n'),
  step(1, ['token', 'create', REPO, '--name', 'reader', '--security-group', 'secret'], 'correct horse\n'),
  step(0, ['token', 'create', REPO, '--name', 'reader', '--security-group', 'secret'], 'battery staple\n'),
  step(0, ['token', 'list', REPO]),
  step(0, ['group', 'delete', REPO, 'secret']),
  step(1, ['group', 'delete', REPO, 'secret']),
  step(0, ['restore', REPO, 'v1', '--comment', 'back to v1']),
  step(0, (repos) => [
    'restore',
    REPO,
    git(gitdirOf(repos, REPO), 'rev-parse', 'HEAD~1').trim(),
    '--comment',
    'group back',
  ]),
  // A revert that would undo a security group change is refused both ways, naming the file.
  step(1, (repos) => ['revert', REPO, headOf(repos, REPO)]),
  step(1, ['revert', REPO, '0123456789012345678901234567890123456789']),
  step(0, ['tag', 'list', REPO]),
  step(0, ['tag', 'delete', REPO, 'V1']),
  step(1, ['tag', 'delete', REPO, 'v1']),
  step(0, ['repo', 'list']),
];

describe('every administrative command, on a folder and on a server', () => {
  it('prints the same and exits alike both ways', async () => {
    await runBothWays(world.sides(), STEPS);
    // Both folders hold the same history: each change a commit, made the same way.
    expect(commitCount(world.remote.path, REPO)).toBe(commitCount(world.local.path, REPO));
    const subjects = (repos: string) => git(gitdirOf(repos, REPO), 'log', '--format=%s', 'refs/heads/main');
    expect(subjects(world.remote.path)).toBe(subjects(world.local.path));
    // A deleted repository is moved aside, not destroyed, and its tokens are revoked.
    for (const repos of [world.local.path, world.remote.path]) {
      const tokens = JSON.parse(readFileSync(join(repos, '.cfghub', 'tokens.json'), 'utf8')).tokens;
      expect(tokens.find((t: { label: string }) => t.label === 'orphan').revoked).not.toBeNull();
      expect(readdirSync(join(repos, '.cfghub', 'deleted', 'acme'))).toEqual([
        expect.stringMatching(/^gone\.git\.\d{8}T\d{6}Z$/),
      ]);
    }
    expect(git(gitdirOf(world.remote.path, REPO), 'show', 'refs/heads/main:repository.yaml')).toContain(
      'isPrivate: true',
    );
    expect(git(gitdirOf(world.remote.path, REPO), 'fsck', '--strict', '--no-dangling').trim()).toBe('');
    // No password reached the server's log.
    for (const password of ['correct horse', 'battery staple', 'wrong horse'])
      expect(world.server.logText()).not.toContain(password);
  }, 400_000);
});

describe('the admin API', () => {
  it('refuses requests without a valid admin token, with a JSON error', async () => {
    for (const token of [null, 'cfgadm_nope', 'garbage']) {
      const answer = await admin('GET', '/rest/admin/repositories', undefined, token);
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ error: 'unauthorized' });
      expect(typeof answer.json.message).toBe('string');
    }
    // A client token is not an admin token.
    const created = await admin('POST', `/rest/admin/repositories/${REPO}/tokens`, { label: 'client' });
    expect(created.status).toBe(201);
    expect((await admin('GET', '/rest/admin/repositories', undefined, created.json.token)).status).toBe(401);
  });

  it('makes read-only tokens and tokens assigned to a rule set, and lists them so', async () => {
    const rules = await run(['rules', 'create', REPO, 'team', '--repos', world.remote.path]);
    expect(rules.code, rules.stderr).toBe(0);
    const ruled = await admin('POST', `/rest/admin/repositories/${REPO}/tokens`, {
      label: 'team-member',
      ruleSet: 'TEAM',
    });
    expect(ruled.status, ruled.text).toBe(201);
    const reader = await admin('POST', `/rest/admin/repositories/${REPO}/tokens`, {
      label: 'reader-only',
      readOnly: true,
    });
    expect(reader.status, reader.text).toBe(201);
    const missing = await admin('POST', `/rest/admin/repositories/${REPO}/tokens`, { label: 'lost', ruleSet: 'nope' });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: 'not_found' });
    const listed = await run(['token', 'list', REPO], {
      CFGHUB_SERVER: world.server.url,
      CFGHUB_ADMIN_TOKEN: world.adminToken,
    });
    const byLabel = new Map(JSON.parse(listed.stdout).map((t: { label: string }) => [t.label, t]));
    expect(byLabel.get('team-member')).toMatchObject({ ruleSet: 'team', readOnly: false });
    expect(byLabel.get('reader-only')).toMatchObject({ ruleSet: null, readOnly: true });
    // The read-only token reads, and is refused a push.
    const refused = await pushTo(
      world.server.url,
      '/rest/push',
      { enableKeyCreation: true, data: [{ key: 'k', values: [{ context: '*;*', value: 'v' }] }] },
      { 'Client-Token': reader.json.token },
    );
    expect(refused.status).toBe(403);
  });

  it('stops accepting an admin token at once when it is revoked', async () => {
    const made = await run(['admin-token', 'create', '--name', 'temp', '--repos', world.remote.path]);
    const token = made.stdout.trim();
    expect(token).toMatch(/^cfgadm_/);
    expect((await admin('GET', '/rest/admin/repositories', undefined, token)).status).toBe(200);
    const listed = await run(['admin-token', 'list', '--repos', world.remote.path]);
    expect(JSON.parse(listed.stdout).map((t: { label: string }) => t.label)).toEqual(['ops', 'temp']);
    expect(listed.stdout).not.toContain(token);
    expect((await run(['admin-token', 'revoke', 'temp', '--repos', world.remote.path])).code).toBe(0);
    const refused = await admin('GET', '/rest/admin/repositories', undefined, token);
    expect(refused.status).toBe(401);
    expect(refused.json.message).toContain('revoked');
    expect((await run(['admin-token', 'revoke', 'temp', '--repos', world.remote.path])).code).toBe(1);
  });

  it('keeps admin tokens hashed beside the client tokens, outside every repository', () => {
    const stored = readFileSync(join(world.remote.path, '.cfghub', 'admin-tokens.json'), 'utf8');
    expect(stored).not.toContain(world.adminToken);
    expect(JSON.parse(stored).adminTokens[0]).toMatchObject({
      label: 'ops',
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('answers a malformed body with 400 naming the field, and a non-JSON one with 415', async () => {
    const bad = await admin('POST', '/rest/admin/repositories', { account: 'acme', name: 'y', context: 'Environment' });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: 'bad_request' });
    expect(bad.json.message).toContain('context');
    const response = await fetch(`${world.server.url}/rest/admin/repositories`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${world.adminToken}` },
      body: 'x',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: 'unsupported_media_type' });
  });

  it('makes a token that pushes, and a tag, from another machine', async () => {
    const created = await run(['token', 'create', REPO, '--name', 'pusher'], {
      CFGHUB_SERVER: world.server.url,
      CFGHUB_ADMIN_TOKEN: world.adminToken,
    });
    expect(created.code, created.stderr).toBe(0);
    const before = commitCount(world.remote.path, REPO);
    const applied = async () =>
      Number(
        /^cfghub_pushes_total\{outcome="applied"\} (\d+)$/m.exec(
          await (await fetch(`${world.server.url}/metrics`)).text(),
        )?.[1],
      );
    const appliedBefore = await applied();
    const pushed = await pushTo(
      world.server.url,
      '/rest/push',
      { enableKeyCreation: true, data: [{ key: 'k', values: [{ context: '*;*', value: 'v' }] }] },
      { 'Client-Token': created.stdout.trim() },
    );
    expect(pushed.status, pushed.body).toBe(200);
    expect(commitCount(world.remote.path, REPO)).toBe(before + 1);
    expect(await applied()).toBe(appliedBefore + 1); // and /metrics shows it
    const tagged = await run(['tag', 'create', REPO, 'after-push'], {
      CFGHUB_SERVER: world.server.url,
      CFGHUB_ADMIN_TOKEN: world.adminToken,
    });
    expect(tagged.code, tagged.stderr).toBe(0);
    expect(git(gitdirOf(world.remote.path, REPO), 'rev-parse', 'after-push^{commit}').trim()).toBe(
      headOf(world.remote.path, REPO),
    );
  });

  it('says so when the server cannot be reached or no admin token is given', async () => {
    const noToken = await run(['repo', 'list', '--server', world.server.url]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('CFGHUB_ADMIN_TOKEN');
    const unreachable = await run(['repo', 'list', '--server', 'http://127.0.0.1:1'], {
      CFGHUB_ADMIN_TOKEN: world.adminToken,
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the server');
    const both = await run(['repo', 'list', '--server', world.server.url, '--repos', world.local.path], {
      CFGHUB_ADMIN_TOKEN: world.adminToken,
    });
    expect(both.code).toBe(2);
  });
});
