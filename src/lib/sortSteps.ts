/**
 * A stable merge sort written as steps (steps.ts), for lists whose length grows with a repository:
 * `Array.prototype.sort` with a comparator sorted a pull's 40,000 keys in 50 ms of one piece of
 * the event loop on a new server (18 to 21 ms once compiled). Bottom-up, so no recursion; it
 * yields once about every YIELD_EVERY elements merged, and the longest stretch between two yields
 * is one merge of two runs (a fraction of a millisecond for 40,000 elements).
 */
import type { Steps } from './steps.js';

const YIELD_EVERY = 4096;

/** `items` sorted (a new array; `items` is left as it is), `before(a, b)` true when a goes first. */
export function* sortSteps<T>(items: readonly T[], before: (a: T, b: T) => boolean): Steps<T[]> {
  let from = items.slice();
  let to = new Array<T>(from.length);
  let merged = 0;
  for (let width = 1; width < from.length; width *= 2) {
    for (let low = 0; low < from.length; low += 2 * width) {
      const middle = Math.min(low + width, from.length);
      const high = Math.min(low + 2 * width, from.length);
      let left = low;
      let right = middle;
      let out = low;
      // Stable: the right run's element goes first only when strictly before the left's.
      while (left < middle && right < high) to[out++] = before(from[right], from[left]) ? from[right++] : from[left++];
      while (left < middle) to[out++] = from[left++];
      while (right < high) to[out++] = from[right++];
      merged += high - low;
      if (merged >= YIELD_EVERY) {
        merged = 0;
        yield;
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
