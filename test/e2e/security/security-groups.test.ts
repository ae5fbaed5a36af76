/**
 * Security groups end to end: secrets are only ciphertext in git (checked in every
 * object of a fresh `git clone` and in `git log -p`), passwords on push, decryption on pull,
 * moving between groups, password changes, templates, tokens bound to groups, the read cache's
 * isolation between callers, and the group commands. The real server, real bare repositories,
 * the real `cfghub` command and the real git CLI.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  cliOk,
  cliWithInput,
  commitCount,
  git,
  gitdirOf,
  keyDocument,
  pushTo,
  reasonOf,
  serverForFile,
} from '../../support/harness.js';
import { keyPath, read } from '../../support/reads.js';

const LEVELS = 'Environment,Application';
const ANY = '*;*';
const PASSWORD = 'correct-horse-battery';
const OPS_PASSWORD = 'ops-password-42';
const DB_SECRET = 'Pr0d-DB-s3cret-value';
const API_SECRET = 'sk_live_4f9b2c7d1e';
const FILE_SECRET = 'BEGIN PRIVATE KEY 9c1f33aa';

const fixture = serverForFile();
let repoSeq = 0;

/** A new repository with token-free push and pull and a group `secrets` (and `ops`). */
function newRepository(...extra: string[]): string {
  const repo = `acme/sec${++repoSeq}`;
  cliOk(fixture.repos, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull', ...extra);
  return repo;
}

async function createGroup(repo: string, group: string, password: string): Promise<void> {
  const result = await cliWithInput(fixture.repos, `${password}\n`, 'group', 'create', repo, group);
  expect(result.code, result.stderr).toBe(0);
}

async function push(repo: string, data: unknown[], headers: Record<string, string> = {}) {
  return pushTo(
    fixture.server.url,
    `/rest/push/${repo}`,
    { changeComment: 'secrets', enableKeyCreation: true, data },
    headers,
  );
}

async function pushOk(repo: string, data: unknown[], headers: Record<string, string> = {}): Promise<string> {
  const answer = await push(repo, data, headers);
  expect(answer.status, `push refused: ${reasonOf(answer)}`).toBe(200);
  return answer.etag!;
}

const auth = (groups: Record<string, string>) => ({ 'Security-Profile-Auth': JSON.stringify(groups) });

const pull = (repo: string, headers: Record<string, string> = {}, context = 'Prod;web') =>
  read(fixture.server.url, `/rest/pull/${repo}`, { Context: context, ...headers });

/** Every object of a fresh clone, and the whole patch history, as text. */
function everythingInAClone(repo: string): string {
  const clone = join(fixture.repos, `clone-${repoSeq}-${Math.random().toString(36).slice(2)}`);
  execFileSync('git', ['clone', '--quiet', '--mirror', gitdirOf(fixture.repos, repo), clone]);
  const objects = execFileSync('git', ['--git-dir', clone, 'cat-file', '--batch-all-objects', '--batch'], {
    maxBuffer: 64 << 20,
  }).toString('latin1');
  const log = execFileSync('git', ['--git-dir', clone, 'log', '-p', '--all'], { maxBuffer: 64 << 20 }).toString('utf8');
  expect(objects.length).toBeGreaterThan(0);
  expect(log).toContain('securityGroup: secrets');
  return `${objects}\n${log}`;
}

describe('a new user: create a group, push a database password into it, clone, pull', () => {
  let repo: string;

  beforeAll(async () => {
    repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      {
        key: 'db.password',
        securityGroup: 'secrets',
        password: PASSWORD,
        values: [
          { context: ANY, value: DB_SECRET },
          { context: 'Prod;*', value: `${DB_SECRET}-prod` },
        ],
      },
      { key: 'api.key', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: API_SECRET }] },
      { key: 'db.host', values: [{ context: ANY, value: 'db.example.com' }] },
      {
        file: 'conf/key.pem',
        context: ANY,
        securityGroup: 'secrets',
        password: PASSWORD,
        content: `${FILE_SECRET}\nhost=\${ db.host }\n`,
      },
    ]);
    // A second push changes a secret, so the history holds two versions of it.
    await pushOk(repo, [
      { key: 'db.password', password: PASSWORD, values: [{ context: 'Dev;*', value: `${DB_SECRET}-dev` }] },
    ]);
    await fixture.server.settle(repo);
  });

  it('leaves no plaintext in any object of a clone, nor in git log -p', () => {
    const everything = everythingInAClone(repo);
    for (const secret of [DB_SECRET, API_SECRET, FILE_SECRET, PASSWORD, 'BEGIN PRIVATE KEY'])
      expect(everything).not.toContain(secret);
    // The unsecured key is there in the clear: the search does look at the data.
    expect(everything).toContain('db.example.com');
  });

  it('stores the values sealed beside the group name, and git fsck is clean', () => {
    const doc = keyDocument(fixture.repos, repo, keyPath('db.password'))!;
    expect(doc).toMatch(/^securityGroup: secrets$/m);
    expect(doc.match(/value: "enc:v1:[0-9a-f]{16}:[\w-]{16}:[\w-]+"/g)).toHaveLength(3);
    const file = git(gitdirOf(fixture.repos, repo), 'show', 'refs/heads/main:files/_;_/conf/key.pem');
    expect(file).toMatch(
      /^cfghub-encrypted-file: v1\nsecurityGroup: secrets\nreferences: \[db.host\]\ncontent: "enc:v1:/,
    );
    git(gitdirOf(fixture.repos, repo), 'fsck', '--strict', '--no-progress');
  });

  it('pulls the ciphertext marked with the group name (encryption) and cipher without the password, and the plain value with it', async () => {
    const locked = await pull(repo);
    expect(locked.status).toBe(200);
    expect(locked.json.properties['db.password']).toEqual({
      encryption: 'secrets',
      cipher: 'AES-256-GCM',
      val: expect.stringMatching(/^enc:v1:/),
    });
    expect(locked.json.properties['db.host']).toEqual({ val: 'db.example.com' });
    expect(locked.json.files['conf/key.pem']).toMatchObject({
      encryption: 'secrets',
      cipher: 'AES-256-GCM',
      content: expect.stringMatching(/^enc:v1:/),
    });
    expect(locked.text).not.toContain(DB_SECRET);
    expect(locked.text).not.toContain(FILE_SECRET);

    const opened = await pull(repo, auth({ secrets: PASSWORD }));
    expect(opened.json.properties['db.password']).toEqual({ val: `${DB_SECRET}-prod` });
    expect(opened.json.properties['api.key']).toEqual({ val: API_SECRET });
    expect(opened.json.files['conf/key.pem'].content).toBe(`${FILE_SECRET}\nhost=db.example.com\n`);
    expect((await pull(repo, auth({ secrets: PASSWORD }), 'Dev;web')).json.properties['db.password'].val).toBe(
      `${DB_SECRET}-dev`,
    );
  });

  it('ignores a wrong password or an unknown group on pull, and refuses a malformed header', async () => {
    for (const groups of [{ secrets: 'wrong-password' }, { other: PASSWORD }, {}] as Record<string, string>[]) {
      const answer = await pull(repo, auth(groups));
      expect(answer.json.properties['db.password'].encryption).toBe('secrets');
      expect(answer.text).not.toContain(DB_SECRET);
    }
    const malformed = await pull(repo, { 'Security-Profile-Auth': 'not json' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.message).toMatch(/Security-Profile-Auth/);
  });

  it('serves rawFile, keyData, info and export by the same rules', async () => {
    const raw = (headers: Record<string, string>) =>
      read(fixture.server.url, `/rest/rawFile/${repo}`, { Context: 'Prod;web', File: 'conf/key.pem', ...headers });
    const refused = await raw({});
    expect(refused.status).toBe(403);
    expect(refused.json.message).toMatch(/security group secrets/);
    expect((await raw(auth({ secrets: PASSWORD }))).text).toBe(`${FILE_SECRET}\nhost=db.example.com\n`);

    const keyData = await read(fixture.server.url, `/rest/keyData/${repo}`, { KeyName: 'db.password' });
    expect(keyData.json).toMatchObject({ key: 'db.password', securityGroup: 'secrets' });
    const info = await read(fixture.server.url, `/rest/info/${repo}`, { Files: 'true' });
    expect(info.json.files).toEqual([expect.objectContaining({ path: 'conf/key.pem', secureGroup: 'secrets' })]);

    const sealedExport = await read(fixture.server.url, `/rest/export/${repo}`);
    expect(sealedExport.text).not.toContain(DB_SECRET);
    const plainExport = await read(fixture.server.url, `/rest/export/${repo}`, auth({ secrets: PASSWORD }));
    expect(plainExport.json.data).toContainEqual(
      expect.objectContaining({
        key: 'db.password',
        securityGroup: 'secrets',
        values: expect.arrayContaining([{ context: 'Prod;*', value: `${DB_SECRET}-prod`, active: true }]),
      }),
    );
  });
});

