/**
 * The delta bases of all packs share one budget (deltaBases.ts); closing a pack drops its own
 * entries, and only its own, without looking through the others' (a server stopping
 * closes the packs of every repository it opened). A kept base holds its own bytes, not a view
 * into a larger buffer (Node's shared pool slab) that it would keep whole.
 */
import { describe, expect, it } from 'vitest';
import { DELTA_BASE_BYTES, PackBases } from '../../../src/disk/objects/deltaBases.js';

const blob = (bytes: number) => ({ type: 'blob' as const, content: Buffer.alloc(bytes, 1) });

describe('PackBases', () => {
  it("drops the entries of the pack closed, and keeps the others'", () => {
    const closed = new PackBases();
    const open = new PackBases();
    for (let offset = 0; offset < 100; offset++) {
      closed.set(offset, blob(10));
      open.set(offset, blob(10));
    }
    closed.clear();
    for (let offset = 0; offset < 100; offset++) {
      expect(closed.get(offset)).toBeUndefined();
      expect(open.get(offset)?.content.length).toBe(10);
    }
    open.clear();
    expect(open.get(0)).toBeUndefined();
  });

  it("keeps all packs' bases within one budget, and a pack closed after its bases were pushed out still closes", () => {
    const old = new PackBases();
    old.set(1, blob(1024));
    const big = new PackBases();
    const size = 1024 * 1024;
    for (let offset = 0; offset < (DELTA_BASE_BYTES / size) * 2; offset++) big.set(offset, blob(size));
    expect(old.get(1)).toBeUndefined(); // least recently used, pushed out
    expect(big.get((DELTA_BASE_BYTES / size) * 2 - 1)).toBeDefined();
    old.clear();
    big.clear();
    expect(big.get((DELTA_BASE_BYTES / size) * 2 - 1)).toBeUndefined();
  });

  it('keeps a base that is a view into a larger buffer as bytes of its own, and one that is not as it is', () => {
    const bases = new PackBases();
    const pooled = Buffer.from('a small tree read from a pack'); // under 4 KiB: a view into Node's 8 KiB pool
    expect(pooled.buffer.byteLength).toBeGreaterThan(pooled.length);
    const slab = Buffer.alloc(64 * 1024, 7);
    bases.set(1, { type: 'tree', content: pooled });
    bases.set(2, { type: 'blob', content: slab.subarray(100, 200) });
    const whole = Buffer.alloc(5000, 3);
    bases.set(3, { type: 'blob', content: whole });
    for (const [offset, expected] of [
      [1, pooled],
      [2, slab.subarray(100, 200)],
    ] as const) {
      const kept = bases.get(offset)!.content;
      expect(kept.equals(expected)).toBe(true);
      expect(kept.buffer.byteLength).toBe(kept.length);
    }
    expect(bases.get(1)!.type).toBe('tree');
    expect(bases.get(3)!.content).toBe(whole); // already its own: not copied
    bases.clear();
  });
});
