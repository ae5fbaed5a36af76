/**
 * The read cache (src/service/answers/readCache.ts): least recently used out first, bounded in entries and in
 * bytes, and a kept answer holds its own bytes, not a view into a shared pool slab that it would
 * keep whole (ownCopies.ts).
 */
import { describe, expect, it } from 'vitest';
import { answerOf, ReadCache } from '../../../../src/service/answers/readCache.js';

describe('ReadCache', () => {
  it("keeps a small answer (a view into Node's 8 KiB pool) as bytes of its own, with the same bytes and ETag", () => {
    const cache = new ReadCache();
    const answer = answerOf('{"a":1}', 'application/json');
    expect(answer.bytes.buffer.byteLength).toBeGreaterThan(answer.bytes.length); // pooled
    cache.set('k', answer);
    const kept = cache.get('k')!;
    expect(kept.bytes.equals(answer.bytes)).toBe(true);
    expect(kept.bytes.buffer.byteLength).toBe(kept.bytes.length);
    expect({ etag: kept.etag, contentType: kept.contentType }).toEqual({
      etag: answer.etag,
      contentType: answer.contentType,
    });
  });

  it('drops the least recently used answer past its bounds in entries and in bytes', () => {
    const byEntries = new ReadCache(2, 1_000);
    for (const key of ['a', 'b']) byEntries.set(key, answerOf(key, 'text/plain'));
    byEntries.get('a'); // now b is the least recently used
    byEntries.set('c', answerOf('c', 'text/plain'));
    expect(
      [byEntries.get('a'), byEntries.get('b'), byEntries.get('c')].map((answer) => answer?.bytes.toString()),
    ).toEqual(['a', undefined, 'c']);

    const byBytes = new ReadCache(100, 10);
    byBytes.set('a', answerOf('123456', 'text/plain'));
    byBytes.set('b', answerOf('7890', 'text/plain'));
    byBytes.set('c', answerOf('x', 'text/plain')); // 11 bytes: a goes
    expect(byBytes.get('a')).toBeUndefined();
    expect(byBytes.get('b')?.bytes.toString()).toBe('7890');
    byBytes.set('big', answerOf('x'.repeat(11), 'text/plain')); // over the whole bound: not kept
    expect(byBytes.get('big')).toBeUndefined();
  });
});
