/**
 * Context groups end to end: groups made with `cfghub context-group`, used by pushes,
 * pull, rawFile, templates, diff's resolved view and /rest/info; conflicts and deletion refused;
 * every change a commit that revert undoes; explain; the export round trip; repo set and delete.
 * The real server, real bare repositories, the real `cfghub` command and the real git CLI.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const LEVELS = 'Environment,Datacenter';
const fixture = serverForFile();
let seq = 0;

async function run(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  if (result.code !== 0) throw new Error(`cfghub ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function newRepository(...extra: string[]): Promise<string> {
  const repo = `acme/groups${++seq}`;
  await run(
    'repo',
    'create',
    repo,
    '--context',
    LEVELS,
    '--token-free-push',
    '--token-free-pull',
    '--context-groups',
    ...extra,
  );
  return repo;
}

const value = (key: string, context: string, val: string) => ({ key, values: [{ context, value: val }] });

async function push(repo: string, data: unknown[]) {
  return pushTo(fixture.server.url, `/rest/push/${repo}`, { enableKeyCreation: true, data });
}

async function pushOk(repo: string, data: unknown[]): Promise<string> {
  const answer = await push(repo, data);
  expect(answer.status, reasonOf(answer)).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

async function pull(repo: string, context: string) {
  const answer = await read(fixture.server.url, `/rest/pull/${repo}`, { Context: context });
  expect(answer.status, answer.text).toBe(200);
  return answer.json;
}

const head = (repo: string) => git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();

describe('resolution with groups', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt', 'Dublin');
    await pushOk(repo, [
      value('db.host', '*;*', 'global'),
      value('db.host', 'Production;EU', 'eu-host'),
      value('db.host', 'Production;Dublin', 'dublin-host'),
      value('db.host', 'Production;*', 'prod-host'),
    ]);
  });

  it("reaches every member's pull, and yields to a member's own value", async () => {
    expect((await pull(repo, 'Production;Frankfurt')).properties['db.host'].val).toBe('eu-host');
    expect((await pull(repo, 'Production;dublin')).properties['db.host'].val).toBe('dublin-host');
    expect((await pull(repo, 'Production;Oregon')).properties['db.host'].val).toBe('prod-host');
    expect((await pull(repo, 'Development;Frankfurt')).properties['db.host'].val).toBe('global');
  });

  it('renders templates and rawFile with the group value', async () => {
    await pushOk(repo, [{ file: 'app.conf', context: '*;*', content: 'host=${ db.host }' }]);
    const raw = await read(fixture.server.url, `/rest/rawFile/${repo}`, {
      Context: 'Production;Frankfurt',
      File: 'app.conf',
    });
    expect(raw.text).toBe('host=eu-host');
    expect((await pull(repo, 'Production;Frankfurt')).files['app.conf'].content).toBe('host=eu-host');
  });

  it('explains which value won, with weights and the group expanded', async () => {
    const answer = await read(fixture.server.url, `/rest/explain/${repo}`, {
      Context: 'Production;Frankfurt',
      KeyName: 'db.host',
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.resolved.context).toBe('Production;EU');
    const byContext = Object.fromEntries(answer.json.values.map((v: { context: string }) => [v.context, v]));
    // Two levels: Environment 2560, Datacenter 5120; a group of the Datacenter level 5119.
    expect(byContext['Production;EU'].weight).toBe(2560 + 5119);
    expect(byContext['Production;*'].weight).toBe(2560);
    expect(byContext['*;*'].weight).toBe(0);
    expect(byContext['Production;Dublin'].qualifies).toBe(false);
    expect(byContext['Production;EU'].levels[1]).toMatchObject({
      item: 'EU',
      matches: 'group',
      group: { members: ['Dublin', 'Frankfurt'] },
    });
  });

  it('shows groups and members in /rest/info with Context-Elements', async () => {
    const info = await read(fixture.server.url, `/rest/info/${repo}`, { 'Context-Elements': 'true' });
    expect(info.json.contextElements.Datacenter).toEqual(expect.arrayContaining(['EU', 'Frankfurt', 'Dublin']));
    expect(info.json.contextGroups).toEqual({ Datacenter: { EU: ['Dublin', 'Frankfurt'] } });
  });

  it("shows the group's effect in diff's resolved view when a member joins", async () => {
    const before = head(repo);
    await run('context-group', 'add', repo, 'Datacenter', 'EU', 'Paris');
    const diff = await read(fixture.server.url, `/rest/diff/${repo}`, { From: before, Context: 'Production;Paris' });
    expect(diff.status, diff.text).toBe(200);
    expect(JSON.stringify(diff.json.resolved.properties)).toContain('eu-host');
    expect((await pull(repo, 'Production;Paris')).properties['db.host'].val).toBe('eu-host');
  });
});

describe('conflicts and group rules', () => {
  it('refuses two values whose groups share a member with equal weight, naming both values', async () => {
    const repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt', 'Dublin');
    await run('context-group', 'create', repo, 'Datacenter', 'Cloud', 'Frankfurt', 'Oregon');
    await pushOk(repo, [value('k', 'Production;EU', 'eu')]);
    const answer = await push(repo, [value('k', 'Production;Cloud', 'cloud')]);
    expect(answer.status).toBe(304);
    expect(reasonOf(answer)).toContain('Production;Cloud');
    expect(reasonOf(answer)).toContain('Production;EU');
    // Different weights are no conflict: a wildcard environment weighs less.
    await pushOk(repo, [value('k', '*;Cloud', 'cloud')]);
    expect((await pull(repo, 'Production;Frankfurt')).properties.k.val).toBe('eu');
  });

  it('refuses a member joining a group when that makes values conflict', async () => {
    const repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt');
    await run('context-group', 'create', repo, 'Datacenter', 'Cloud', 'Oregon');
    await pushOk(repo, [value('k', 'Production;EU', 'eu'), value('k', 'Production;Cloud', 'cloud')]);
    const refused = await cliWithInput(
      fixture.repos,
      '',
      'context-group',
      'add',
      repo,
      'Datacenter',
      'Cloud',
      'Frankfurt',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Production;EU');
  });

  it('refuses a group of groups, and deleting a group in use, naming a user', async () => {
    const repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt');
    await run('context-group', 'create', repo, 'Datacenter', 'World');
    expect(
      (await cliWithInput(fixture.repos, '', 'context-group', 'add', repo, 'Datacenter', 'World', 'EU')).stderr,
    ).toContain('a group cannot hold a group');
    await pushOk(repo, [value('k', 'Production;EU', 'eu')]);
    const refused = await cliWithInput(fixture.repos, '', 'context-group', 'delete', repo, 'Datacenter', 'EU');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('used by key k at Production;EU');
    await run('context-group', 'delete', repo, 'Datacenter', 'World');
    expect(JSON.parse(await run('context-group', 'list', repo)).map((g: { name: string }) => g.name)).toEqual(['EU']);
  });

  it('is refused while context groups are off, and a group means nothing then', async () => {
    const repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt');
    await pushOk(repo, [value('k', 'Production;EU', 'eu')]);
    await run('repo', 'set', repo, '--context-groups', 'false');
    expect((await pull(repo, 'Production;Frankfurt')).properties.k).toBeUndefined();
    expect(
      (await cliWithInput(fixture.repos, '', 'context-group', 'create', repo, 'Datacenter', 'US', 'Oregon')).stderr,
    ).toContain('context groups off');
    await run('repo', 'set', repo, '--context-groups', 'true');
    expect((await pull(repo, 'Production;Frankfurt')).properties.k.val).toBe('eu');
  });
});

describe('history, revert and export', () => {
  it('makes each group change a commit of context-groups.yaml, undone by revert', async () => {
    const repo = await newRepository();
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt');
    await pushOk(repo, [value('k', 'Production;EU', 'eu')]);
    await run('context-group', 'add', repo, 'Datacenter', 'EU', 'Dublin');
    const added = head(repo);
    expect(git(gitdirOf(fixture.repos, repo), 'log', '-1', '--format=%s').trim()).toBe(
      'Add Dublin to context group EU',
    );
    expect(git(gitdirOf(fixture.repos, repo), 'show', 'refs/heads/main:context-groups.yaml')).toContain('Dublin');
    const history = await read(fixture.server.url, `/rest/history/${repo}`, {});
    expect(history.json.commits[0]).toMatchObject({ id: added });
    expect((await pull(repo, 'Production;Dublin')).properties.k.val).toBe('eu');
    const reverted = await fetch(`${fixture.server.url}/rest/revert/${repo}`, {
      method: 'POST',
      headers: { Commit: added },
    });
    expect(reverted.status, await reverted.text()).toBe(200);
    expect((await pull(repo, 'Production;Dublin')).properties.k).toBeUndefined();
    expect((await pull(repo, 'Production;Frankfurt')).properties.k.val).toBe('eu');
  });

  it('round-trips an export into a repository with the same groups', async () => {
    const from = await newRepository();
    await run('context-group', 'create', from, 'Datacenter', 'EU', 'Frankfurt', 'Dublin');
    await pushOk(from, [
      value('k', 'Production;EU', 'eu'),
      value('k', 'Production;Dublin', 'dublin'),
      value('k', '*;*', 'any'),
    ]);
    const exported = await read(fixture.server.url, `/rest/export/${from}`, {});
    expect(exported.status).toBe(200);
    const to = await newRepository();
    await run('context-group', 'create', to, 'Datacenter', 'EU', 'Frankfurt', 'Dublin');
    await pushOk(to, exported.json.data);
    for (const context of ['Production;Frankfurt', 'Production;Dublin', 'Development;Frankfurt']) {
      expect((await pull(to, context)).properties).toEqual((await pull(from, context)).properties);
    }
    expect(JSON.parse(await run('context-group', 'list', to))).toEqual(
      JSON.parse(await run('context-group', 'list', from)),
    );
  });
});

describe('repo set and repo delete', () => {
  it('changes settings in one commit that the listing and access show', async () => {
    const repo = await newRepository();
    const before = head(repo);
    // `repo set` is `repo settings` with switches that take true|false; it prints the record.
    const out = JSON.parse(
      await run(
        'repo',
        'set',
        repo,
        '--description',
        'Payments config',
        '--private',
        'true',
        '--token-free-pull',
        'false',
        '--vdt',
        'false',
      ),
    );
    expect(out).toMatchObject({ description: 'Payments config', isPrivate: true, vdtEnabled: false });
    expect(git(gitdirOf(fixture.repos, repo), 'rev-list', '--count', `${before}..refs/heads/main`).trim()).toBe('1');
    const message = git(gitdirOf(fixture.repos, repo), 'log', '-1', '--format=%B', 'refs/heads/main');
    expect(message).toContain('isPrivate: false -> true');
    expect(message).toContain('vdtEnabled: true -> false');
    expect(message).toContain('tokenFreePull: true -> false');
    expect(git(gitdirOf(fixture.repos, repo), 'show', 'refs/heads/main:repository.yaml')).toContain(
      'description: Payments config',
    );
    const listing = JSON.parse(await run('repo', 'list')).find((r: { name: string }) => `acme/${r.name}` === repo);
    expect(listing).toMatchObject({
      description: 'Payments config',
      isPrivate: true,
      vdtEnabled: false,
      contextGroupsEnabled: true,
    });
    expectJsonError(await read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'a;b' }), 401);
    const bad = await cliWithInput(fixture.repos, '', 'repo', 'set', repo, '--private', 'maybe');
    expect(bad.code).toBe(2);
  });

  it('refuses delete without --yes, then moves the folder aside and names it', async () => {
    const repo = await newRepository();
    await pushOk(repo, [value('k', '*;*', 'v')]);
    const gitdir = gitdirOf(fixture.repos, repo);
    const refused = cli(fixture.repos, 'repo', 'delete', repo);
    expect(refused.code).toBe(2);
    expect(existsSync(gitdir)).toBe(true);
    const deleted = await cliWithInput(fixture.repos, '', 'repo', 'delete', repo, '--yes');
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain(`repository ${repo} deleted (moved aside)`);
    expect(existsSync(gitdir)).toBe(false);
    // Moved, by one rename, to <repos>/.cfghub/deleted/ACCOUNT/NAME.git.<time> .
    const name = repo.split('/')[1];
    const moved = readdirSync(join(fixture.repos, '.cfghub', 'deleted', 'acme')).filter((entry) =>
      entry.startsWith(`${name}.git.`),
    );
    expect(moved).toHaveLength(1);
    expect(moved[0]).toMatch(/^groups\d+\.git\.\d{8}T\d{6}Z$/);
    expect(
      git(join(fixture.repos, '.cfghub', 'deleted', 'acme', moved[0]), 'show', 'refs/heads/main:repository.yaml'),
    ).toContain('context:');
    expectJsonError(await read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'a;b' }), 404);
  });
});
