/**
 * `git push` over HTTP with the stock git client against the real server: a push of several
 * commits lands with their ids, passes `git fsck --strict`, and is seen by a REST pull and by a
 * watcher; each rule a REST push passes refuses a pushed commit that breaks it, with the reason in
 * git's `remote:` lines, the head unmoved and none of the refused objects in the repository; a
 * token that may only read, or none, cannot push.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitAsync } from '../../support/gitCli.js';
import { cliOk, cliWithInput, git, gitdirOf, headOf, pushTo, serverForFile } from '../../support/harness.js';
import { keyPath } from '../../support/reads.js';

const REPO = 'acme/pushed';
const PASSWORD = 'group-password-1';
const fixture = serverForFile();
const tokens: Record<'writer' | 'reader' | 'team' | 'vault', string> = { writer: '', reader: '', team: '', vault: '' };
let clones = 0;

const urlOf = (fullName: string) => `${fixture.server.url}/git/${fullName}.git`;

/** A clone URL carrying a token as the password of HTTP Basic. */
function withToken(url: string, token: string): string {
  const address = new URL(url);
  address.username = 'me';
  address.password = token;
  return address.href;
}

async function gitIn(cwd: string, ...args: string[]) {
  return gitAsync(['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], { cwd });
}

async function gitOk(cwd: string, ...args: string[]): Promise<string> {
  const result = await gitIn(cwd, ...args);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A fresh clone of the repository, with `token` as its credential. */
async function cloneWith(token: string): Promise<string> {
  const folder = join(fixture.repos, `clone-${++clones}`);
  await gitOk(fixture.repos, 'clone', '--quiet', withToken(urlOf(REPO), token), folder);
  return folder;
}

function writeIn(clone: string, path: string, content: string): void {
  mkdirSync(dirname(join(clone, path)), { recursive: true });
  writeFileSync(join(clone, path), content);
}

/** A key's document as the layout writes it, with one value per context. */
function keyDocument(key: string, vdt: string, values: Record<string, string>): string {
  const lines = [`key: ${key}`, 'readme: ""', 'deprecated: false', `vdt: ${vdt}`, 'push: true', 'values:'];
  for (const [context, value] of Object.entries(values))
    lines.push(`  - context: "${context}"`, `    value: ${JSON.stringify(value)}`, '    active: true');
  return `${lines.join('\n')}\n`;
}

async function commitAll(clone: string, message: string): Promise<string> {
  await gitOk(clone, 'add', '-A');
  await gitOk(clone, 'commit', '--quiet', '-m', message);
  return gitOk(clone, 'rev-parse', 'HEAD');
}

const serverHead = () => headOf(fixture.repos, REPO);
/** Whether the served repository holds an object. */
const served = (oid: string, fullName = REPO) => {
  try {
    git(gitdirOf(fixture.repos, fullName), 'cat-file', '-e', oid);
    return true;
  } catch {
    return false;
  }
};

async function restPush(data: unknown[], token = tokens.writer) {
  const answer = await pushTo(
    fixture.server.url,
    '/rest/push',
    { changeComment: 'seed', enableKeyCreation: true, data },
    { 'Client-Token': token },
  );
  expect(answer.status, answer.body).toBe(200);
}

/** The CLI in a child process the test awaits: the in-process server keeps serving meanwhile. */
async function run(input: string, ...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, input, ...args);
  if (result.code !== 0) throw new Error(`cfghub ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout.trim();
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application', '--access-controls');
  tokens.writer = await run('', 'token', 'create', REPO, '--name', 'writer');
  tokens.reader = await run('', 'token', 'create', REPO, '--name', 'reader', '--read-only');
  await run('', 'rules', 'create', REPO, 'team');
  await run('', 'rules', 'add', REPO, 'team', 'key', 'StartsWith', 'team.', '--can-edit', 'true');
  tokens.team = await run('', 'token', 'create', REPO, '--name', 'team', '--rules', 'team');
  await run(`${PASSWORD}\n`, 'group', 'create', REPO, 'secrets');
  tokens.vault = await run(`${PASSWORD}\n`, 'token', 'create', REPO, '--name', 'vault', '--security-group', 'secrets');
  await restPush([
    { key: 'db.host', values: [{ context: '*;*', value: 'db.internal' }] },
    { key: 'db.port', vdt: 'Integer', values: [{ context: '*;*', value: 5432 }] },
    { key: 'team.color', values: [{ context: '*;*', value: 'blue' }] },
    { file: 'app.conf', context: '*;*', content: 'host=${ db.host }\n' },
  ]);
  await restPush([
    {
      key: 'db.password',
      securityGroup: 'secrets',
      password: PASSWORD,
      values: [{ context: '*;*', value: 's3cr3t-value' }],
    },
  ]);
});

describe('git push over HTTP', () => {
  it('lands several commits with their ids; fsck is clean; a REST pull and a watcher see them', async () => {
    const clone = await cloneWith(tokens.writer);
    const pullHead = await fetch(`${fixture.server.url}/rest/pull`, {
      headers: { 'Client-Token': tokens.writer, Context: 'Production;Billing' },
    });
    const etag = pullHead.headers.get('etag')!;
    const watcher = fetch(`${fixture.server.url}/rest/pull`, {
      headers: { 'Client-Token': tokens.writer, Context: 'Production;Billing', 'If-None-Match': etag, Wait: '60' },
    });

    writeIn(
      clone,
      keyPath('db.host'),
      keyDocument('db.host', 'Text', { '*;*': 'db.internal', 'Production;*': 'db.prod' }),
    );
    const first = await commitAll(clone, 'db.host for production');
    writeIn(clone, keyPath('feature.flag'), keyDocument('feature.flag', 'Boolean', { '*;*': 'true' }));
    writeIn(clone, 'files/_;_/conf/flags.properties', 'flag=${ feature.flag }\n');
    const second = await commitAll(clone, 'a feature flag and its file');

    const pushed = await gitIn(clone, 'push', 'origin', 'main');
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stderr).toMatch(/remote: cfghub: main is now [0-9a-f]{40} \(2 commits checked\)/);
    expect(serverHead()).toBe(second);
    const gitdir = gitdirOf(fixture.repos, REPO);
    expect(git(gitdir, 'rev-list', '--max-count=2', 'main').trim().split('\n')).toEqual([second, first]);
    expect(git(gitdir, 'log', '-1', '--format=%an <%ae>|%s', first).trim()).toBe(
      'Ada <ada@example.org>|db.host for production',
    );
    await fixture.server.settle(REPO);
    git(gitdir, 'fsck', '--strict', '--no-dangling');

    const watched = await watcher;
    expect(watched.status).toBe(200);
    const pulled = await fetch(`${fixture.server.url}/rest/pull`, {
      headers: { 'Client-Token': tokens.writer, Context: 'Production;Billing' },
    });
    const body = (await pulled.json()) as {
      properties: Record<string, { val: unknown }>;
      files: Record<string, unknown>;
    };
    expect(body.properties['db.host'].val).toBe('db.prod');
    expect(body.properties['feature.flag'].val).toBe('true');
    expect(JSON.stringify(body.files)).toContain('flag=true');
    expect(JSON.parse(await watched.text()).properties['db.host'].val).toBe('db.prod');
  });

  it('refuses, for each rule a REST push passes, with the reason in git’s output, and keeps the refused objects out', async () => {
    const cases: { name: string; token: keyof typeof tokens; change: (clone: string) => void; says: RegExp }[] = [
      {
        name: 'a file the server cannot read',
        token: 'writer',
        change: (clone) => writeIn(clone, `${dirname(keyPath('db.host'))}/notes.txt`, 'not a key\n'),
        says: /notes\.txt .*does not match the layout/,
      },
      {
        name: 'a value that does not fit its type',
        token: 'writer',
        change: (clone) => writeIn(clone, keyPath('db.port'), keyDocument('db.port', 'Integer', { '*;*': 'five' })),
        says: /key db\.port: the value at context \*;\* is not an Integer/,
      },
      {
        name: 'a template naming a key that does not exist',
        token: 'writer',
        change: (clone) => writeIn(clone, 'files/_;_/conf/extra.conf', 'x=${ no.such.key }\n'),
        says: /references key no\.such\.key, which would no longer exist/,
      },
      {
        name: 'an access rule of the token',
        token: 'team',
        change: (clone) => writeIn(clone, keyPath('db.host'), keyDocument('db.host', 'Text', { '*;*': 'elsewhere' })),
        says: /You do not have write access for specified context.*db\.host/,
      },
      {
        name: 'a secret value in the clear, even from a token bound to its group',
        token: 'vault',
        change: (clone) => {
          const path = join(clone, keyPath('db.password'));
          writeFileSync(path, readFileSync(path, 'utf8').replace(/value: .*enc:v1:.*/, 'value: "hunter2-in-clear"'));
        },
        says: /key db\.password: the value at context \*;\* is in the clear, but the key is in security group secrets/,
      },
      {
        name: 'the settings, owned by the admin commands',
        token: 'writer',
        change: (clone) => {
          const path = join(clone, 'repository.yaml');
          writeFileSync(
            path,
            readFileSync(path, 'utf8').replace('accessControlsEnabled: true', 'accessControlsEnabled: false'),
          );
        },
        says: /repository\.yaml \(the repository's settings\) is changed with cfghub's commands/,
      },
    ];
    for (const { name, token, change, says } of cases) {
      const clone = await cloneWith(tokens[token]);
      const before = serverHead();
      change(clone);
      const refused = await commitAll(clone, name);
      const pushed = await gitIn(clone, 'push', 'origin', 'main');
      expect(pushed.code, name).not.toBe(0);
      expect(pushed.stderr, name).toMatch(/remote: cfghub: push refused: commit [0-9a-f]{12} /);
      expect(pushed.stderr, name).toMatch(says);
      expect(pushed.stderr, name).toMatch(/! \[remote rejected\] main -> main/);
      expect(serverHead(), name).toBe(before);
      expect(served(refused), name).toBe(false);
    }
    expect(existsSync(join(gitdirOf(fixture.repos, REPO), 'objects', 'incoming'))).toBe(false);
  });

  it('refuses a schema violation pushed with git', async () => {
    const clone = await cloneWith(tokens.writer);
    writeIn(clone, 'schemas.yaml', 'keys:\n  - key: db.port\n    schema:\n      type: integer\n      maximum: 65535\n');
    await commitAll(clone, 'a schema for db.port');
    expect((await gitIn(clone, 'push', 'origin', 'main')).code).toBe(0);
    writeIn(clone, keyPath('db.port'), keyDocument('db.port', 'Integer', { '*;*': '70000' }));
    const refused = await commitAll(clone, 'a port too high');
    const pushed = await gitIn(clone, 'push', 'origin', 'main');
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/key db\.port at \*;\*.*keys\[0\] \(db\.port\).*must be <= 65535/);
    expect(served(refused)).toBe(false);
  });

  it('refuses a token that may only read (403 with the reason) and asks a push without a token for one', async () => {
    const clone = await cloneWith(tokens.reader);
    writeIn(clone, keyPath('db.host'), keyDocument('db.host', 'Text', { '*;*': 'read-only-change' }));
    await commitAll(clone, 'from a reader');
    const before = serverHead();
    const pushed = await gitIn(clone, 'push', 'origin', 'main');
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/remote: cfghub: token reader of acme\/pushed is read-only/);
    expect(pushed.stderr).toMatch(/403/);
    expect(serverHead()).toBe(before);

    const anonymous = await fetch(`${urlOf(REPO)}/info/refs?service=git-receive-pack`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="cfghub"');
  });

  it('refuses a commit touching a context that needs an approved change request, naming the rule', async () => {
    const guarded = 'acme/guarded';
    cliOk(fixture.repos, 'repo', 'create', guarded, '--context', 'Environment,Application');
    const writer = await run('', 'token', 'create', guarded, '--name', 'writer');
    const admin = await run('', 'admin-token', 'create', '--name', 'ops');
    await restPush([{ key: 'db.host', values: [{ context: '*;*', value: 'db.internal' }] }], writer);
    const set = await fetch(`${fixture.server.url}/rest/admin/repositories/${guarded}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ requiredApprovals: [{ context: 'Production;*', approvals: 1 }] }),
    });
    expect(set.status, await set.text()).toBe(200);
    const folder = join(fixture.repos, 'guarded-clone');
    await gitOk(fixture.repos, 'clone', '--quiet', withToken(urlOf(guarded), writer), folder);

    const values = { '*;*': 'db.internal', 'Production;*': 'db.prod' };
    writeIn(folder, keyPath('db.host'), keyDocument('db.host', 'Text', values));
    const refused = await commitAll(folder, 'db.host for production');
    const pushed = await gitIn(folder, 'push', 'origin', 'main');
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toMatch(/need an approved change request: required approvals .*Production;\*/);
    expect(pushed.stderr).toMatch(/open a change request with the same body instead/);
    expect(served(refused, guarded)).toBe(false);

    await gitOk(folder, 'reset', '--quiet', '--hard', 'origin/main');
    writeIn(
      folder,
      keyPath('db.host'),
      keyDocument('db.host', 'Text', { '*;*': 'db.internal', 'Development;*': 'db.dev' }),
    );
    const allowed = await commitAll(folder, 'db.host for development');
    expect((await gitIn(folder, 'push', 'origin', 'main')).code).toBe(0);
    expect(headOf(fixture.repos, guarded)).toBe(allowed);
  });

  it('refuses a push whose base is no longer the head, a merge, and a deletion, naming what to do', async () => {
    const clone = await cloneWith(tokens.writer);
    await restPush([{ key: 'team.color', values: [{ context: '*;*', value: 'green' }] }]);
    writeIn(clone, keyPath('team.size'), keyDocument('team.size', 'Text', { '*;*': 'small' }));
    await commitAll(clone, 'team size');
    const behind = await gitIn(clone, 'push', 'origin', 'main');
    expect(behind.code).not.toBe(0);
    expect(behind.stderr).toMatch(/fetch first|rejected/);

    await gitOk(clone, 'fetch', '--quiet');
    await gitOk(clone, 'merge', '--quiet', '--no-edit', 'origin/main');
    const merged = await gitIn(clone, 'push', 'origin', 'main');
    expect(merged.code).not.toBe(0);
    expect(merged.stderr).toMatch(/is a merge: main's history is linear, rebase instead of merging/);

    await gitOk(clone, 'reset', '--quiet', '--hard', 'origin/main');
    const deleted = await gitIn(clone, 'push', 'origin', ':main');
    expect(deleted.code).not.toBe(0);
    expect(serverHead()).toBe(await gitOk(clone, 'rev-parse', 'origin/main'));
  });
});
