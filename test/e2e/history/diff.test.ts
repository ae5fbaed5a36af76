/**
 * `GET /rest/diff` end to end: the keys, values and files changed between two
 * points (commit ids, tags, dates), and with a Context the difference a client of that context
 * sees (resolved properties, rendered files). Checked against `git diff` of the same commits.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, createOpenRepository, pushCommitted, git, gitdirOf, serverForFile } from '../../support/harness.js';
import { commitTime, expectJsonError, isoOf, nextSecondAfter, read } from '../../support/reads.js';

const REPO = 'acme/diffs';

const fixture = serverForFile();
let gitdir: string;
const at: Record<string, string> = {};

const pushOk = (comment: string, data: unknown[]) =>
  pushCommitted(fixture.server.url, `/rest/push/${REPO}`, { changeComment: comment, enableKeyCreation: true, data });

const diffOf = (headers: Record<string, string>) => read(fixture.server.url, `/rest/diff/${REPO}`, headers);

beforeAll(async () => {
  createOpenRepository(fixture.repos, REPO);
  gitdir = gitdirOf(fixture.repos, REPO);
  at.v1 = await pushOk('first', [
    {
      key: 'db.host',
      values: [
        { context: '*;*', value: 'localhost' },
        { context: 'Production;*', value: 'db1.prod' },
      ],
    },
    { key: 'log.level', values: [{ context: '*;*', value: 'info' }] },
    { key: 'old.key', values: [{ context: 'Production;*', value: 'gone soon' }] },
    { file: 'conf/db.properties', context: '*;*', content: 'host=${ db.host }\n' },
  ]);
  cliOk(fixture.repos, 'tag', 'create', REPO, 'v1');
  await nextSecondAfter(commitTime(gitdir, at.v1));
  at.v2 = await pushOk('second', [
    { key: 'db.host', values: [{ context: 'Production;*', value: 'db2.prod' }] },
    { key: 'log.level', values: [{ context: 'Development;*', value: 'debug' }] },
    { key: 'old.key', opp: 'delete' },
    { key: 'new.key', values: [{ context: 'Production;*', value: 'fresh' }] },
    { file: 'conf/extra.txt', context: 'Production;*', content: 'extra\n' },
  ]);
});

describe('GET /rest/diff', () => {
  it('reports the keys, values and files changed between a commit and the head, as git diff sees them', async () => {
    const answer = await diffOf({ From: at.v1 });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toMatchObject({ account: 'acme', repository: 'diffs', from: at.v1, to: at.v2 });
    expect(answer.json.keys.map((k: { key: string; change: string }) => `${k.change} ${k.key}`)).toEqual([
      'modified db.host',
      'modified log.level',
      'added new.key',
      'deleted old.key',
    ]);
    expect(answer.json.keys[0].values).toEqual([
      {
        context: 'Production;*',
        change: 'modified',
        before: { value: 'db1.prod', active: true },
        after: { value: 'db2.prod', active: true },
      },
    ]);
    expect(answer.json.files).toEqual([
      { path: 'conf/extra.txt', context: 'Production;*', change: 'added', active: true },
    ]);
    expect(answer.json.resolved).toBeUndefined();
    // The same set of documents git's own diff names.
    const changed = git(gitdir, 'diff', '--no-renames', '--name-only', at.v1, at.v2).trim().split('\n');
    expect(changed).toHaveLength(answer.json.keys.length + answer.json.files.length);
  });

  it('takes tags and dates as points, and To as well as From; the same point gives no change', async () => {
    const byTag = await diffOf({ From: 'v1', To: at.v2 });
    expect(byTag.json.from).toBe(at.v1);
    expect(byTag.json.keys).toHaveLength(4);
    const byDate = await diffOf({ From: isoOf(commitTime(gitdir, at.v1)), To: 'v1' });
    expect(byDate.json).toMatchObject({ from: at.v1, to: at.v1, keys: [], files: [] });
    const backwards = await diffOf({ From: at.v2, To: 'v1' });
    expect(backwards.json.keys.map((k: { key: string; change: string }) => `${k.change} ${k.key}`)).toContain(
      'added old.key',
    );
  });

  it('with a Context, reports what a client of that context sees change: properties and rendered files', async () => {
    const answer = await diffOf({ From: 'v1', Context: 'Production;web' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.resolved).toEqual({
      context: 'Production;web',
      properties: {
        added: { 'new.key': { val: 'fresh' } },
        changed: { 'db.host': { before: { val: 'db1.prod' }, after: { val: 'db2.prod' } } },
        removed: { 'old.key': { val: 'gone soon' } },
      },
      files: {
        added: { 'conf/extra.txt': { content: 'extra\n', 'content-type': 'text/plain' } },
        changed: {
          'conf/db.properties': {
            before: { content: 'host=db1.prod\n', 'content-type': 'text/x-java-properties' },
            after: { content: 'host=db2.prod\n', 'content-type': 'text/x-java-properties' },
          },
        },
        removed: {},
      },
    });
    // Development sees log.level change, and nothing of production.
    const dev = await diffOf({ From: 'v1', Context: 'Development;web' });
    expect(dev.json.resolved.properties).toEqual({
      added: {},
      changed: { 'log.level': { before: { val: 'info' }, after: { val: 'debug' } } },
      removed: {},
    });
    expect(dev.json.resolved.files).toEqual({ added: {}, changed: {}, removed: {} });
  });

  it('refuses a missing From and a bad Context with 400, an unknown point with 404', async () => {
    expect(expectJsonError(await diffOf({}), 400)).toMatch(/From/);
    expectJsonError(await diffOf({ From: 'v1', Context: 'Production' }), 400);
    expect(expectJsonError(await diffOf({ From: 'nosuchtag' }), 404)).toMatch(/no tag nosuchtag/);
    expect(expectJsonError(await diffOf({ From: 'a'.repeat(40) }), 404)).toMatch(/no commit/);
    expectJsonError(await diffOf({ From: '1990-01-01T00:00:00Z' }), 404);
  });
});
