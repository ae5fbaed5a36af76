/**
 * `ownString` (ownCopies.ts) gives the same string, holding its own characters and nothing more:
 * not a view into the text it was cut from, nor a view into a copy made on the way (a 32-byte
 * view plus the copy, which the old concatenate-and-slice copy made of every string of 13 or more
 * characters). Measured in a child process with `--expose-gc`, so the heap's size is exact.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownString } from '../../../src/lib/ownCopies.js';

const OWN_COPIES = fileURLToPath(new URL('../../../src/lib/ownCopies.ts', import.meta.url));
const STRINGS = 100_000;
const LENGTH = 24;

/**
 * Heap bytes per string of LENGTH characters cut from a longer line and kept, three ways: through
 * ownString, as a flat copy made through a Buffer (the least it can take), and as the old copy
 * (concatenate and slice), which the measure must tell apart from the flat one. Each after a
 * throwaway round, so that the collections measure only the strings.
 */
function bytesPerKeptString(): { own: number; flat: number; viewOfCopy: number } {
  const script = `
    import { ownString } from ${JSON.stringify(OWN_COPIES)};
    const cut = (i) => ('value: ' + (i.toString(36) + 'abcdefghijklmnopqrstuvwxyz').slice(0, ${LENGTH}) + ' # a comment').slice(7, 7 + ${LENGTH});
    function measure(make) {
      let kept = new Array(${STRINGS});
      globalThis.gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < ${STRINGS}; i++) kept[i] = make(cut(i));
      globalThis.gc();
      const bytes = (process.memoryUsage().heapUsed - before) / ${STRINGS};
      if (kept.some((s, i) => s !== cut(i))) throw new Error('a kept string differs');
      kept = null;
      return bytes;
    }
    measure(ownString);
    const flat = measure((s) => Buffer.from(s, 'latin1').toString('latin1'));
    const own = measure(ownString);
    const viewOfCopy = measure((s) => (' ' + s).slice(1));
    console.log(JSON.stringify({ own, flat, viewOfCopy }));
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out.trim()) as { own: number; flat: number; viewOfCopy: number };
}

describe('ownString', () => {
  it('gives the very same text, whatever its characters', () => {
    for (const text of [
      '',
      'a',
      'twelve chars',
      'thirteen char',
      'ünïcödé and more than thirteen',
      '😀 emoji, long enough here',
      'lone \ud800 surrogate, long enough',
      'quote " and backslash \\ inside',
    ]) {
      expect(ownString(text)).toBe(text);
    }
  });

  it('keeps a string of 24 characters in its own 40 bytes, not a view and a copy', () => {
    const { own, flat, viewOfCopy } = bytesPerKeptString();
    // Flat: a 16-byte header and 24 characters, plus the array's slot: about 48 bytes.
    // A view of a copy: 32 bytes of view, the copy (40), the slot: about 80.
    expect(viewOfCopy - flat).toBeGreaterThan(24); // the measure tells the two apart
    expect(own - flat).toBeLessThan(12);
  }, 60_000);
});
