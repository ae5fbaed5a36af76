/**
 * Commits made outside the service (deliverable 5): plain git pushed into the bare
 * repository is served at once, without a restart; content that breaks the layout is reported by
 * reads with the file and the commit (and left out of the listing, logged, named by `repo list`), without hiding other repositories or
 * stopping the server, and a plain-git fix is served at once too.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitEnv } from '../../support/gitCli.js';
import { cli, cliOk, cliWithInput, getJson, gitdirOf, headOf, pushTo, serverForFile } from '../../support/harness.js';
import { until } from '../../support/poll.js';

const GOOD = 'acme/good';
const OTHER = 'acme/other';

const fixture = serverForFile();

/** Runs plain git in a working folder, as a person editing the repository would. */
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', ...args], {
    cwd,
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A working clone of a repository, straight from its folder on disk. */
function workingClone(fullName: string): string {
  const folder = join(fixture.repos, 'work', fullName.replace('/', '-'));
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(dirname(folder), { recursive: true });
  git(fixture.repos, 'clone', '--quiet', gitdirOf(fixture.repos, fullName), folder);
  return folder;
}

/** Writes files in a working clone, commits them and pushes to the bare repository; returns the commit. */
function commitOutside(clone: string, files: Record<string, string | null>, message: string): string {
  for (const [path, content] of Object.entries(files)) {
    const full = join(clone, path);
    if (content === null) rmSync(full);
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
  git(clone, 'add', '-A');
  git(clone, 'commit', '--quiet', '-m', message);
  git(clone, 'push', '--quiet', 'origin', 'HEAD:main');
  return git(clone, 'rev-parse', 'HEAD').trim();
}

const pull = (fullName: string) => getJson(fixture.server.url, `/rest/pull/${fullName}`, { Context: 'Prod;web' });
const listing = async () => (await getJson(fixture.server.url, '/rest/info/all')).json as Record<string, any>[];
const recordOf = async (fullName: string) => (await listing()).find((r) => `${r.account}/${r.name}` === fullName);

const keyYaml = (key: string, value: string, context = '*;*') =>
  `key: ${key}\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "${context}"\n    value: ${value}\n    active: true\n`;

beforeAll(async () => {
  for (const name of [GOOD, OTHER])
    cliOk(fixture.repos, 'repo', 'create', name, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  const pushed = await pushTo(fixture.server.url, `/rest/push/${GOOD}`, {
    changeComment: 'first keys',
    enableKeyCreation: true,
    data: [
      { key: 'db.host', values: [{ context: '*;*', value: 'localhost' }] },
      { file: 'conf/app.properties', context: '*;*', content: 'host=${ db.host }\n' },
    ],
  });
  expect(pushed.status).toBe(200);
  await pull(GOOD); // the server has read the repository before the outside commits
});

describe('commits made with plain git', () => {
  it('are served at once by pull and the listing, without a restart', async () => {
    const clone = workingClone(GOOD);
    const keyFile = join(clone, 'keys', '7a', 'db.host.yaml');
    expect(readFileSync(keyFile, 'utf8')).toContain('localhost');
    // sha1("db.port") starts with 63, sha1("db.host") with 7a.
    const commit = commitOutside(
      clone,
      {
        'keys/7a/db.host.yaml': readFileSync(keyFile, 'utf8').replace('localhost', 'db.example.com'),
        'keys/63/db.port.yaml': keyYaml('db.port', '"5432"'),
        'files/_;_/conf/app.properties': 'host=${ db.host }\nport=${ db.port }\n',
      },
      'edited by hand',
    );
    expect(headOf(fixture.repos, GOOD)).toBe(commit);

    const { status, json } = await pull(GOOD);
    expect(status).toBe(200);
    expect(json.properties['db.host'].val).toBe('db.example.com');
    expect(json.properties['db.port'].val).toBe('5432');
    expect(json.files['conf/app.properties'].content).toBe('host=db.example.com\nport=5432\n');
    expect(await recordOf(GOOD)).toMatchObject({ keyCount: 2, valueCount: 2 });

    // And the service's next push builds on the outside commit.
    const pushed = await pushTo(fixture.server.url, `/rest/push/${GOOD}`, {
      changeComment: 'after',
      data: [{ key: 'db.port', values: [{ context: 'Prod;*', value: '6543' }] }],
    });
    expect(pushed.status).toBe(200);
    expect(
      execFileSync('git', ['--git-dir', gitdirOf(fixture.repos, GOOD), 'rev-parse', 'main^'], {
        encoding: 'utf8',
      }).trim(),
    ).toBe(commit);
  });

  const BROKEN: Array<[string, Record<string, string | null>, string, RegExp]> = [
    [
      'bad YAML in a key file',
      { 'keys/7a/db.host.yaml': 'key: db.host\nvalues: [unclosed\n' },
      'keys/7a/db.host.yaml',
      /is not valid YAML/,
    ],
    [
      'an unknown field',
      { 'keys/7a/db.host.yaml': `${keyYaml('db.host', 'x')}owner: me\n` },
      'keys/7a/db.host.yaml',
      /does not match the layout: .*owner/,
    ],
    [
      'a key file in the wrong shard folder',
      { 'keys/7a/db.host.yaml': null, 'keys/aa/db.host.yaml': keyYaml('db.host', 'x') },
      'keys/aa/db.host.yaml',
      /holds key "db.host", whose file is keys\/7a\/db.host.yaml/,
    ],
    [
      'a key file under another name',
      { 'keys/7a/DB.yaml': keyYaml('db.host', 'x'), 'keys/7a/db.host.yaml': null },
      'keys/7a/DB.yaml',
      /whose file is keys\/7a\/db.host.yaml/,
    ],
    ['a file straight under keys/', { 'keys/notes.txt': 'hello' }, 'keys/notes.txt', /is not in a shard folder/],
    ['a folder that is no shard', { 'keys/zz/x.yaml': keyYaml('x', 'y') }, 'keys/zz', /is not a shard folder/],
    [
      'a file outside any context folder',
      { 'files/loose.txt': 'hello' },
      'files/loose.txt',
      /is not inside a context folder/,
    ],
    [
      'a context folder with too few items',
      { 'files/Prod/a.txt': 'hello' },
      'files/Prod/a.txt',
      /does not have 2 items/,
    ],
    [
      'a value with a context of too many items',
      { 'keys/7a/db.host.yaml': keyYaml('db.host', 'x', 'Prod;web;extra') },
      'keys/7a/db.host.yaml',
      /does not have 2 items/,
    ],
    [
      'a broken repository.yaml',
      { 'repository.yaml': 'context: [Env, App]\n' },
      'repository.yaml',
      /does not match the layout/,
    ],
  ];

  let broken = 0;
  it.each(BROKEN)(
    'that break the layout (%s) are reported with the file and the commit, and a fix is served at once',
    async (_, files, file, problem) => {
      const clone = workingClone(GOOD);
      const good = headOf(fixture.repos, GOOD);
      const tag = `before-${++broken}`;
      cliOk(fixture.repos, 'tag', 'create', GOOD, tag);
      const commit = commitOutside(clone, files, 'break it');

      const answer = await pull(GOOD);
      expect(answer.status).toBe(409);
      expect(answer.json).toMatchObject({ error: 'repository_content_invalid', file, commit });
      expect(answer.json.message).toMatch(problem);
      expect(answer.json.message).toContain(file);
      expect(answer.json.message).toContain(commit.slice(0, 12));
      expect(answer.text).not.toContain(fixture.repos);

      // The listing leaves it out (every record keeps the seed's fields) and logs it; `repo list` names it on stderr.
      expect(await recordOf(GOOD)).toBeUndefined();
      expect(
        fixture.server.logs.filter((line) => line.event === 'unreadable-repository' && line.repository === GOOD).length,
      ).toBeGreaterThan(0);
      const listed = cli(fixture.repos, 'repo', 'list');
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout).map((r: { name: string }) => r.name)).toEqual(['other']);
      expect(listed.stderr).toContain(
        `repository acme/good is left out of the list: repository_content_invalid: ${answer.json.message} (file ${file}, commit ${commit})`,
      );
      expect(await recordOf(OTHER)).toMatchObject({ keyCount: 0 });
      expect((await pull(OTHER)).status).toBe(200);

      // A push cannot build on it either, and says why.
      const pushed = await pushTo(fixture.server.url, `/rest/push/${GOOD}`, {
        changeComment: 'x',
        data: [{ key: 'db.host', values: [{ context: '*;*', value: 'y' }] }],
      });
      expect(pushed.status).toBe(409);
      expect(pushed.json).toMatchObject({ error: 'repository_content_invalid', file, commit });
      // What came before stays readable (unless the head's settings, which say who may read, are broken).
      const before = await getJson(fixture.server.url, `/rest/pull/${GOOD}`, { Context: 'Prod;web', Tag: tag });
      expect(before.status).toBe(file === 'repository.yaml' ? 409 : 200);
      if (before.status === 200) expect(before.json.properties['db.host'].val).toBe('db.example.com');

      git(clone, 'revert', '--no-edit', 'HEAD');
      git(clone, 'push', '--quiet', 'origin', 'HEAD:main');
      const fixed = await pull(GOOD);
      expect(fixed.status).toBe(200);
      expect(fixed.json.properties['db.host'].val).toBe('db.example.com');
      expect(git(clone, 'rev-parse', 'HEAD~2').trim()).toBe(good);
      expect(await recordOf(GOOD)).toMatchObject({ keyCount: 2 });
      expect((await getJson(fixture.server.url, '/healthz')).status).toBe(200);
    },
  );

  it('keeps a file at the top of the repository (a README, say) and serves the rest', async () => {
    const clone = workingClone(GOOD);
    commitOutside(clone, { 'README.md': '# Our configuration\n' }, 'a readme');
    expect((await pull(GOOD)).status).toBe(200);
    const pushed = await pushTo(fixture.server.url, `/rest/push/${GOOD}`, {
      changeComment: 'keep it',
      data: [{ key: 'db.host', values: [{ context: '*;*', value: 'z' }] }],
    });
    expect(pushed.status).toBe(200);
    expect(
      execFileSync('git', ['--git-dir', gitdirOf(fixture.repos, GOOD), 'show', 'main:README.md'], { encoding: 'utf8' }),
    ).toBe('# Our configuration\n');
  });
});

