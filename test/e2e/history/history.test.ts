/**
 * `GET /rest/history` end to end: commits newest first with their
 * provenance and what each changed, paging with Limit and Before, filters by key and file,
 * commits made with plain git, content that breaks the layout rules, and the access rules of a
 * pull. The real server on loopback, real bare repositories, checked against `git log`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { expectJsonError, ISO_SECONDS, keyPath, plainGitCommit, read } from '../../support/reads.js';

const REPO = 'acme/hist';
const PAGED = 'acme/paged';
const PRIVATE = 'acme/secret';
const BAD = 'acme/bad';

const fixture = serverForFile();
let token: string;
/** Commit ids of REPO's pushes, by name. */
const commits: Record<string, string> = {};

async function pushOk(
  repo: string,
  comment: string,
  data: unknown[],
  headers: Record<string, string> = {},
): Promise<string> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${repo}`,
    { changeComment: comment, enableKeyCreation: true, data },
    headers,
  );
  expect(answer.status, `push refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

const historyOf = (repo: string, headers: Record<string, string> = {}, query = '') =>
  read(fixture.server.url, `/rest/history/${repo}${query}`, headers);

/** `git log --first-parent --format=%H` of a repository, newest first. */
const gitLog = (repo: string) =>
  git(gitdirOf(fixture.repos, repo), 'log', '--first-parent', '--format=%H', 'refs/heads/main').trim().split('\n');

