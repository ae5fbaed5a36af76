/**
 * Strict UTF-8 decoding (src/lib/utf8.ts): valid text decodes unchanged, and the offset named
 * for invalid input is the first byte where no valid sequence begins, checked against Node's own
 * validator (Buffer.isUtf8) on random bytes and across the 64 KiB chunks the search decodes by.
 */
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeUtf8Strict, firstInvalidByte } from '../../../src/lib/utf8.js';
import { InvalidUtf8Error } from '../../../src/domain/errors.js';

/** True when `offset` is where a correct answer points: valid before it, and no sequence begins there. */
function isFirstInvalid(bytes: Uint8Array, offset: number): boolean {
  if (!isUtf8(bytes.subarray(0, offset))) return false;
  if (offset === bytes.length) return isUtf8(bytes);
  for (let length = 1; length <= 4; length++) if (isUtf8(bytes.subarray(offset, offset + length))) return false;
  return true;
}

function errorOf(bytes: Uint8Array): InvalidUtf8Error {
  try {
    decodeUtf8Strict(bytes);
  } catch (error) {
    if (error instanceof InvalidUtf8Error) return error;
    throw error;
  }
  throw new Error('decoded without an error');
}

describe('decodeUtf8Strict', () => {
  it('decodes valid text unchanged, a BOM and a literal U+FFFD included', () => {
    for (const text of ['', '{"a":"café €  😀"}', '\uFEFF{}', 'a\uFFFDb'])
      expect(decodeUtf8Strict(Buffer.from(text, 'utf8'))).toBe(text);
  });

  it('names the offset and value of the byte the ConfigHub Java client sends for é', () => {
    const body = Buffer.concat([
      Buffer.from('{"data":[{"key":"k","values":[{"value":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}]}]}'),
    ]);
    const error = errorOf(body);
    expect(error.offset).toBe(body.indexOf(0xe9));
    expect(error.byte).toBe(0xe9);
    expect(error.message).toBe(`byte 0xE9 at offset ${body.indexOf(0xe9)} does not begin a valid UTF-8 sequence`);
  });

  it.each([
    ['a lone continuation byte', [0x61, 0x80], 1],
    ['an overlong form', [0x61, 0xc0, 0x80], 1],
    ['an overlong three-byte form', [0xe0, 0x80, 0x80], 0],
    ['a surrogate', [0x61, 0x62, 0xed, 0xa0, 0x80], 2],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['a byte never used', [0x61, 0xff], 1],
    ['a sequence cut short by the end', [0x61, 0xe2, 0x82], 1],
    ['€ as the Java client sends it (0xAC)', [0x22, 0xac, 0x22], 1],
  ])('finds %s', (_, bytes, offset) => {
    expect(errorOf(Uint8Array.from(bytes)).offset).toBe(offset);
  });

  it('finds the first bad byte in random bytes, as Node validates them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        expect(isFirstInvalid(bytes, firstInvalidByte(bytes))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds the first bad byte in valid text with one byte changed, wherever it falls among the 64 KiB chunks', () => {
    const text = Buffer.from('aé€😀'.repeat(30_000), 'utf8'); // 300,000 bytes of 1- to 4-byte sequences
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length - 1 }), fc.integer({ min: 0x80, max: 0xff }), (at, byte) => {
        const bytes = Buffer.from(text);
        bytes[at] = byte;
        const offset = firstInvalidByte(bytes);
        if (isUtf8(bytes)) expect(offset).toBe(bytes.length);
        else expect(isFirstInvalid(bytes, offset)).toBe(true);
      }),
      { numRuns: 300 },
    );
    for (const at of [65_535, 65_536, 65_537, 131_071, 131_072]) {
      const bytes = Buffer.from(text);
      bytes[at] = 0xff;
      const offset = firstInvalidByte(bytes);
      expect(isFirstInvalid(bytes, offset), `0xFF at ${at}`).toBe(true);
      expect(at - offset).toBeGreaterThanOrEqual(0); // the lead byte of the sequence it breaks, at most 3 before
      expect(at - offset).toBeLessThanOrEqual(3);
    }
  });
});
