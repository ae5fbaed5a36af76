/**
 * A pull right after a push: the contexts the push did not reach are served the answer they had,
 * carried over without being made again (src/http/routes/readRoutes.ts, service/answers/changeReach.ts); those
 * it reached get theirs made anew. Counted by `cfghub_read_cache_lookups_total` (hit, miss: made,
 * carried), checked against what a read gives, also across a commit of plain git and a git gc. The
 * real server, real bare repositories, the real git CLI.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, headOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { keyPath, keyYaml, metricOf, plainGitCommit } from '../../support/reads.js';
import { until } from '../../support/poll.js';
import { VALUES_WEIGHED } from '../../../src/service/answers/changeReach.js';

const REPO = 'acme/carried';
const fixture = serverForFile();

const lookups = async () => ({
  miss: await metricOf(fixture.server.url, 'cfghub_read_cache_lookups_total{result="miss"}'),
  carried: await metricOf(fixture.server.url, 'cfghub_read_cache_lookups_total{result="carried"}').catch(() => 0), // absent until counted once
});

async function pull(
  context: string,
): Promise<{ etag: string | null; commit: string | null; text: string; val: unknown }> {
  const response = await fetch(`${fixture.server.url}/rest/pull/${REPO}`, { headers: { Context: context } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return {
    etag: response.headers.get('etag'),
    commit: response.headers.get('commit'),
    text,
    val: JSON.parse(text).properties.url?.val,
  };
}

async function pushOk(data: unknown[]): Promise<void> {
  const answer = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'change',
    enableKeyCreation: true,
    data,
  });
  expect(answer.status, reasonOf(answer)).toBe(200);
}

/** Pulls a context, and says whether its answer was made, carried or found. */
async function pullCounted(context: string) {
  const before = await lookups();
  const answer = await pull(context);
  const after = await lookups();
  const way = after.carried > before.carried ? 'carried' : after.miss > before.miss ? 'made' : 'found';
  return { ...answer, way };
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  await pushOk([
    {
      key: 'url',
      values: [
        { context: '*;*', value: 'global' },
        { context: 'Prod;*', value: 'prod' },
        { context: 'Dev;*', value: 'dev' },
      ],
    },
  ]);
});

describe('a pull right after a push', () => {
  it("carries the answer of a context the push did not reach, and makes the others'", async () => {
    const prod = await pullCounted('Prod;web');
    const test = await pullCounted('Test;web');
    expect(await pullCounted('Dev;web')).toMatchObject({ way: 'made', val: 'dev' });
    expect(prod).toMatchObject({ way: 'made', val: 'prod' });
    expect((await pullCounted('Prod;web')).way).toBe('found');

    // Dev's value changes: Prod and Test read the same as before.
    await pushOk([{ key: 'url', values: [{ context: 'Dev;*', value: 'dev-2' }] }]);
    const head = headOf(fixture.repos, REPO);
    const prodAfter = await pullCounted('Prod;web');
    expect(prodAfter.way).toBe('carried');
    expect(prodAfter.text).toBe(prod.text); // the very answer, generatedOn included
    expect(prodAfter.etag).toBe(prod.etag);
    expect(prodAfter.commit).toBe(head); // served as the head's
    expect((await pullCounted('Prod;web')).way).toBe('found'); // now cached at the head
    expect(await pullCounted('Test;web')).toMatchObject({ way: 'carried', etag: test.etag });
    expect(await pullCounted('Dev;web')).toMatchObject({ way: 'made', val: 'dev-2' });

    // The wildcard changes: Test resolves it, Prod still resolves its own value.
    await pushOk([{ key: 'url', values: [{ context: '*;*', value: 'global-2' }] }]);
    expect(await pullCounted('Test;web')).toMatchObject({ way: 'made', val: 'global-2' });
    expect(await pullCounted('Prod;web')).toMatchObject({ way: 'carried', val: 'prod', etag: prod.etag });
  });

  it('carries across a commit made with plain git, after git gc repacked the repository', async () => {
    const gitdir = gitdirOf(fixture.repos, REPO);
    const prod = await pull('Prod;web'); // answered at the head
    await pull('Dev;web');
    const document = keyYaml(gitdir, 'url');
    expect(document).toContain('dev-2');
    plainGitCommit(gitdir, { [keyPath('url')]: document.replace('dev-2', 'dev-3') }, 'by hand');
    git(gitdir, 'gc', '--quiet', '--prune=now');
    // The server sees the new head once its head watch has the event: a read of another context says when.
    const head = headOf(fixture.repos, REPO);
    await until(async () => (await pull('Test;web')).commit === head, 'the server to see the commit');
    const prodAfter = await pullCounted('Prod;web');
    expect(prodAfter).toMatchObject({ way: 'carried', etag: prod.etag, text: prod.text, commit: head });
    expect(await pullCounted('Dev;web')).toMatchObject({ way: 'made', val: 'dev-3' });
  });

  it(`makes the answer when the changes hold more than ${VALUES_WEIGHED.toLocaleString('en-US')} values to weigh`, async () => {
    const keys = Math.floor(VALUES_WEIGHED / 10) + 1; // each key's 5 values, before and after
    const devValues = (value: string) =>
      Array.from({ length: keys }, (_, i) => ({
        key: `bulk.${i}`,
        values: ['a', 'b', 'c', 'd', 'e'].map((app) => ({ context: `Dev;${app}`, value })),
      }));
    await pushOk(devValues('v1'));
    await pull('Prod;web'); // answered at this head
    await pushOk(devValues('v2')); // Prod reads none of it, but there is too much to weigh
    expect((await pullCounted('Prod;web')).way).toBe('made');
  });

  it('makes every answer after a change of anything but keys (a file)', async () => {
    await pull('Prod;web'); // cached at the head
    await pushOk([{ file: 'app.conf', context: 'Dev;*', content: 'x=1\n' }]);
    expect((await pullCounted('Prod;web')).way).toBe('made');
  });
});