describe('passwords on push', () => {
  let repo: string;

  beforeAll(async () => {
    repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      {
        key: 'db.password',
        securityGroup: 'secrets',
        password: PASSWORD,
        values: [{ context: ANY, value: DB_SECRET }],
      },
    ]);
  });

  it('refuses a wrong or missing password with a 304 naming the key and the group, never the password', async () => {
    const before = commitCount(fixture.repos, repo);
    const cases = [
      [{ key: 'db.password', password: 'wrong-password-1', values: [{ context: ANY, value: 'new-secret-1' }] }],
      [{ key: 'db.password', values: [{ context: ANY, value: 'new-secret-1' }] }],
      [{ key: 'db.password', opp: 'delete', password: 'wrong-password-1' }],
      [
        {
          key: 'new.secret',
          securityGroup: 'secrets',
          password: 'wrong-password-1',
          values: [{ context: ANY, value: 'new-secret-1' }],
        },
      ],
      [{ key: 'db.password', securityGroup: '', values: [{ context: ANY, value: 'new-secret-1' }] }],
      [{ file: 'secret.txt', context: ANY, securityGroup: 'secrets', content: 'new-secret-1' }],
    ];
    for (const data of cases) {
      const answer = await push(repo, data);
      expect(answer.status, JSON.stringify(data)).toBe(304);
      const reason = reasonOf(answer);
      expect(reason).toMatch(
        /^data\[0\] (key db.password|key new.secret|file secret.txt): the password for security group secrets is missing or wrong$/,
      );
      expect(reason).not.toContain('wrong-password-1');
      expect(reason).not.toContain('new-secret-1');
    }
    expect(commitCount(fixture.repos, repo)).toBe(before);
    expect(fixture.server.logText()).not.toContain('wrong-password-1');
    expect(fixture.server.logText()).not.toContain(PASSWORD);
  });

  it('refuses an unknown group, and re-pushing an unchanged secret makes no commit', async () => {
    const unknown = await push(repo, [
      { key: 'x', securityGroup: 'nope', password: PASSWORD, values: [{ context: ANY, value: 'v' }] },
    ]);
    expect(reasonOf(unknown)).toBe('data[0] key x: security group nope does not exist');
    const before = commitCount(fixture.repos, repo);
    await pushOk(repo, [{ key: 'db.password', password: PASSWORD, values: [{ context: ANY, value: DB_SECRET }] }]);
    expect(commitCount(fixture.repos, repo)).toBe(before);
  });

  it('refuses a sealed ciphertext pushed as a value (an export made without the password)', async () => {
    const sealedExport = await read(fixture.server.url, `/rest/export/${repo}`);
    const answer = await push(
      repo,
      sealedExport.json.data.map((element: object) => ({ ...element, password: PASSWORD })),
    );
    expect(answer.status).toBe(304);
    expect(reasonOf(answer)).toMatch(/sealed ciphertext/);
  });

  it('refuses groups in a repository with security off, on push and in the CLI', async () => {
    const off = newRepository('--no-security');
    const created = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', off, 'secrets');
    expect(created.code).toBe(1);
    expect(created.stderr).toMatch(/security groups off/);
    const answer = await push(off, [
      { key: 'k', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: 'v' }] },
    ]);
    expect(reasonOf(answer)).toBe('data[0] key k: security groups are off in this repository');
  });
});

