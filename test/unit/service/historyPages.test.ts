/**
 * History pages over a repository that git repacked: its objects are deltas in chains,
 * read through the process-wide delta base cache, with zlib's output sized from each entry; the
 * trees are compared in their stored bytes. The answers must be those of the same commits read
 * from cfghub's own packs (no deltas). A page of commits never summarized gives the event loop a
 * turn while it works, and the access check of a history read builds no snapshot of the head.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { TokenStore } from '../../../src/disk/records/tokenStore.js';
import { AccessPolicy } from '../../../src/service/access/accessPolicy.js';
import { history, type HistoryPage } from '../../../src/service/history/history.js';
import { push } from '../../../src/service/write/push.js';
import { parsePushBody } from '../../../src/api/pushBody.js';
import { createRepository, requireRepository } from '../../../src/service/admin/repositories.js';
import { TokenService } from '../../../src/service/admin/tokens.js';
import { tempDir } from '../../support/harness.js';

const KEYS = 40;
const COMMITS = 160;
const caller = { forceKeyPush: false, applicationName: 'history-pages-test' };

/** A push as the HTTP route parses it from its JSON body. */
function pushOf(body: unknown) {
  const parsed = parsePushBody(body);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.request;
}

/** Every page of the history, 50 commits at a time, paging back with `before`. */
async function allPages(repository: GitRepository): Promise<HistoryPage[]> {
  const pages: HistoryPage[] = [];
  let before: string | undefined;
  do {
    const page = await history(repository, repository.head(), { limit: 50, ...(before ? { before } : {}) });
    pages.push(page);
    before = page.nextBefore;
  } while (before !== undefined);
  return pages;
}

describe('history pages of a repository git repacked', () => {
  let dir: ReturnType<typeof tempDir>;
  let original: string;
  let repacked: string;
  const open = (root: string) => requireRepository(new RepositoryRegistry(root), 'acme', 'hist');

  beforeAll(async () => {
    dir = tempDir();
    original = join(dir.path, 'original');
    repacked = join(dir.path, 'repacked');
    const repository = await createRepository(new RepositoryRegistry(original), {
      account: 'acme',
      name: 'hist',
      levels: ['Env'],
      tokenFreePull: true,
    });
    const name = (i: number) => `app.key${String(i).padStart(2, '0')}`;
    const seeded = await push(
      repository,
      pushOf({
        changeComment: 'seed',
        enableKeyCreation: true,
        data: Array.from({ length: KEYS }, (_, i) => ({ key: name(i), values: [{ context: '*', value: `v0-${i}` }] })),
      }),
      caller,
    );
    expect(seeded.kind).toBe('applied');
    for (let round = 1; round <= COMMITS; round++) {
      // One to three keys per commit, as the bench's fixture; now and then a new key or a second context.
      const data = Array.from({ length: 1 + (round % 3) }, (_, j) => {
        const key = round % 17 === 0 && j === 0 ? `app.new${round}` : name((round * 7 + j * 13) % KEYS);
        return { key, values: [{ context: round % 5 === 0 ? 'Prod' : '*', value: `v${round}-${j}` }] };
      });
      const result = await push(
        repository,
        pushOf({ changeComment: `round ${round}`, enableKeyCreation: true, data }),
        caller,
      );
      expect(result.kind).toBe('applied');
    }
    // Copied once merges are done: a merge removes the packs it merged after the push that set it off.
    await repository.exclusive(async () => undefined);
    await repository.objects.settled();
    cpSync(original, repacked, { recursive: true });
    const gitdir = open(repacked).gitdir;
    execFileSync('git', ['--git-dir', gitdir, 'repack', '-a', '-d', '-f', '-q', '--depth=50', '--window=10'], {
      stdio: 'ignore',
    });
    const indexes = readdirSync(join(gitdir, 'objects', 'pack')).filter((file) => file.endsWith('.idx'));
    expect(indexes).toHaveLength(1);
    const verify = execFileSync('git', ['verify-pack', '-v', join(gitdir, 'objects', 'pack', indexes[0])], {
      encoding: 'utf8',
    });
    expect(verify).toMatch(/chain length = [2-9]/); // deltas of deltas: bases read through the cache
  }, 120_000);
  afterAll(() => dir.remove());

  it('gives every page exactly as read from cfghub’s own packs', async () => {
    const expected = await allPages(open(original));
    const actual = await allPages(open(repacked));
    expect(expected.flatMap((page) => page.commits)).toHaveLength(COMMITS + 2);
    expect(actual).toEqual(expected);
    expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  });

  it('gives the event loop turns while it summarizes a page of commits never summarized before', async () => {
    const repository = open(repacked);
    let turns = 0;
    let done = false;
    const tick = () => {
      if (done) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const page = await history(repository, repository.head(), { limit: COMMITS });
    done = true;
    expect(page.commits).toHaveLength(COMMITS);
    expect(turns).toBeGreaterThan(0);
  });

  it('decides a history read from the settings alone, building no snapshot of the head', async () => {
    const registry = new RepositoryRegistry(repacked);
    const policy = new AccessPolicy(registry, new TokenService(new TokenStore(repacked)));
    const request = {
      operation: 'read',
      account: 'acme',
      repository: 'hist',
      what: 'GET /rest/history/acme/hist',
    } as const;
    const grant = await policy.require({ ...request, settingsOnly: true });
    expect(grant.repository.builtSnapshot(grant.head)).toBeUndefined();
    const pullGrant = await policy.require(request);
    expect(pullGrant.repository.builtSnapshot(pullGrant.head)).toBeDefined();
  });
});
