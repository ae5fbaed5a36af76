/**
 * Security groups that no operation gets around, against the real
 * server, real bare repositories, the real `cfghub` command and the real git CLI:
 * - restore follows a push's rules: changing, adding or deleting a secured key or file needs the
 *   group's key (403 naming the group otherwise), `security-groups.yaml` stays at the head's
 *   version, so an old password never opens the group again; revert never changes secrets or groups;
 * - a new context variant of a secured file's path needs the group's key;
 * - a key named `x]` referenced by a secured file keeps the repository readable after a restart.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  cliWithInput,
  git,
  gitdirOf,
  pushTo,
  reasonOf,
  serverForFile,
  startTestServer,
} from '../../support/harness.js';
import { read } from '../../support/reads.js';

const OLD_PASSWORD = 'old-vault-password';
const NEW_PASSWORD = 'new-vault-password';

const fixture = serverForFile();
let seq = 0;

const auth = (password: string) => ({ 'Security-Profile-Auth': JSON.stringify({ vault: password }) });
const headOf = (repo: string) => git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
const groupsBlob = (repo: string) =>
  git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main:security-groups.yaml').trim();

async function newRepository(): Promise<string> {
  const repo = `acme/vault${++seq}`;
  cliOk(fixture.repos, 'repo', 'create', repo, '--context', 'Environment', '--token-free-push', '--token-free-pull');
  const created = await cliWithInput(fixture.repos, `${OLD_PASSWORD}\n`, 'group', 'create', repo, 'vault');
  expect(created.code, created.stderr).toBe(0);
  return repo;
}

async function pushOk(repo: string, data: unknown[]): Promise<string> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
    changeComment: 'c',
    enableKeyCreation: true,
    data,
  });
  expect(answer.status, reasonOf(answer)).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

async function restoreTo(repo: string, point: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${fixture.server.url}/rest/restore/${repo}`, {
    method: 'POST',
    headers: { To: point, ...headers },
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
}

const pullOf = (repo: string, headers: Record<string, string> = {}) =>
  read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'Prod', ...headers });

describe('restore follows the rules of a push', () => {
  let repo: string;
  let empty: string;
  let beforePasswd: string;
  let afterPasswd: string;

  beforeAll(async () => {
    repo = await newRepository();
    empty = headOf(repo);
    await pushOk(repo, [
      {
        key: 'db.password',
        securityGroup: 'vault',
        password: OLD_PASSWORD,
        values: [{ context: '*', value: 'old-secret' }],
      },
      { file: 'secret/cert.pem', context: '*', securityGroup: 'vault', password: OLD_PASSWORD, content: 'CERT-1' },
      { key: 'plain', values: [{ context: '*', value: 'p1' }] },
    ]);
    beforePasswd = headOf(repo);
    const changed = await cliWithInput(
      fixture.repos,
      `${OLD_PASSWORD}\n${NEW_PASSWORD}\n`,
      'group',
      'passwd',
      repo,
      'vault',
    );
    expect(changed.code, changed.stderr).toBe(0);
    afterPasswd = headOf(repo);
    await pushOk(repo, [{ key: 'plain', values: [{ context: '*', value: 'p2' }] }]);
  });

  it('an anonymous restore to before a group passwd is refused naming the group; the old password opens nothing', async () => {
    const head = headOf(repo);
    const groups = groupsBlob(repo);
    const answer = await restoreTo(repo, beforePasswd);
    expect(answer.status).toBe(403);
    expect(answer.json.message).toMatch(/security group vault/);
    expect(headOf(repo)).toBe(head);
    expect(groupsBlob(repo)).toBe(groups);
    const old = await pullOf(repo, auth(OLD_PASSWORD));
    expect(old.json.properties['db.password'].encryption).toBe('vault');
    expect(old.text).not.toContain('old-secret');
  });

  it('with the current password it is a 409: the point sealed its secrets with an earlier key', async () => {
    const head = headOf(repo);
    const answer = await restoreTo(repo, beforePasswd, auth(NEW_PASSWORD));
    expect(answer.status).toBe(409);
    expect(answer.json.message).toMatch(/earlier key of security group vault/);
    expect(headOf(repo)).toBe(head);
  });

  it('an anonymous restore to before the secrets existed (which would delete them) is refused naming the group', async () => {
    const head = headOf(repo);
    const answer = await restoreTo(repo, empty);
    expect(answer.status).toBe(403);
    expect(answer.json.message).toMatch(/security group vault/);
    expect(headOf(repo)).toBe(head);
    expect((await pullOf(repo, auth(NEW_PASSWORD))).json.properties['db.password']).toEqual({ val: 'old-secret' });
  });

  it("a restore that changes no secret needs no key; security-groups.yaml stays the head's", async () => {
    const groups = groupsBlob(repo);
    const answer = await restoreTo(repo, afterPasswd);
    expect(answer.status, answer.text).toBe(200);
    expect((await pullOf(repo)).json.properties.plain).toEqual({ val: 'p1' });
    expect(groupsBlob(repo)).toBe(groups);
  });

  it('with the current password a restore deleting the secrets goes through, and keeps the group as it is', async () => {
    const groups = groupsBlob(repo);
    const answer = await restoreTo(repo, empty, auth(NEW_PASSWORD));
    expect(answer.status, answer.text).toBe(200);
    const pulled = await pullOf(repo, auth(NEW_PASSWORD));
    expect(pulled.json.properties['db.password']).toBeUndefined();
    expect(groupsBlob(repo)).toBe(groups);
    git(gitdirOf(fixture.repos, repo), 'fsck', '--strict', '--no-progress');
  });

  it('a restore bringing a secret back needs the key too, and works with a token bound to the group', async () => {
    const withSecret = await pushOk(repo, [
      { key: 'api.key', securityGroup: 'vault', password: NEW_PASSWORD, values: [{ context: '*', value: 'k1' }] },
    ]);
    await pushOk(repo, [{ key: 'api.key', opp: 'delete', password: NEW_PASSWORD }]);
    expect((await restoreTo(repo, withSecret)).status).toBe(403);
    const bound = await cliWithInput(
      fixture.repos,
      `${NEW_PASSWORD}\n`,
      'token',
      'create',
      repo,
      '--name',
      'vault-admin',
      '--security-group',
      'vault',
    );
    expect(bound.code, bound.stderr).toBe(0);
    const answer = await restoreTo(repo, withSecret, { 'Client-Token': bound.stdout.trim() });
    expect(answer.status, answer.text).toBe(200);
    expect((await pullOf(repo, auth(NEW_PASSWORD))).json.properties['api.key']).toEqual({ val: 'k1' });
  });

  it('the command line restores secured keys only with --security-group and the password on standard input', async () => {
    const withSecret = await pushOk(repo, [
      { key: 'cli.key', securityGroup: 'vault', password: NEW_PASSWORD, values: [{ context: '*', value: 'c1' }] },
    ]);
    await pushOk(repo, [{ key: 'cli.key', opp: 'delete', password: NEW_PASSWORD }]);
    const head = headOf(repo);
    const without = await cliWithInput(fixture.repos, '', 'restore', repo, withSecret);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/security group vault/);
    const wrong = await cliWithInput(
      fixture.repos,
      `${OLD_PASSWORD}\n`,
      'restore',
      repo,
      withSecret,
      '--security-group',
      'vault',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain(OLD_PASSWORD);
    expect(headOf(repo)).toBe(head);
    const done = await cliWithInput(
      fixture.repos,
      `${NEW_PASSWORD}\n`,
      'restore',
      repo,
      withSecret,
      '--security-group',
      'vault',
    );
    expect(done.code, done.stderr).toBe(0);
    expect((await pullOf(repo, auth(NEW_PASSWORD))).json.properties['cli.key']).toEqual({ val: 'c1' });
  });

  it('revert refuses a commit that changed security-groups.yaml (a group passwd), naming it', async () => {
    const response = await fetch(`${fixture.server.url}/rest/revert/${repo}`, {
      method: 'POST',
      headers: { Commit: afterPasswd, ...auth(NEW_PASSWORD) },
    });
    expect(response.status).toBe(409);
    expect((await response.json()).message).toMatch(/security-groups\.yaml|security group vault/);
  });
});

describe('a secured file path cannot be shadowed at another context', () => {
  it("a new variant of the path needs the group's key; with it, it is accepted", async () => {
    const repo = await newRepository();
    await pushOk(repo, [
      { file: 'secret/cert.pem', context: '*', securityGroup: 'vault', password: OLD_PASSWORD, content: 'REAL-CERT' },
    ]);
    const head = headOf(repo);
    const attack = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
      data: [{ file: 'secret/cert.pem', context: 'Prod', content: 'ATTACKER-CERT' }],
    });
    expect(attack.status).toBe(304);
    expect(reasonOf(attack)).toMatch(
      /data\[0\] file secret\/cert\.pem: the password for security group vault is missing or wrong/,
    );
    expect(headOf(repo)).toBe(head);
    const opened = await pullOf(repo, auth(OLD_PASSWORD));
    expect(opened.json.files['secret/cert.pem'].content).toBe('REAL-CERT');
    // Another path is free to add; the same path with the password too.
    await pushOk(repo, [{ file: 'public/cert.pem', context: 'Prod', content: 'PUBLIC' }]);
    await pushOk(repo, [
      {
        file: 'secret/cert.pem',
        context: 'Prod',
        password: OLD_PASSWORD,
        securityGroup: 'vault',
        content: 'PROD-CERT',
      },
    ]);
    expect((await pullOf(repo, auth(OLD_PASSWORD))).json.files['secret/cert.pem'].content).toBe('PROD-CERT');
  });
});

describe('a key named x] referenced by a secured file', () => {
  it('keeps the repository readable, also by a new server on the same folder', async () => {
    const repo = await newRepository();
    await pushOk(repo, [
      { key: 'x]', values: [{ context: '*', value: 'bracket' }] },
      { key: '[y', values: [{ context: '*', value: 'open' }] },
      {
        file: 'secret/t.conf',
        context: '*',
        securityGroup: 'vault',
        password: OLD_PASSWORD,
        content: 'v=${ x] } w=${ [y }',
      },
    ]);
    const envelope = git(gitdirOf(fixture.repos, repo), 'show', 'refs/heads/main:files/_/secret/t.conf');
    expect(envelope).toMatch(/^references: \["x\]", "\[y"\]$/m);
    const fresh = await startTestServer(fixture.repos);
    try {
      const pulled = await read(fresh.url, `/rest/pull/${repo}`, { Context: 'Prod', ...auth(OLD_PASSWORD) });
      expect(pulled.status, pulled.text).toBe(200);
      expect(pulled.json.files['secret/t.conf'].content).toBe('v=bracket w=open');
      const listing = await read(fresh.url, '/rest/info/all');
      expect(listing.json.find((r: { name: string }) => r.name === repo.split('/')[1]).error).toBeUndefined();
      const again = await pushTo(fresh.url, `/rest/push/${repo}`, {
        data: [{ key: 'x]', values: [{ context: 'Prod', value: 'b2' }] }],
      });
      expect(again.status, reasonOf(again)).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