describe('moving between groups and changing a password', () => {
  it('re-encrypts a key moved into, between and out of groups, in the same commit', async () => {
    const repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await createGroup(repo, 'ops', OPS_PASSWORD);
    await pushOk(repo, [{ key: 'moving', values: [{ context: ANY, value: DB_SECRET }] }]);
    expect(keyDocument(fixture.repos, repo, keyPath('moving'))).toContain(DB_SECRET);

    await pushOk(repo, [{ key: 'moving', securityGroup: 'secrets', password: PASSWORD }]);
    const inSecrets = keyDocument(fixture.repos, repo, keyPath('moving'))!;
    expect(inSecrets).toMatch(/securityGroup: secrets/);
    expect(inSecrets).not.toContain(DB_SECRET);

    // Between groups: the key of both is needed; here the password opens one and a token the other.
    const denied = await push(repo, [{ key: 'moving', securityGroup: 'ops', password: PASSWORD }]);
    expect(reasonOf(denied)).toBe('data[0] key moving: the password for security group ops is missing or wrong');
    const opsToken = await cliWithInput(
      fixture.repos,
      `${OPS_PASSWORD}\n`,
      'token',
      'create',
      repo,
      '--name',
      'ops',
      '--security-group',
      'ops',
    );
    expect(opsToken.code, opsToken.stderr).toBe(0);
    const before = commitCount(fixture.repos, repo);
    await pushOk(repo, [{ key: 'moving', securityGroup: 'ops', password: PASSWORD }], {
      'Client-Token': opsToken.stdout.trim(),
    });
    expect(commitCount(fixture.repos, repo)).toBe(before + 1);
    const inOps = keyDocument(fixture.repos, repo, keyPath('moving'))!;
    expect(inOps).toMatch(/securityGroup: ops/);
    expect(inOps.match(/enc:v1:([0-9a-f]{16})/)![1]).not.toBe(inSecrets.match(/enc:v1:([0-9a-f]{16})/)![1]);
    expect((await pull(repo, auth({ ops: OPS_PASSWORD }))).json.properties.moving).toEqual({ val: DB_SECRET });
    expect((await pull(repo, auth({ secrets: PASSWORD }))).json.properties.moving.encryption).toBe('ops');

    await pushOk(repo, [{ key: 'moving', securityGroup: '', password: OPS_PASSWORD }]);
    const out = keyDocument(fixture.repos, repo, keyPath('moving'))!;
    expect(out).not.toMatch(/securityGroup/);
    expect(out).toContain(DB_SECRET);
  });

  it('group passwd seals every value and file of the group again under a new key, in one commit', async () => {
    const repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      { key: 'a', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: 'secret-a' }] },
      {
        key: 'b',
        securityGroup: 'secrets',
        password: PASSWORD,
        values: [
          { context: ANY, value: 'secret-b' },
          { context: 'Prod;*', value: 'secret-b2' },
        ],
      },
      { file: 'f.txt', context: ANY, securityGroup: 'secrets', password: PASSWORD, content: 'secret-file' },
    ]);
    const keyIdsBefore = new Set(
      git(gitdirOf(fixture.repos, repo), 'grep', '-h', '-o', '-E', 'enc:v1:[0-9a-f]{16}:', 'refs/heads/main')
        .split('\n')
        .filter(Boolean),
    );
    expect(keyIdsBefore.size).toBe(1);
    const before = commitCount(fixture.repos, repo);

    const wrong = await cliWithInput(
      fixture.repos,
      `not-the-password\nnew-password-123\n`,
      'group',
      'passwd',
      repo,
      'secrets',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password of security group secrets is wrong/);
    expect(wrong.stderr).not.toContain('not-the-password');
    const changed = await cliWithInput(
      fixture.repos,
      `${PASSWORD}\nnew-password-123\n`,
      'group',
      'passwd',
      repo,
      'secrets',
    );
    expect(changed.code, changed.stderr).toBe(0);
    expect(commitCount(fixture.repos, repo)).toBe(before + 1);

    const keyIdsAfter = new Set(
      git(gitdirOf(fixture.repos, repo), 'grep', '-h', '-o', '-E', 'enc:v1:[0-9a-f]{16}:', 'refs/heads/main')
        .split('\n')
        .filter(Boolean),
    );
    expect(keyIdsAfter.size).toBe(1);
    expect([...keyIdsAfter][0]).not.toBe([...keyIdsBefore][0]);

    expect((await pull(repo, auth({ secrets: PASSWORD }))).json.properties.b.encryption).toBe('secrets');
    const opened = await pull(repo, auth({ secrets: 'new-password-123' }));
    expect(opened.json.properties).toEqual({ a: { val: 'secret-a' }, b: { val: 'secret-b2' } });
    expect(opened.json.files['f.txt'].content).toBe('secret-file');
    // The past is read with the password of its time.
    const past = await read(fixture.server.url, `/rest/pull/${repo}`, {
      Context: 'Prod;web',
      'Repository-Date': new Date(Date.now() + 60_000).toISOString().slice(0, 19) + 'Z',
      ...auth({ secrets: 'new-password-123' }),
    });
    expect(past.json.properties.a).toEqual({ val: 'secret-a' });
  });
});