describe('commits made with plain git that break the schemas', () => {
  const CHECKED = 'acme/checked';
  const history = async () => (await getJson(fixture.server.url, `/rest/history/${CHECKED}`)).json.commits;
  const readyz = () => getJson(fixture.server.url, '/readyz');
  const brokenGauge = async () => {
    const text = await (await fetch(`${fixture.server.url}/metrics`)).text();
    return Number(/^cfghub_schema_broken_repositories (\d+)$/m.exec(text)?.[1]);
  };
  const warningAbout = (json: { warnings?: string[] }) => json.warnings?.find((w) => w.startsWith(`${CHECKED} `));

  it('are served, flagged in the history, warned of by /readyz (still 200) and counted, until mended', async () => {
    // Made by a child process this test waits for: a synchronous one would hold the server's event loop.
    const made = await cliWithInput(
      fixture.repos,
      '',
      ...['repo', 'create', CHECKED, '--context', 'Env,App', '--token-free-pull', '--token-free-push'],
    );
    expect(made.code, made.stderr).toBe(0);
    const seeded = await pushTo(fixture.server.url, `/rest/push/${CHECKED}`, {
      changeComment: 'host and its schema',
      enableKeyCreation: true,
      schemas: { keys: [{ key: 'db.host', schema: { type: 'string', pattern: '^db' } }] },
      data: [{ key: 'db.host', values: [{ context: '*;*', value: 'db.example.com' }] }],
    });
    expect(seeded.status, seeded.etag ?? '').toBe(200);
    expect(await brokenGauge()).toBe(0);

    const clone = workingClone(CHECKED);
    const commit = commitOutside(clone, { 'keys/7a/db.host.yaml': keyYaml('db.host', 'localhost') }, 'by hand');
    // Served: plain git cannot be refused.
    expect(
      (await getJson(fixture.server.url, `/rest/pull/${CHECKED}`, { Context: 'Prod;web' })).json.properties,
    ).toMatchObject({ 'db.host': { val: 'localhost' } });

    const [flagged, own] = await history();
    expect(flagged.id).toBe(commit);
    expect(flagged.schemaBreaks).toEqual({
      count: 1,
      breaks: ['key db.host at *;* breaks schemas.yaml keys[0] (db.host): (value): must match pattern "^db"'],
    });
    expect(own.schemaBreaks).toBeUndefined();

    await until(async () => warningAbout((await readyz()).json) !== undefined, 'the /readyz warning');
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(warningAbout(ready.json)).toBe(
      `${CHECKED} breaks its schemas since commit ${commit}, made outside cfghub (1 break at its head): key db.host at *;* breaks schemas.yaml keys[0] (db.host): (value): must match pattern "^db"`,
    );
    expect(await brokenGauge()).toBe(1);
    expect(fixture.server.logs.some((line) => line.event === 'schema-broken-outside' && line.commit === commit)).toBe(
      true,
    );

    // Mended by a push: the warning and the gauge go; the history keeps the flag on the commit.
    const mended = await pushTo(fixture.server.url, `/rest/push/${CHECKED}`, {
      changeComment: 'mend',
      data: [{ key: 'db.host', values: [{ context: '*;*', value: 'db.local' }] }],
    });
    expect(mended.status).toBe(200);
    await until(async () => warningAbout((await readyz()).json) === undefined, 'the warning gone');
    expect(await brokenGauge()).toBe(0);
    expect((await history())[1]).toMatchObject({ id: commit, schemaBreaks: { count: 1 } });
  });
});
