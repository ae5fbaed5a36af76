import { describe, expect, it } from 'vitest';
import {
  CacheSlot,
  COMMIT_BYTES_KEPT,
  PEELED_TAGS_KEPT,
  RepositoryCaches,
  SNAPSHOTS_KEPT,
} from '../../../src/layout/repositoryCaches.js';
import type { Snapshot } from '../../../src/layout/snapshot.js';

describe("a repository's caches", () => {
  it('keep a bounded number of snapshots, and forget the built copy of one that went', () => {
    const caches = new RepositoryCaches();
    const snapshot = {} as Snapshot;
    for (let i = 0; i <= SNAPSHOTS_KEPT; i++) {
      caches.snapshots.set(`c${i}`, Promise.resolve(snapshot));
      caches.built.set(`c${i}`, snapshot);
    }
    expect(caches.snapshots.size).toBe(SNAPSHOTS_KEPT);
    expect(caches.snapshots.has('c0')).toBe(false);
    expect(caches.built.has('c0')).toBe(false);
    expect(caches.built.size).toBe(SNAPSHOTS_KEPT);
  });

  it("keep a snapshot's built copy when the same commit's snapshot is set again", () => {
    const caches = new RepositoryCaches();
    const snapshot = {} as Snapshot;
    caches.snapshots.set('c', Promise.resolve(snapshot));
    caches.built.set('c', snapshot);
    caches.snapshots.set('c', Promise.resolve(snapshot));
    expect(caches.built.get('c')).toBe(snapshot);
  });

  it('bound parsed commits by bytes, so long messages cannot fill memory', () => {
    const caches = new RepositoryCaches();
    const message = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 64; i++) {
      caches.commits.set(`c${i}`, {
        tree: 't',
        parents: [],
        committedAt: 0,
        author: { name: 'a', email: 'e' },
        message,
      });
    }
    expect(caches.commits.calculatedSize).toBeLessThanOrEqual(COMMIT_BYTES_KEPT);
    expect(caches.commits.has('c63')).toBe(true);
    expect(caches.commits.has('c0')).toBe(false);
  });

  it('bound peeled tags and the caches of layers above by entries', () => {
    const caches = new RepositoryCaches();
    for (let i = 0; i <= PEELED_TAGS_KEPT; i++) caches.peeledTags.set(`t${i}`, { peeled: null });
    expect(caches.peeledTags.size).toBe(PEELED_TAGS_KEPT);
    const slot = new CacheSlot<{ n: number }>('test', 3);
    for (let n = 0; n < 5; n++) caches.slot(slot).set(`k${n}`, { n });
    expect(caches.slot(slot).size).toBe(3);
    expect(caches.slot(slot).get('k4')).toEqual({ n: 4 });
  });
});
