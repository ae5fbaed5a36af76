/**
 * Time travel: the commit current at an instant, on commits made with git's
 * plumbing at known committer times; and the ISO 8601 instants `Repository-Date` accepts.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { parseIsoInstant } from '../../../src/lib/dates.js';
import { commitAtOrBefore, commitTimes } from '../../../src/layout/timeTravel.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { pollPhase } from '../../support/eventLoop.js';
import { tempDir } from '../../support/harness.js';

const at = (iso: string) => new Date(iso);
const seconds = (iso: string) => Date.parse(iso) / 1000;

describe('commitAtOrBefore', () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  let tree: string;
  const commits: Record<string, string> = {};

  const git = (args: string[], env: Record<string, string> = {}) =>
    execFileSync('git', ['--git-dir', repository.gitdir, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    }).trim();

  /** A commit made by git at a known committer time (the author time is another, to tell them apart). */
  function commitAt(iso: string, parents: string[], message: string): string {
    const parentArgs = parents.flatMap((parent) => ['-p', parent]);
    return git(['commit-tree', tree, ...parentArgs, '-m', message], {
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_AUTHOR_DATE: '@0 +0000',
      GIT_COMMITTER_NAME: 'C',
      GIT_COMMITTER_EMAIL: 'c@example.com',
      GIT_COMMITTER_DATE: `@${seconds(iso)} +0200`,
    });
  }

  /** Moves main with plain git, and lets the event loop read the head watch's events, as a server does before its next request. */
  async function moveMain(to: string): Promise<void> {
    git(['update-ref', 'refs/heads/main', to]);
    await pollPhase();
  }

  beforeAll(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), {
      account: 'acme',
      name: 'history',
      levels: ['Env'],
    });
    tree = git(['rev-parse', 'refs/heads/main^{tree}']);
    // History rewritten with plain git: three commits at known times, replacing the first one.
    commits.first = commitAt('2021-01-01T00:00:00Z', [], 'first');
    commits.second = commitAt('2021-06-01T12:00:00Z', [commits.first], 'second');
    commits.third = commitAt('2022-01-01T00:00:00Z', [commits.second], 'third');
    await moveMain(commits.third);
  });
  afterAll(() => dir.remove());

  it('gives the commit made at exactly the instant', async () => {
    expect(await commitAtOrBefore(repository, at('2021-01-01T00:00:00Z'))).toBe(commits.first);
    expect(await commitAtOrBefore(repository, at('2021-06-01T12:00:00Z'))).toBe(commits.second);
    expect(await commitAtOrBefore(repository, at('2022-01-01T00:00:00Z'))).toBe(commits.third);
  });

  it('gives the last commit before an instant between commits', async () => {
    expect(await commitAtOrBefore(repository, at('2021-06-01T11:59:59Z'))).toBe(commits.first);
    expect(await commitAtOrBefore(repository, at('2021-06-01T12:00:00.999Z'))).toBe(commits.second);
    expect(await commitAtOrBefore(repository, at('2021-12-31T23:59:59Z'))).toBe(commits.second);
  });

  it('gives null for an instant before the first commit', async () => {
    expect(await commitAtOrBefore(repository, at('2020-12-31T23:59:59Z'))).toBeNull();
    expect(await commitAtOrBefore(repository, at('1970-01-01T00:00:00Z'))).toBeNull();
  });

  it('gives the head for an instant after the last commit', async () => {
    expect(await commitAtOrBefore(repository, at('2030-01-01T00:00:00Z'))).toBe(commits.third);
    expect(await commitAtOrBefore(repository, new Date())).toBe(commits.third);
  });

  it('takes an instant with an offset at its UTC value', async () => {
    expect(await commitAtOrBefore(repository, parseIsoInstant('2021-06-01T14:00:00+02:00')!)).toBe(commits.second);
    expect(await commitAtOrBefore(repository, parseIsoInstant('2021-06-01T13:59:59+02:00')!)).toBe(commits.first);
  });

  it('reads committer times, not author times', async () => {
    expect(await commitTimes(repository, commits.second)).toEqual({
      parents: [commits.first],
      committedAt: seconds('2021-06-01T12:00:00Z'),
    });
  });

  it('starts from the head as it is now: commits made by plain git show at once, and so does a reset', async () => {
    commits.fourth = commitAt('2023-01-01T00:00:00Z', [commits.third], 'fourth');
    await moveMain(commits.fourth);
    expect(await commitAtOrBefore(repository, at('2030-01-01T00:00:00Z'))).toBe(commits.fourth);
    expect(await commitAtOrBefore(repository, at('2022-06-01T00:00:00Z'))).toBe(commits.third);
    await moveMain(commits.second);
    expect(await commitAtOrBefore(repository, at('2030-01-01T00:00:00Z'))).toBe(commits.second);
    await moveMain(commits.fourth);
  });

  it('follows first parents only: a merged side branch is not on the timeline', async () => {
    const side = commitAt('2023-03-01T00:00:00Z', [commits.fourth], 'side');
    const merge = commitAt('2023-06-01T00:00:00Z', [commits.fourth, side], 'merge');
    await moveMain(merge);
    expect(await commitAtOrBefore(repository, at('2023-04-01T00:00:00Z'))).toBe(commits.fourth);
    expect(await commitAtOrBefore(repository, at('2023-06-01T00:00:00Z'))).toBe(merge);
  });

  it('gives the newest commit at or before the instant on the first-parent line, even when clocks went backwards', async () => {
    // A commit whose committer clock was behind its parent's: from the head, it is the first at or before.
    const skewed = commitAt('2022-06-01T00:00:00Z', [git(['rev-parse', 'refs/heads/main'])], 'skewed clock');
    await moveMain(skewed);
    expect(await commitAtOrBefore(repository, at('2023-01-01T00:00:00Z'))).toBe(skewed);
    expect(await commitAtOrBefore(repository, at('2022-05-31T23:59:59Z'))).toBe(commits.third);
  });

  it('refuses an invalid instant', async () => {
    await expect(commitAtOrBefore(repository, new Date(Number.NaN))).rejects.toThrow(RangeError);
  });
});

