/**
 * Group commit (src/service/write/commit.ts): pushes to one repository that arrive while
 * a commit runs are committed together: one pack and one move of the ref for all of them, yet one
 * commit per push in the order they arrived, each answered for itself. Checked with the real git
 * CLI on a real bare repository.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parsePushBody } from '../../../src/api/pushBody.js';
import type { PushRequest } from '../../../src/domain/pushRequest.js';
import { MAX_GROUP } from '../../../src/service/write/commit.js';
import { push, type PushCaller } from '../../../src/service/write/push.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { tempDir } from '../../support/harness.js';

const CALLER: PushCaller = { forceKeyPush: false };

function request(key: string, value: string, comment = `set ${key}`): PushRequest {
  const parsed = parsePushBody({
    changeComment: comment,
    enableKeyCreation: true,
    data: [{ key, values: [{ context: '*', value }] }],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.request;
}

describe('group commit', () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', repository.gitdir, ...args], { encoding: 'utf8' }).trim();

  beforeAll(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), {
      account: 'acme',
      name: 'group',
      levels: ['Env'],
    });
    expect((await push(repository, request('first', '0'), CALLER)).kind).toBe('applied');
  });
  afterAll(() => dir.remove());
  afterEach(() => vi.restoreAllMocks());
  /** Counts the commits made durable (each: one pack, one move of the ref). */
  const countCommits = () => vi.spyOn(repository, 'commit');
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('commits pushes that wait together as one pack and one ref move, one commit per push in arrival order', async () => {
    const before = git('rev-parse', 'main');
    const commits = countCommits();
    // The first starts its commit at once; the other seven arrive while it runs and form the next group.
    const first = push(repository, request('k0', 'v0'), CALLER);
    await turn();
    const results = await Promise.all([
      first,
      ...Array.from({ length: 7 }, (_, i) => push(repository, request(`k${i + 1}`, `v${i + 1}`), CALLER)),
    ]);
    expect(results.map((r) => r.kind)).toEqual(Array(8).fill('applied'));
    const ids = results.map((r) => (r.kind === 'applied' ? r.commitId : ''));
    // History is linear: each push's commit has the one before it as its only parent.
    const log = git('rev-list', '--parents', `${before}..main`).split('\n').reverse();
    expect(log.map((line) => line.split(' ')[0])).toEqual(ids);
    log.forEach((line, i) => expect(line.split(' ').slice(1)).toEqual([i === 0 ? before : ids[i - 1]]));
    expect(git('log', '--format=%s', '-1', ids[5])).toBe('set k5');
    // One pack and ref move for the first push, one for the seven that waited.
    expect(commits).toHaveBeenCalledTimes(2);
    expect(commits.mock.calls[1][0].objects.filter((object) => object.type === 'commit')).toHaveLength(7);
    expect(git('fsck', '--strict')).toBe('');
    // Every push's own change, at its own commit.
    for (let i = 0; i < 8; i++)
      expect(
        git('ls-tree', '-r', '--name-only', ids[i])
          .split('\n')
          .filter((path) => path.includes(`k${i}`)),
      ).not.toHaveLength(0);
  });

  it('settles a refused push, an unchanged push and a failed precondition alone, committing the rest', async () => {
    const head = git('rev-parse', 'main');
    const results = await Promise.allSettled([
      push(repository, request('a1', 'x'), CALLER),
      push(repository, request('a2', 'x'), CALLER),
      push(repository, request('a2', 'x'), CALLER), // the same change again, on top of the one before: unchanged
      push(repository, request('a3', 'x'), { ...CALLER, ifMatch: head }), // the head moved before its turn: 412
      push(repository, { ...request('a4', 'x'), enableKeyCreation: false }, CALLER), // a new key without enableKeyCreation: refused
      push(repository, request('a5', 'x'), CALLER),
    ]);
    const [a1, a2, again, conditional, refused, a5] = results;
    expect(a1.status === 'fulfilled' && a1.value.kind).toBe('applied');
    expect(a2.status === 'fulfilled' && a2.value.kind).toBe('applied');
    expect(again.status === 'fulfilled' && again.value).toEqual({
      kind: 'unchanged',
      commitId: a2.status === 'fulfilled' && a2.value.kind === 'applied' ? a2.value.commitId : '',
    });
    expect(conditional.status).toBe('rejected');
    expect(conditional.status === 'rejected' && (conditional.reason as { code?: string }).code).toBe(
      'precondition_failed',
    );
    expect(refused.status === 'fulfilled' && refused.value.kind).toBe('refused');
    expect(a5.status === 'fulfilled' && a5.value.kind).toBe('applied');
    expect(git('log', '--format=%s', `${head}..main`).split('\n').reverse()).toEqual(['set a1', 'set a2', 'set a5']);
    expect(git('fsck', '--strict')).toBe('');
  });

  it(`starts a new group after ${MAX_GROUP} pushes`, async () => {
    const commits = countCommits();
    const results = await Promise.all(
      Array.from({ length: MAX_GROUP + 2 }, (_, i) => push(repository, request(`m${i}`, 'v'), CALLER)),
    );
    expect(results.every((r) => r.kind === 'applied')).toBe(true);
    // Arriving together: a full group, then the two left over.
    expect(commits).toHaveBeenCalledTimes(2);
    expect(git('rev-list', '--count', 'main')).toBe(String(Number(git('rev-list', '--count', 'main~34')) + 34));
  });
});