describe('templates, the read cache and tokens', () => {
  let repo: string;
  let token: string;

  beforeAll(async () => {
    repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      {
        key: 'db.password',
        securityGroup: 'secrets',
        password: PASSWORD,
        values: [{ context: ANY, value: DB_SECRET }],
      },
      { key: 'db.user', values: [{ context: ANY, value: 'app' }] },
      { file: 'conf/db.properties', context: ANY, content: 'user=${ db.user }\npassword=${ db.password }\n' },
    ]);
    const created = await cliWithInput(
      fixture.repos,
      `${PASSWORD}\n`,
      'token',
      'create',
      repo,
      '--name',
      'deployer',
      '--security-group',
      'secrets',
    );
    expect(created.code, created.stderr).toBe(0);
    token = created.stdout.trim();
  });

  it('renders a secured key in a file only for a caller who may read it', async () => {
    const locked = await pull(repo);
    expect(locked.json.files['conf/db.properties']).toMatchObject({
      content: 'user=app\npassword=[ ERROR: Encrypted value, security group password required ]\n',
      encrypted: ['db.password'],
    });
    const opened = await pull(repo, auth({ secrets: PASSWORD }));
    expect(opened.json.files['conf/db.properties'].content).toBe(`user=app\npassword=${DB_SECRET}\n`);
    const raw = await read(fixture.server.url, `/rest/rawFile/${repo}`, {
      Context: 'Prod;web',
      File: 'conf/db.properties',
    });
    expect(raw.text).not.toContain(DB_SECRET);
  });

  it('never hands a cached decrypted answer to a caller without the password', async () => {
    const withPassword = auth({ secrets: PASSWORD });
    for (let round = 0; round < 2; round++) {
      const a = await pull(repo, withPassword);
      expect(a.json.properties['db.password']).toEqual({ val: DB_SECRET });
      const b = await pull(repo);
      expect(b.text).not.toContain(DB_SECRET);
      const c = await pull(repo, auth({ secrets: 'wrong-password' }));
      expect(c.text).not.toContain(DB_SECRET);
      // The decrypted answer's ETag does not make a 304 for a caller without the password.
      const d = await pull(repo, { 'If-None-Match': a.headers.get('etag')! });
      expect(d.status).toBe(200);
      expect(d.text).not.toContain(DB_SECRET);
      const rawA = await read(fixture.server.url, `/rest/rawFile/${repo}`, {
        Context: 'Prod;web',
        File: 'conf/db.properties',
        ...withPassword,
      });
      expect(rawA.text).toContain(DB_SECRET);
      const rawB = await read(fixture.server.url, `/rest/rawFile/${repo}`, {
        Context: 'Prod;web',
        File: 'conf/db.properties',
      });
      expect(rawB.text).not.toContain(DB_SECRET);
    }
  });

  it('lets a token bound to the group read and write it on its own, and keeps only a wrapped key', async () => {
    const pulled = await read(fixture.server.url, '/rest/pull', { Context: 'Prod;web', 'Client-Token': token });
    expect(pulled.json.properties['db.password']).toEqual({ val: DB_SECRET });
    const pushed = await pushTo(
      fixture.server.url,
      '/rest/push',
      { data: [{ key: 'db.password', values: [{ context: 'Prod;*', value: 'rotated-secret-7' }] }] },
      { 'Client-Token': token },
    );
    expect(pushed.status, reasonOf(pushed)).toBe(200);
    expect((await pull(repo, auth({ secrets: PASSWORD }))).json.properties['db.password']).toEqual({
      val: 'rotated-secret-7',
    });

    const tokens = readFileSync(join(fixture.repos, '.cfghub', 'tokens.json'), 'utf8');
    expect(tokens).not.toContain(PASSWORD);
    expect(tokens).toMatch(/"group": "secrets"/);
    expect(JSON.parse(cliOk(fixture.repos, 'token', 'list', repo))).toEqual([
      expect.objectContaining({ label: 'deployer', securityGroups: ['secrets'] }),
    ]);

    // A token of the same repository without the group reads the ciphertext.
    const plain = cliOk(fixture.repos, 'token', 'create', repo, '--name', 'plain').trim();
    const other = await read(fixture.server.url, '/rest/pull', { Context: 'Prod;web', 'Client-Token': plain });
    expect(other.json.properties['db.password'].encryption).toBe('secrets');
  });

  it('refuses a token for a group with a wrong password', async () => {
    const wrong = await cliWithInput(
      fixture.repos,
      'wrong-password\n',
      'token',
      'create',
      repo,
      '--name',
      'x',
      '--security-group',
      'secrets',
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password of security group secrets is wrong/);
  });
});