describe('parseIsoInstant', () => {
  it.each([
    ['2021-06-01T12:00:00Z', '2021-06-01T12:00:00.000Z'],
    ['2021-06-01T14:30:00+02:30', '2021-06-01T12:00:00.000Z'],
    ['2021-06-01T07:00:00-05:00', '2021-06-01T12:00:00.000Z'],
    ['2021-06-01T12:00:00+00:00', '2021-06-01T12:00:00.000Z'],
    ['2021-06-01T12:00:00-00:00', '2021-06-01T12:00:00.000Z'],
    ['2021-01-01T00:30:00+01:00', '2020-12-31T23:30:00.000Z'],
    ['2020-02-29T23:59:59Z', '2020-02-29T23:59:59.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2021-12-31T23:59:59Z', '2021-12-31T23:59:59.000Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['0099-01-01T00:00:00Z', '0099-01-01T00:00:00.000Z'],
    // A date alone is midnight UTC.
    ['2021-01-01', '2021-01-01T00:00:00.000Z'],
    ['2020-02-29', '2020-02-29T00:00:00.000Z'],
  ])('accepts %s as %s', (text, expected) => {
    expect(parseIsoInstant(text)?.toISOString()).toBe(expected);
  });

  it.each([
    '2021-02-29T00:00:00Z', // not a leap year
    '1900-02-29T00:00:00Z', // nor is 1900
    '2021-02-30T00:00:00Z',
    '2021-04-31T00:00:00Z',
    '2021-13-01T00:00:00Z',
    '2021-00-10T00:00:00Z',
    '2021-01-00T00:00:00Z',
    '2021-01-01T24:00:00Z',
    '2021-01-01T12:60:00Z',
    '2021-01-01T12:00:60Z',
    '2021-01-01T12:00:00+24:00',
    '2021-01-01T12:00:00+02:60',
    '2021-01-01T12:00:00',
    '2021-01-01T12:00:00.000Z',
    '2021-01-01T12:00:00+0200',
    '2021-01-01T12:00:00+02',
    '2021-01-01 12:00:00Z',
    '2021-01-01t12:00:00z',
    '2021-1-01T12:00:00Z',
    '2021-02-30',
    '2021-01-01T',
    '2021-01-01Z',
    '2021-01',
    '12:00:00Z',
    ' 2021-01-01T12:00:00Z',
    '2021-01-01T12:00:00Z\n',
    '+02021-01-01T12:00:00Z',
    '２０２１-01-01T12:00:00Z',
    'Tue, 01 Jun 2021 12:00:00 GMT',
    '1622548800',
    '',
  ])('refuses %j', (text) => {
    expect(parseIsoInstant(text)).toBeUndefined();
  });
});
