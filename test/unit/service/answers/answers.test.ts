/**
 * The read answers without HTTP (src/service/answers/answers.ts and watchHub.ts): an answer is
 * made once per commit and query; after a push, a pull of the present whose context the push did
 * not reach is carried (the answer before it, not made again), and one it reached is made; a read
 * of the past, or another endpoint, is never carried. A held watch is delivered the new answer
 * when a push reaches it, nothing when a push does not, and "nothing new" when its wait ends or
 * the hub closes. On a real bare repository, with the service's own push.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parsePushBody } from '../../../../src/api/pushBody.js';
import { RepositoryRegistry } from '../../../../src/disk/registry.js';
import type { GitRepository } from '../../../../src/disk/repository.js';
import { listen, type ReadCacheResult } from '../../../../src/lib/telemetry.js';
import { createRepository } from '../../../../src/service/admin/repositories.js';
import { ReadAnswers, type ReadQuery, type ReadRequest } from '../../../../src/service/answers/answers.js';
import { ReadCache } from '../../../../src/service/answers/readCache.js';
import { WatchHub, type WaitResult } from '../../../../src/service/answers/watchHub.js';
import { push } from '../../../../src/service/write/push.js';
import { tempDir } from '../../../support/paths.js';
import { holdsFor, until } from '../../../support/poll.js';

const NO_KEYS = { passwords: [], tokenKeys: [] };

function pullOf(context: string): ReadQuery {
  return {
    endpoint: 'pull',
    format: 'json',
    context,
    includeComments: false,
    includeValueContext: false,
    noProperties: false,
    noFiles: false,
    pretty: false,
  };
}

describe('read answers', () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  const results: ReadCacheResult[] = [];
  const unlisten = listen({ readCache: (result) => results.push(result) });

  /** Sets `key` for one context with the service's push; the new head. */
  async function set(key: string, context: string, value: string): Promise<string> {
    const parsed = parsePushBody({
      changeComment: `${key} for ${context}`,
      enableKeyCreation: true,
      data: [{ key, values: [{ context, value }] }],
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect((await push(repository, parsed.request, { forceKeyPush: false })).kind).toBe('applied');
    return repository.head();
  }

  /** The answer of a query at a commit, and how it was got (made, carried or from the cache). */
  async function answer(answers: ReadAnswers, query: ReadQuery, commitId: string, repoDate?: string) {
    results.length = 0;
    const read: ReadRequest = { repository, query, keys: NO_KEYS };
    const made = await answers.answerAt(read, commitId, repoDate);
    return { ...made.answer, text: made.answer.bytes.toString('utf8'), got: results.join() };
  }

  beforeAll(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), {
      account: 'acme',
      name: 'answers',
      levels: ['Env'],
    });
    await set('db.host', 'Production', 'db-1');
    await set('db.host', 'Development', 'localhost');
  });
  afterAll(() => {
    unlisten();
    dir.remove();
  });

  it('makes an answer once per commit and query, then serves it from the cache', async () => {
    const answers = new ReadAnswers();
    const head = repository.head();
    const first = await answer(answers, pullOf('Development'), head);
    expect(first.got).toBe('miss');
    expect(JSON.parse(first.text).properties['db.host'].val).toBe('localhost');
    const again = await answer(answers, pullOf('Development'), head);
    expect(again.got).toBe('hit');
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(again.etag).toBe(first.etag);
    expect(first.contentType).toBe('application/json; charset=utf-8');
  });

  it('carries the answer of a context a push did not reach, and makes the one it reached', async () => {
    const answers = new ReadAnswers();
    const before = repository.head();
    const development = await answer(answers, pullOf('Development'), before);
    const production = await answer(answers, pullOf('Production'), before);
    const after = await set('db.host', 'Production', 'db-2');

    const carried = await answer(answers, pullOf('Development'), after);
    expect(carried.got).toBe('carried'); // not made again
    expect(carried.bytes.equals(development.bytes)).toBe(true); // generatedOn included: the answer before, as it was
    expect(carried.etag).toBe(development.etag);
    const reached = await answer(answers, pullOf('Production'), after);
    expect(reached.got).toBe('miss');
    expect(JSON.parse(reached.text).properties['db.host'].val).toBe('db-2');
    expect(reached.etag).not.toBe(production.etag);
    // Carried once, then kept at the new commit like any answer.
    expect((await answer(answers, pullOf('Development'), after)).got).toBe('hit');
  });

  it('never carries a read of the past, nor an answer of another endpoint', async () => {
    const answers = new ReadAnswers();
    const before = repository.head();
    const exportQuery: ReadQuery = { endpoint: 'export', omitValues: false, omitFiles: false, pretty: false };
    await answer(answers, pullOf('Development'), before, '2026-01-01T00:00:00Z');
    await answer(answers, exportQuery, before);
    const after = await set('db.host', 'Production', 'db-4');
    expect((await answer(answers, pullOf('Development'), after, '2026-01-01T00:00:00Z')).got).toBe('miss');
    expect((await answer(answers, exportQuery, after)).got).toBe('miss');
  });

  it('makes the answer again when the one to carry is no longer in the cache', async () => {
    // A cache whose bytes hold no answer: each group's last commit is noted, its answer not kept.
    const answers = new ReadAnswers(new ReadCache(100, 10));
    const before = repository.head();
    expect((await answer(answers, pullOf('Development'), before)).got).toBe('miss');
    const after = await set('db.host', 'Production', 'db-5');
    expect((await answer(answers, pullOf('Development'), after)).got).toBe('miss');
  });

  describe('a held watch', () => {
    /** A hub of at most `max` watchers over fresh answers, and what it delivered, by handle. */
    function watching(max = 10) {
      const answers = new ReadAnswers();
      const delivered: Array<{ handle: string; result: WaitResult }> = [];
      const hub = new WatchHub<string>(answers, max, (handle, result) => delivered.push({ handle, result }));
      hubs.push(hub);
      /** What holding a pull of `context` at the head takes: its answer's group and ETag. */
      const watchOf = async (context: string, waitMs = 60_000) => {
        const read: ReadRequest = { repository, query: pullOf(context), keys: NO_KEYS };
        const head = repository.head();
        const made = await answers.answerAt(read, head);
        return { read, groupKey: made.groupKey, holds: [made.answer.etag], head, waitMs };
      };
      const hold = async (handle: string, context: string, waitMs?: number) =>
        hub.hold({ handle, ...(await watchOf(context, waitMs)) });
      return { hub, delivered, hold, watchOf };
    }
    const hubs: WatchHub<string>[] = [];
    afterEach(() => hubs.splice(0).forEach((hub) => hub.close()));

    it('is delivered the new answer when a push reaches it, and nothing when a push does not', async () => {
      const { hub, delivered, hold } = watching();
      await hold('production', 'Production');
      await hold('development', 'Development');
      expect(hub.size).toBe(2);
      await set('db.host', 'Production', 'db-3');
      await until(() => delivered.length === 1, 'the Production watch answered');
      const [woken] = delivered;
      expect(woken.handle).toBe('production');
      const answer = woken.result && 'answer' in woken.result ? woken.result.answer : undefined;
      expect(JSON.parse(answer!.bytes.toString()).properties['db.host'].val).toBe('db-3');
      await holdsFor(300, () => expect(delivered).toHaveLength(1)); // the Development watch is still held
      expect(hub.size).toBe(1);
    });

    it('is delivered "nothing new" when its wait ends, or at once when the hub closes', async () => {
      const { hub, delivered, hold } = watching();
      await hold('short', 'Development', 200);
      await until(() => delivered.length === 1, 'the wait ended');
      expect(delivered[0]).toEqual({ handle: 'short', result: undefined });
      await hold('held', 'Development');
      hub.close();
      await until(() => delivered.length === 2, 'the watch answered on close');
      expect(delivered[1]).toEqual({ handle: 'held', result: undefined });
      expect(hub.size).toBe(0);
    });

    it('takes none over its bound, and lets a watch leave without an answer', async () => {
      const { hub, delivered, watchOf } = watching(1);
      const watch = await watchOf('Production');
      const held = hub.hold({ handle: 'one', ...watch });
      expect(hub.full).toBe(true);
      expect(hub.hold({ handle: 'two', ...watch })).toBeUndefined();
      // The one held leaves (its client went away): delivered nothing new, and the hub has room again.
      held!.leave();
      await until(() => hub.size === 0, 'the watch gone');
      expect(delivered).toEqual([{ handle: 'one', result: undefined }]);
      expect(hub.full).toBe(false);
    });
  });
});