beforeAll(async () => {
  for (const repo of [REPO, PAGED, BAD])
    cliOk(
      fixture.repos,
      'repo',
      'create',
      repo,
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
  cliOk(fixture.repos, 'repo', 'create', PRIVATE, '--context', 'Environment', '--private');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'deployer').trim();

  commits.create = await pushOk(
    REPO,
    'Add the database',
    [
      {
        key: 'db.host',
        readme: 'Database host',
        values: [
          { context: '*;*', value: 'localhost' },
          { context: 'Production;*', value: 'db1.prod' },
        ],
      },
      { key: 'db.port', vdt: 'Integer', values: [{ context: '*;*', value: 5432 }] },
    ],
    { 'Application-Name': 'my-deployer' },
  );
  const withToken = await pushTo(
    fixture.server.url,
    '/rest/push',
    {
      changeComment: 'Move production',
      data: [
        {
          key: 'db.host',
          values: [
            { context: 'Production;*', value: 'db2.prod' },
            { context: 'Staging;*', value: 'db.stage' },
          ],
        },
      ],
    },
    { 'Client-Token': token },
  );
  expect(withToken.status).toBe(200);
  commits.move = withToken.etag!.replace(/"/g, '');
  commits.file = await pushOk(REPO, 'Add a file', [
    { file: 'conf/app.properties', context: '*;*', content: 'host=${ db.host }\n' },
  ]);
  commits.cleanup = await pushOk(REPO, 'Clean up', [
    { key: 'db.port', opp: 'delete' },
    { key: 'db.host', values: [{ context: 'Staging;*', opp: 'delete' }], readme: 'Where the database is' },
    { file: 'conf/app.properties', context: '*;*', active: false },
  ]);

  for (let i = 1; i <= 7; i++)
    await pushOk(PAGED, `change ${i}`, [
      { key: i % 2 ? 'odd' : 'even', values: [{ context: '*;*', value: String(i) }] },
    ]);
});

describe('GET /rest/history', () => {
  it('lists the commits newest first, as git log does, each with its date, comment, provenance and author', async () => {
    const answer = await historyOf(REPO);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ account: 'acme', repository: 'hist', head: commits.cleanup });
    expect(answer.json.commits.map((c: { id: string }) => c.id)).toEqual(gitLog(REPO));
    expect(answer.json.nextBefore).toBeUndefined();
    const [cleanup, file, move, create, first] = answer.json.commits;
    expect(create).toMatchObject({
      id: commits.create,
      comment: 'Add the database',
      applicationName: 'my-deployer',
      author: { name: 'cfghub', email: 'cfghub@localhost' },
    });
    expect(create.token).toBeUndefined();
    expect(create.date).toMatch(ISO_SECONDS);
    expect(Date.parse(create.date) / 1000).toBe(
      Number(git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%ct', commits.create).trim()),
    );
    expect(move).toMatchObject({ comment: 'Move production', token: 'deployer' });
    expect(move.applicationName).toBeUndefined();
    expect(file.comment).toBe('Add a file');
    expect(cleanup.comment).toBe('Clean up');
    // The first commit, made by `repo create`, holds the settings.
    expect(first).toMatchObject({ keys: [], files: [], settings: true });
  });

  it('reports the keys, values by context and files each commit added, modified or deleted', async () => {
    const { json } = await historyOf(REPO);
    const byId = Object.fromEntries(json.commits.map((c: { id: string }) => [c.id, c]));
    expect(byId[commits.create].keys).toEqual([
      {
        key: 'db.host',
        change: 'added',
        values: [
          { context: '*;*', change: 'added', after: { value: 'localhost', active: true } },
          { context: 'Production;*', change: 'added', after: { value: 'db1.prod', active: true } },
        ],
      },
      {
        key: 'db.port',
        change: 'added',
        values: [{ context: '*;*', change: 'added', after: { value: '5432', active: true } }],
      },
    ]);
    expect(byId[commits.create].files).toEqual([]);
    expect(byId[commits.move].keys).toEqual([
      {
        key: 'db.host',
        change: 'modified',
        values: [
          {
            context: 'Production;*',
            change: 'modified',
            before: { value: 'db1.prod', active: true },
            after: { value: 'db2.prod', active: true },
          },
          { context: 'Staging;*', change: 'added', after: { value: 'db.stage', active: true } },
        ],
      },
    ]);
    expect(byId[commits.file]).toMatchObject({
      keys: [],
      files: [{ path: 'conf/app.properties', context: '*;*', change: 'added', active: true }],
    });
    expect(byId[commits.cleanup].keys).toEqual([
      {
        key: 'db.host',
        change: 'modified',
        fields: { readme: { before: 'Database host', after: 'Where the database is' } },
        values: [{ context: 'Staging;*', change: 'deleted', before: { value: 'db.stage', active: true } }],
      },
      {
        key: 'db.port',
        change: 'deleted',
        values: [{ context: '*;*', change: 'deleted', before: { value: '5432', active: true } }],
      },
    ]);
    // Made inactive: the file moved from files/ to inactive-files/, one variant modified.
    expect(byId[commits.cleanup].files).toEqual([
      { path: 'conf/app.properties', context: '*;*', change: 'modified', active: false },
    ]);
  });

  it('pages with Limit and Before (headers or query parameters) through the whole history without gaps', async () => {
    const all = gitLog(PAGED);
    expect(all).toHaveLength(8);
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const answer = await historyOf(PAGED, { Limit: '3', ...(before ? { Before: before } : {}) });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.commits.length).toBeLessThanOrEqual(3);
      seen.push(...answer.json.commits.map((c: { id: string }) => c.id));
      before = answer.json.nextBefore;
      if (!before) break;
      expect(before).toBe(seen[seen.length - 1]);
    }
    expect(seen).toEqual(all);
    const byQuery = await historyOf(PAGED, {}, `?limit=2&before=${all[1]}`);
    expect(byQuery.json.commits.map((c: { id: string }) => c.id)).toEqual(all.slice(2, 4));
  });

  it('filters by key (any case) and by file', async () => {
    const odd = await historyOf(PAGED, { Key: 'ODD' });
    expect(odd.json.commits.map((c: { comment: string }) => c.comment)).toEqual([
      'change 7',
      'change 5',
      'change 3',
      'change 1',
    ]);
    const oddPage = await historyOf(PAGED, { Key: 'odd', Limit: '2' });
    expect(oddPage.json.commits.map((c: { comment: string }) => c.comment)).toEqual(['change 7', 'change 5']);
    const next = await historyOf(PAGED, { Key: 'odd', Limit: '2', Before: oddPage.json.nextBefore });
    expect(next.json.commits.map((c: { comment: string }) => c.comment)).toEqual(['change 3', 'change 1']);
    const file = await historyOf(REPO, { File: '/conf/app.properties' });
    expect(file.json.commits.map((c: { id: string }) => c.id)).toEqual([commits.cleanup, commits.file]);
    const none = await historyOf(REPO, { Key: 'no.such.key' });
    expect(none.json).toMatchObject({ commits: [] });
  });

  it('refuses a bad Limit or Before with 400, and an unknown Before with 404', async () => {
    for (const limit of ['0', '1001', 'ten', '-1', '2.5']) {
      expect(expectJsonError(await historyOf(PAGED, { Limit: limit }), 400)).toMatch(/Limit/);
    }
    expect(expectJsonError(await historyOf(PAGED, { Before: 'abc' }), 400)).toMatch(
      /Before must be a commit id: 40 hex digits, or the first 7 or more/,
    );
    expect(expectJsonError(await historyOf(PAGED, { Before: 'f'.repeat(40) }), 404)).toMatch(/no commit f{40}/);
  });

  it('lists commits made with plain git at once, with their author and changes', async () => {
    const host = git(gitdirOf(fixture.repos, PAGED), 'show', `refs/heads/main:${keyPath('odd')}`).replace(
      /value: .*7.*/,
      'value: plain',
    );
    const commit = plainGitCommit(
      gitdirOf(fixture.repos, PAGED),
      { [keyPath('odd')]: host, 'NOTES.md': 'hello\n' },
      'Edited by hand\n\nwith a body',
    );
    const [top] = (await historyOf(PAGED, { Limit: '1' })).json.commits;
    expect(top).toMatchObject({
      id: commit,
      comment: 'Edited by hand\n\nwith a body',
      author: { name: 'Plain Git', email: 'plain@example.com' },
      keys: [
        {
          key: 'odd',
          change: 'modified',
          values: [{ context: '*;*', change: 'modified', before: { value: '7' }, after: { value: 'plain' } }],
        },
      ],
      other: ['NOTES.md'],
    });
  });

  it('follows the access rules of a pull: token form, private repositories, other tokens', async () => {
    const byToken = await read(fixture.server.url, '/rest/history', { 'Client-Token': token, Limit: '1' });
    expect(byToken.status).toBe(200);
    expect(byToken.json.commits[0].id).toBe(commits.cleanup);
    expectJsonError(await read(fixture.server.url, '/rest/history', {}), 401);
    expectJsonError(await historyOf(PRIVATE), 401);
    expectJsonError(await historyOf(PRIVATE, { 'Client-Token': token }), 403);
    expectJsonError(await historyOf('acme/nothere'), 404);
  });
});

