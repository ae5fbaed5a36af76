/**
 * Objects framed as zlib stored blocks (src/git/objectCompression.ts) inflate back to their
 * bytes with Node's zlib, which checks the Adler-32 too, at every size around the block limit;
 * large objects are deflated. inflateObject reads both kinds back, ignores what follows a
 * stream (the next pack entry) and refuses a corrupt one.
 */
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import {
  adler32,
  compressObject,
  DEFLATE_FROM_BYTES,
  inflateObject,
  storedZlib,
} from '../../../src/git/objectCompression.js';

describe('storedZlib', () => {
  for (const size of [0, 1, 1023, 1024, 1025, 65_534, 65_535, 65_536, 131_070, 131_071, 200_000]) {
    it(`frames ${size} bytes so that zlib inflates them back`, () => {
      const content = randomBytes(size);
      const framed = storedZlib(content);
      expect(inflateSync(framed).equals(content)).toBe(true);
      expect(framed.length).toBe(2 + 5 * Math.max(1, Math.ceil(size / 65_535)) + size + 4);
    });
  }

  it('ends with the Adler-32 zlib computes, for any bytes (all 0xff included: the largest sums)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5_000 }), (bytes) => {
        const content = Buffer.from(bytes);
        expect(inflateSync(storedZlib(content)).equals(content)).toBe(true);
      }),
    );
    const ones = Buffer.alloc(100_000, 0xff);
    expect(inflateSync(storedZlib(ones)).equals(ones)).toBe(true);
    expect(adler32(Buffer.from('Wikipedia'))).toBe(0x11e60398); // the example of RFC 1950's article
  });
});

describe('compressObject', () => {
  it('frames small objects and deflates large ones', () => {
    const small = Buffer.alloc(DEFLATE_FROM_BYTES - 1, 'a');
    const large = Buffer.alloc(DEFLATE_FROM_BYTES, 'a');
    expect(compressObject(small).length).toBeGreaterThan(small.length);
    expect(compressObject(large).length).toBeLessThan(large.length / 10);
    expect(inflateSync(compressObject(small)).equals(small)).toBe(true);
    expect(inflateSync(compressObject(large)).equals(large)).toBe(true);
  });

  it('puts the stream after a head in one buffer, for small and large objects alike', () => {
    const head = Buffer.from([0xb5, 0x02]); // a pack entry's header
    for (const content of [
      Buffer.alloc(0),
      Buffer.from('key: a\n'),
      randomBytes(70_000),
      Buffer.alloc(DEFLATE_FROM_BYTES, 'a'),
    ]) {
      const framed = compressObject(content, head);
      expect(framed.subarray(0, head.length).equals(head)).toBe(true);
      expect(framed.subarray(head.length).equals(compressObject(content))).toBe(true);
    }
  });
});

describe('inflateObject', () => {
  const trailing = Buffer.from('next entry of the pack');

  for (const size of [0, 1, 65_535, 65_536, 150_000]) {
    it(`reads ${size} bytes back from stored blocks and from a deflated stream, with bytes after the stream`, () => {
      const content = randomBytes(size);
      expect(inflateObject(Buffer.concat([storedZlib(content), trailing])).equals(content)).toBe(true);
      expect(inflateObject(Buffer.concat([deflateSync(content), trailing])).equals(content)).toBe(true);
      expect(inflateObject(deflateSync(content, { level: 0 })).equals(content)).toBe(true); // zlib's own stored blocks
    });
  }

  it('refuses stored blocks whose checksum does not match, or that end early', () => {
    const stream = storedZlib(Buffer.from('key: value\n'));
    const badSum = Buffer.from(stream);
    badSum[badSum.length - 1] ^= 1;
    expect(() => inflateObject(badSum)).toThrow(expect.objectContaining({ code: 'Z_DATA_ERROR' }));
    expect(() => inflateSync(badSum)).toThrow(expect.objectContaining({ code: 'Z_DATA_ERROR' })); // zlib's own report of it
    const badData = Buffer.from(stream);
    badData[8] ^= 1;
    expect(() => inflateObject(badData)).toThrow();
    expect(() => inflateObject(stream.subarray(0, stream.length - 6))).toThrow();
  });
});
