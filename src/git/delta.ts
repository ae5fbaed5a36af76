/**
 * Git's delta format (pack entries of type OFS_DELTA and REF_DELTA, which `git repack` and
 * `git gc` write): the sizes of base and result, then instructions that copy a range of the base
 * or insert literal bytes.
 */
import { DeltaFormatError } from './errors.js';

/**
 * Copies below this many bytes are made byte by byte: `Buffer.copy` and `Uint8Array.set` each
 * make a view and check their arguments, which cost more than the copy itself for the few bytes
 * most instructions of a tree's or a key document's delta move (a tenth of a history
 * page read from a repacked repository).
 */
const SHORT_COPY = 64;

function copyBytes(from: Buffer, start: number, size: number, to: Buffer, at: number): void {
  if (size < SHORT_COPY) {
    for (let i = 0; i < size; i++) to[at + i] = from[start + i];
  } else {
    from.copy(to, at, start, start + size);
  }
}

function readSize(delta: Buffer, at: { position: number }): number {
  let size = 0;
  let shift = 0;
  let byte: number;
  do {
    byte = delta[at.position++];
    size += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return size;
}

export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  const at = { position: 0 };
  if (readSize(delta, at) !== base.length) throw new DeltaFormatError('delta base size does not match its base');
  const result = Buffer.allocUnsafe(readSize(delta, at));
  let written = 0;
  while (at.position < delta.length) {
    const op = delta[at.position++];
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset += delta[at.position++] * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (0x10 << bit)) size += delta[at.position++] << (8 * bit);
      if (size === 0) size = 0x10000;
      if (offset + size > base.length || written + size > result.length)
        throw new DeltaFormatError('delta copies past its base or result');
      copyBytes(base, offset, size, result, written);
      written += size;
    } else if (op !== 0) {
      if (at.position + op > delta.length || written + op > result.length)
        throw new DeltaFormatError('delta inserts past its end');
      copyBytes(delta, at.position, op, result, written);
      written += op;
      at.position += op;
    } else {
      throw new DeltaFormatError('delta holds the reserved instruction 0');
    }
  }
  if (written !== result.length) throw new DeltaFormatError('delta result is shorter than announced');
  return result;
}
