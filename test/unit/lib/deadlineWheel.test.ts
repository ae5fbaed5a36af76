/**
 * The timing wheel that ends held watches (src/lib/deadlineWheel.ts): a wait never ends before
 * its delay, ends within one tick after it, a deleted entry never expires, and the wheel's one
 * timer runs only while it holds something.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineWheel } from '../../../src/lib/deadlineWheel.js';

interface Item {
  readonly name: string;
  tick: number;
}

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

describe('the deadline wheel', () => {
  it('expires each entry between its delay and one tick after, never before, and not a deleted one', () => {
    const expired: string[] = [];
    const wheel = new DeadlineWheel<Item>((item) => expired.push(item.name), 100, 310_000);
    const soon: Item = { name: 'soon', tick: 0 };
    const later: Item = { name: 'later', tick: 0 };
    const gone: Item = { name: 'gone', tick: 0 };
    const longest: Item = { name: 'longest', tick: 0 };
    wheel.add(soon, 250);
    wheel.add(later, 1_000);
    wheel.add(gone, 500);
    wheel.add(longest, 300_000);
    expect(wheel.size).toBe(4);
    expect(wheel.delete(gone)).toBe(true);
    expect(wheel.delete(gone)).toBe(false);

    vi.advanceTimersByTime(249);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(101); // 350 ms: due at 250, within a tick
    expect(expired).toEqual(['soon']);
    vi.advanceTimersByTime(600); // 950 ms
    expect(expired).toEqual(['soon']);
    vi.advanceTimersByTime(150); // 1,100 ms
    expect(expired).toEqual(['soon', 'later']);
    vi.advanceTimersByTime(298_800); // 299,900 ms
    expect(expired).toEqual(['soon', 'later']);
    vi.advanceTimersByTime(200); // 300,100 ms
    expect(expired).toEqual(['soon', 'later', 'longest']);
    expect(wheel.size).toBe(0);
  });

  it('runs its timer only while it holds something, and refuses a delay longer than its span', () => {
    const wheel = new DeadlineWheel<Item>(() => undefined, 100, 1_000);
    const item: Item = { name: 'one', tick: 0 };
    expect(vi.getTimerCount()).toBe(0);
    wheel.add(item, 500);
    expect(vi.getTimerCount()).toBe(1);
    wheel.delete(item);
    expect(vi.getTimerCount()).toBe(0);
    expect(() => wheel.add({ name: 'too long', tick: 0 }, 2_000)).toThrow(RangeError);
  });
});
