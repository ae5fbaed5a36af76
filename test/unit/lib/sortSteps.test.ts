/** The merge sort in steps sorts as a stable Array.prototype.sort does, and yields on large lists. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortSteps } from '../../../src/lib/sortSteps.js';
import { runSteps } from '../../../src/lib/steps.js';

describe('sortSteps', () => {
  it('gives what a stable sort gives, leaving its input as it was', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 3 }), fc.nat()), { maxLength: 300 }), (items) => {
        const copy = items.map((item) => [...item]);
        const expected = [...items].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        expect(runSteps(sortSteps(items, (a, b) => a[0] < b[0]))).toEqual(expected);
        expect(items).toEqual(copy);
      }),
      { numRuns: 300 },
    );
  });

  it('yields while sorting a long list, and not at all for a short one', () => {
    const count = (items: number[]) => {
      const steps = sortSteps(items, (a, b) => a < b);
      let yields = 0;
      for (let next = steps.next(); !next.done; next = steps.next()) yields++;
      return yields;
    };
    const long = Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 40_000);
    expect(count(long)).toBeGreaterThan(100);
    expect(count([3, 1, 2])).toBe(0);
  });
});