describe('history: revert and restore', () => {
  it('refuses to revert a commit that changed a secured key, and never restores an old password', async () => {
    const repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      { key: 'k', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: 'first-secret' }] },
    ]);
    const first = git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
    const second = await pushOk(repo, [
      { key: 'k', password: PASSWORD, values: [{ context: ANY, value: 'second-secret' }] },
    ]);

    const reverted = cli(fixture.repos, 'revert', repo, second.replace(/"/g, ''));
    expect(reverted.code).toBe(1);
    expect(reverted.stderr).toMatch(/key k is in security group secrets; revert does not change secured keys/);

    expect(
      (await cliWithInput(fixture.repos, `${PASSWORD}\nnew-password-123\n`, 'group', 'passwd', repo, 'secrets')).code,
    ).toBe(0);
    // The first commit's ciphertexts open only with the group's key of that time: the restore is refused, nothing changes.
    const head = git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
    const restored = cli(fixture.repos, 'restore', repo, first);
    expect(restored.code).toBe(1);
    expect(restored.stderr).toMatch(/key k of security group secrets/);
    expect(git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim()).toBe(head);
    expect((await pull(repo, auth({ secrets: PASSWORD }))).json.properties.k.encryption).toBe('secrets');
    expect((await pull(repo, auth({ secrets: 'new-password-123' }))).json.properties.k).toEqual({
      val: 'second-secret',
    });
  });
});

