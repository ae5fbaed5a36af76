/**
 * The `cfghub` command, run as a child process: its output, exit statuses
 * and what it leaves on disk.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, git, gitdirOf, startTestServer, tempDir } from '../../support/harness.js';

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir();
});

afterAll(() => dir.remove());

describe('repo create', () => {
  it('creates a bare repository with a first commit holding its settings, and prints its record', () => {
    const out = cliOk(
      dir.path,
      'repo',
      'create',
      'acme/billing',
      '--context',
      'Environment,Application',
      '--description',
      'Billing settings',
      '--private',
      '--no-vdt',
    );
    const record = JSON.parse(out);
    expect(record).toMatchObject({
      account: 'acme',
      name: 'billing',
      isPrivate: true,
      vdtEnabled: false,
      securityEnabled: true,
      description: 'Billing settings',
      keyCount: 0,
      valueCount: 0,
      userCount: 0,
      context: ['Environment', 'Application'],
    });
    expect(record.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const gitdir = gitdirOf(dir.path, 'acme/billing');
    expect(git(gitdir, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
    expect(git(gitdir, 'rev-list', '--count', 'HEAD').trim()).toBe('1');
    expect(git(gitdir, 'show', 'HEAD:repository.yaml')).toContain('- Environment\n  - Application');
  });

  it('refuses a name that differs only in case from an existing one, with exit 1', () => {
    const result = cli(dir.path, 'repo', 'create', 'ACME/Billing', '--context', 'Environment');
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('cfghub: repository ACME/Billing already exists');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    [['repo', 'create', 'acme', '--context', 'A'], 'expected ACCOUNT/NAME'],
    [['repo', 'create', 'ac me/x', '--context', 'A'], 'account name'],
    [['repo', 'create', 'acme/x--y', '--context', 'A'], 'repository name'],
    [['repo', 'create', 'acme/x', '--context', 'A,A'], 'appears twice'],
    [['repo', 'create', 'acme/x', '--context', 'A,B,C,D,E,F,G,H,I,J,K'], '1 to 10 context levels'],
    [['repo', 'create', 'acme/x', '--context', 'A b'], 'context level'],
    [['repo', 'create', 'acme/x'], "required option '--context"],
    [['repo', 'frobnicate'], 'unknown command'],
    [['token', 'create', 'acme/billing', '--expires', 'tomorrow'], '--expires must be an ISO 8601 date'],
    [['token', 'create', 'acme/billing', '--expires', '2031-02-30T00:00:00Z'], '--expires must be an ISO 8601 date'],
    [['token', 'create', 'acme/billing', '--expires', '2001-01-01T00:00:00Z'], 'in the past'],
    [['token', 'create', 'acme/billing', '--name', 'bad label'], 'token label'],
  ])('%j exits 2 with a one-line error naming the problem', (args, problem) => {
    const result = cli(dir.path, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(problem);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('exits 1 for an unknown repository or label', () => {
    expect(cli(dir.path, 'token', 'create', 'acme/nope').code).toBe(1);
    expect(cli(dir.path, 'token', 'list', 'acme/nope').code).toBe(1);
    expect(cli(dir.path, 'token', 'revoke', 'acme/billing', 'nobody').code).toBe(1);
  });
});

describe('tokens', () => {
  it('are printed once, stored only as a hash outside git, listed without the token, and revoked', () => {
    const token = cliOk(
      dir.path,
      'token',
      'create',
      'acme/billing',
      '--name',
      'deployer',
      '--expires',
      '2099-01-01T00:00:00Z',
      '--force-key-push',
    ).trim();
    expect(token).toMatch(/^cfg_[A-Za-z0-9_-]{43}$/);
    const second = cliOk(dir.path, 'token', 'create', 'acme/billing').trim();
    expect(second).not.toBe(token);
    const stored = readFileSync(join(dir.path, '.cfghub', 'tokens.json'), 'utf8');
    expect(stored).not.toContain(token);
    expect(statSync(join(dir.path, '.cfghub', 'tokens.json')).mode & 0o077).toBe(0);
    const listed = cliOk(dir.path, 'token', 'list', 'acme/billing');
    expect(listed).not.toContain(token);
    expect(listed).not.toContain(JSON.parse(stored).tokens[0].hash);
    expect(JSON.parse(listed)).toEqual([
      {
        label: 'deployer',
        created: expect.any(String),
        expires: '2099-01-01T00:00:00Z',
        forceKeyPush: true,
        securityGroups: [],
        readOnly: false,
        ruleSet: null,
        revoked: null,
        active: true,
      },
      {
        label: 'token-2',
        created: expect.any(String),
        expires: null,
        forceKeyPush: false,
        securityGroups: [],
        readOnly: false,
        ruleSet: null,
        revoked: null,
        active: true,
      },
    ]);
    expect(cli(dir.path, 'token', 'create', 'acme/billing', '--name', 'DEPLOYER').code).toBe(1);
    cliOk(dir.path, 'token', 'revoke', 'acme/billing', 'deployer');
    const after = JSON.parse(cliOk(dir.path, 'token', 'list', 'acme/billing'));
    expect(after[0]).toMatchObject({ label: 'deployer', active: false, revoked: expect.stringMatching(/Z$/) });
    // A revoked label may be used again.
    expect(cli(dir.path, 'token', 'create', 'acme/billing', '--name', 'deployer').code).toBe(0);
  });
});

describe('repo list', () => {
  it('prints the same records as GET /rest/info/all', async () => {
    cliOk(dir.path, 'repo', 'create', 'Zeta/first', '--context', 'Env');
    cliOk(dir.path, 'repo', 'create', 'acme/Alpha', '--context', 'Env');
    const printed = JSON.parse(cliOk(dir.path, 'repo', 'list'));
    const server = await startTestServer(dir.path);
    try {
      const served = await (await fetch(`${server.url}/rest/info/all`)).json();
      expect(printed).toEqual(served);
    } finally {
      await server.close();
    }
    expect(printed.map((r: { account: string; name: string }) => `${r.account}/${r.name}`)).toEqual([
      'acme/Alpha',
      'acme/billing',
      'Zeta/first',
    ]);
    expect(printed.find((r: { name: string }) => r.name === 'billing').userCount).toBe(2);
  });
});