describe('history of content that breaks the layout rules', () => {
  it('reports the file and commit of each problem, lists the other commits, and keeps serving', async () => {
    const gitdir = gitdirOf(fixture.repos, BAD);
    const good = await pushOk(BAD, 'good', [{ key: 'fine', values: [{ context: '*;*', value: 'yes' }] }]);
    const badYaml = plainGitCommit(gitdir, { [keyPath('broken')]: 'key: broken\nvalues: [\n' }, 'bad yaml');
    const unknownField = plainGitCommit(
      gitdir,
      {
        [keyPath('extra')]:
          'key: extra\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\ncolour: red\nvalues: []\n',
      },
      'unknown field',
    );
    const wrongPlace = plainGitCommit(
      gitdir,
      {
        'keys/zz/misplaced.yaml': 'key: misplaced\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n',
        'files/loose.txt': 'x',
      },
      'wrong places',
    );

    const answer = await historyOf(BAD);
    expect(answer.status, answer.text).toBe(200);
    const byId = Object.fromEntries(answer.json.commits.map((c: { id: string }) => [c.id, c]));
    expect(byId[badYaml].problems).toEqual([
      expect.stringContaining(`${keyPath('broken')} at commit ${badYaml.slice(0, 12)}`),
    ]);
    expect(byId[badYaml].problems[0]).toMatch(/not valid YAML/);
    expect(byId[unknownField].problems).toEqual([
      expect.stringMatching(new RegExp(`${keyPath('extra')} at commit ${unknownField.slice(0, 12)}.*colour`)),
    ]);
    expect(byId[wrongPlace].problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`keys/zz/misplaced.yaml at commit ${wrongPlace.slice(0, 12)}: key misplaced belongs in keys/`),
        ),
        `files/loose.txt is not inside a context folder, at commit ${wrongPlace.slice(0, 12)}`,
      ]),
    );
    expect(byId[good]).toMatchObject({ keys: [{ key: 'fine', change: 'added' }] });
    expect(byId[good].problems).toBeUndefined();
    // Diff reports the same problems; the resolved view of a broken commit is a 409 naming it.
    const changed = await read(fixture.server.url, `/rest/diff/${BAD}`, { From: good });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.problems).toEqual(
      expect.arrayContaining([expect.stringContaining(`${keyPath('broken')} at commit ${wrongPlace.slice(0, 12)}`)]),
    );
    const resolved = await read(fixture.server.url, `/rest/diff/${BAD}`, { From: good, Context: 'Production;web' });
    expect(expectJsonError(resolved, 409)).toMatch(new RegExp(`at commit ${wrongPlace.slice(0, 12)}`));
    // The server still answers, for this repository and the others.
    expect((await historyOf(REPO, { Limit: '1' })).status).toBe(200);
    expect((await read(fixture.server.url, '/healthz')).status).toBe(200);
    for (const leak of [fixture.repos, 'Error:', '    at ']) expect(answer.text).not.toContain(leak);
  });
});