describe('group commands', () => {
  it('reads the password from standard input only, 8 to 64 characters', async () => {
    const repo = newRepository();
    expect(cli(fixture.repos, 'group', 'create', repo, 'secrets').code).toBe(2);
    expect(cli(fixture.repos, 'group', 'create', repo, 'secrets', PASSWORD).code).toBe(2);
    for (const password of ['seven77', 'x'.repeat(65)]) {
      const result = await cliWithInput(fixture.repos, `${password}\n`, 'group', 'create', repo, 'secrets');
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/8 to 64 characters/);
      expect(result.stderr).not.toContain(password);
    }
    for (const password of ['eight888', 'y'.repeat(64)])
      expect(
        (await cliWithInput(fixture.repos, `${password}\n`, 'group', 'create', repo, `g${password.length}`)).code,
      ).toBe(0);
    expect((await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', repo, 'G8')).code).toBe(1);
    expect(JSON.parse(cliOk(fixture.repos, 'group', 'list', repo))).toEqual([
      { name: 'g64', keys: 0, files: 0 },
      { name: 'g8', keys: 0, files: 0 },
    ]);
    const groupsFile = git(gitdirOf(fixture.repos, repo), 'show', 'refs/heads/main:security-groups.yaml');
    expect(groupsFile).not.toContain('eight888');
  });

  it('refuses to delete a group while a key or file uses it', async () => {
    const repo = newRepository();
    await createGroup(repo, 'secrets', PASSWORD);
    await pushOk(repo, [
      { key: 'k', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: 'v' }] },
    ]);
    const refused = cli(fixture.repos, 'group', 'delete', repo, 'secrets');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/security group secrets is used by key k/);
    await pushOk(repo, [{ key: 'k', securityGroup: '', password: PASSWORD }]);
    expect(cli(fixture.repos, 'group', 'delete', repo, 'secrets').code).toBe(0);
    expect(JSON.parse(cliOk(fixture.repos, 'group', 'list', repo))).toEqual([]);
    expect(keyDocument(fixture.repos, repo, 'security-groups.yaml')).toBeNull();
  });

  it('round-trips an export made with the password into a new repository with the same group', async () => {
    const source = newRepository();
    await createGroup(source, 'secrets', PASSWORD);
    await pushOk(source, [
      { key: 'k', securityGroup: 'secrets', password: PASSWORD, values: [{ context: ANY, value: DB_SECRET }] },
      { file: 'f.txt', context: ANY, securityGroup: 'secrets', password: PASSWORD, content: FILE_SECRET },
    ]);
    const exported = await read(fixture.server.url, `/rest/export/${source}`, auth({ secrets: PASSWORD }));
    const target = newRepository();
    await createGroup(target, 'secrets', OPS_PASSWORD);
    const token = (
      await cliWithInput(fixture.repos, `${OPS_PASSWORD}\n`, 'token', 'create', target, '--security-group', 'secrets')
    ).stdout.trim();
    const answer = await pushTo(
      fixture.server.url,
      '/rest/push',
      { enableKeyCreation: true, data: exported.json.data },
      { 'Client-Token': token },
    );
    expect(answer.status, reasonOf(answer)).toBe(200);
    const again = await read(fixture.server.url, `/rest/export/${target}`, auth({ secrets: OPS_PASSWORD }));
    expect(again.json).toEqual(exported.json);
  });
});
