/**
 * Backups (deliverable 6): `git clone --mirror` of a repository, from its folder or over
 * HTTP, placed back under the repositories folder under another name, lists the same counts and
 * answers the same pulls; `git fetch --prune` in the mirror catches up with later pushes.
 * Tokens live outside the repositories, so a restored copy has none (userCount 0).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitAsync, gitEnv } from '../../support/gitCli.js';
import { cliOk, getJson, gitdirOf, headOf, pushTo, serverForFile, tempDir } from '../../support/harness.js';

const ORIGINAL = 'acme/app';
const CONTEXTS = ['Prod;web', 'Prod;batch', 'Dev;web', 'Test;api'];

const fixture = serverForFile();
let token: string;

function git(...args: string[]): string {
  return execFileSync('git', args, { env: gitEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Everything a client sees of a repository: its listing record without name and users, and its pulls. */
async function whatClientsSee(fullName: string) {
  const listing = (await getJson(fixture.server.url, '/rest/info/all')).json as Record<string, unknown>[];
  const { account, name, userCount, ...record } = listing.find((r) => `${r.account}/${r.name}` === fullName)!;
  const pulls: unknown[] = [];
  for (const context of CONTEXTS) {
    const answer = await getJson(fixture.server.url, `/rest/pull/${fullName}`, {
      Context: context,
      'Include-Comments': 'true',
      'Include-Value-Context': 'true',
    });
    expect(answer.status).toBe(200);
    const { generatedOn, account: _account, repo: _repo, ...pull } = answer.json;
    pulls.push(pull);
  }
  const exported = await getJson(fixture.server.url, `/rest/export/${fullName}`);
  const tagged = await getJson(fixture.server.url, `/rest/pull/${fullName}`, { Context: 'Prod;web', Tag: 'v1' });
  return {
    record,
    pulls,
    exported: exported.json,
    tagged: tagged.status === 200 ? tagged.json.properties : tagged.status,
  };
}

async function pushKeys(values: Record<string, string>) {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${ORIGINAL}`,
    {
      changeComment: `set ${Object.keys(values).join(', ')}`,
      enableKeyCreation: true,
      data: [
        ...Object.entries(values).map(([key, value]) => ({
          key,
          readme: `about ${key}`,
          values: [
            { context: '*;*', value },
            { context: 'Prod;*', value: `${value}-prod` },
          ],
        })),
        {
          file: 'conf/app.properties',
          context: 'Prod;*',
          content: Object.keys(values)
            .map((key) => `${key}=\${ ${key} }`)
            .join('\n'),
        },
      ],
    },
    { 'Client-Token': token },
  );
  expect(answer.status).toBe(200);
}

beforeAll(async () => {
  cliOk(
    fixture.repos,
    'repo',
    'create',
    ORIGINAL,
    '--context',
    'Env,App',
    '--token-free-pull',
    '--description',
    'the app',
  );
  token = cliOk(fixture.repos, 'token', 'create', ORIGINAL).trim();
  await pushKeys({ 'db.host': 'db1', 'db.port': '5432' });
  cliOk(fixture.repos, 'tag', 'create', ORIGINAL, 'v1', '--comment', 'first');
  await pushKeys({ 'db.host': 'db2', 'log.level': 'warn' });
});

describe('backups with git clone --mirror', () => {
  it('a mirror from the repository folder, placed back under another name, lists and pulls the same', async () => {
    const restored = 'restored/app';
    git('clone', '--quiet', '--mirror', gitdirOf(fixture.repos, ORIGINAL), gitdirOf(fixture.repos, restored));
    const original = await whatClientsSee(ORIGINAL);
    const copy = await whatClientsSee(restored);
    expect(copy).toEqual(original);
    expect(original.record).toMatchObject({ keyCount: 3, valueCount: 6 });
    expect(original.tagged).toMatchObject({ 'db.host': { val: 'db1-prod' } });
    const listing = (await getJson(fixture.server.url, '/rest/info/all')).json as Record<string, unknown>[];
    expect(listing.find((r) => r.account === 'restored')).toMatchObject({ name: 'app', userCount: 0 });
  });

  it('a mirror over HTTP catches up with later pushes through git fetch --prune, and stays equal', async () => {
    const backups = tempDir('cfghub-backups-');
    try {
      const mirror = join(backups.path, 'app.git');
      const cloned = await gitAsync(
        ['clone', '--quiet', '--mirror', `${fixture.server.url}/git/${ORIGINAL}.git`, mirror],
        { cwd: backups.path },
      );
      expect(cloned.code, cloned.stderr).toBe(0);
      await pushKeys({ 'db.host': 'db3', 'cache.ttl': '60' });
      const fetched = await gitAsync(['--git-dir', mirror, 'fetch', '--quiet', '--prune'], { cwd: backups.path });
      expect(fetched.code, fetched.stderr).toBe(0);
      expect(git('--git-dir', mirror, 'rev-parse', 'main').trim()).toBe(headOf(fixture.repos, ORIGINAL));

      git('clone', '--quiet', '--mirror', mirror, gitdirOf(fixture.repos, 'restored/fromhttp'));
      const copy = await whatClientsSee('restored/fromhttp');
      expect(copy).toEqual(await whatClientsSee(ORIGINAL));
      expect(copy.record).toMatchObject({ keyCount: 4 });
      expect(git('--git-dir', gitdirOf(fixture.repos, 'restored/fromhttp'), 'fsck', '--strict', '--no-progress')).toBe(
        '',
      );
    } finally {
      backups.remove();
    }
  });
});
