/**
 * `ownString` (ownCopies.ts) gives the same string, holding its own characters and nothing more:
 * not a view into the text it was cut from, nor a view into a copy made on the way (a 32-byte
 * view plus the copy, which the old concatenate-and-slice copy made of every string of 13 or more
 * characters). Measured in a child process with `--expose-gc`, so the heap's size is exact.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownString } from '../../src/layout/ownCopies.js';

const OWN_COPIES = fileURLToPath(new URL('../../src/layout/ownCopies.ts', import.meta.url));
const STRINGS = 100_000;
const LENGTH = 24;

/** Heap bytes per string of LENGTH characters cut from a longer line and kept through ownString. */
function bytesPerKeptString(): number {
  const script = `
    import { ownString } from ${JSON.stringify(OWN_COPIES)};
    const kept = new Array(${STRINGS});
    globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < ${STRINGS}; i++) {
      const line = 'value: ' + (i.toString(36) + 'abcdefghijklmnopqrstuvwxyz').slice(0, ${LENGTH}) + ' # a comment';
      kept[i] = ownString(line.slice(7, 7 + ${LENGTH}));
    }
    globalThis.gc();
    console.log((process.memoryUsage().heapUsed - before) / ${STRINGS}, kept.every((s) => s.length === ${LENGTH}));
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const [bytes, lengths] = out.trim().split(' ');
  expect(lengths).toBe('true');
  return Number(bytes);
}

describe('ownString', () => {
  it('gives the very same text, whatever its characters', () => {
    for (const text of ['', 'a', 'twelve chars', 'thirteen char', 'ünïcödé and more than thirteen', '😀 emoji, long enough here', 'lone \ud800 surrogate, long enough', 'quote " and backslash \\ inside']) {
      expect(ownString(text)).toBe(text);
    }
  });

  it('keeps a string of 24 characters in its own 40 bytes, not a view and a copy', () => {
    // Own: a 16-byte header and 24 characters (40 bytes), plus the array's slot (8).
    // A view of a copy: 32 bytes of view, the copy (48), the slot: about 88.
    expect(bytesPerKeptString()).toBeLessThan(64);
  }, 60_000);
});
