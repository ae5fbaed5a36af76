/**
 * Strict UTF-8 decoding of request bodies. A body that is not valid UTF-8 is refused, never
 * decoded with replacement characters: the published ConfigHub Java client writes its bodies
 * with DataOutputStream.writeBytes, which keeps only the low byte of each character, so a
 * non-ASCII `é` arrives as the lone byte 0xE9, and a lenient decoder would store `caf\uFFFD`.
 */
import { InvalidUtf8Error } from '../domain/errors.js';

// Fatal decoders throw on the first invalid sequence; ignoreBOM keeps a BOM in the text (as
// Buffer#toString does), so a body that begins with one stays invalid JSON rather than changing.
const whole = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How much of an invalid body is decoded natively at a time while looking for the bad byte. */
const CHUNK = 64 * 1024;

/** The text of a body, or InvalidUtf8Error naming its first invalid byte. */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  try {
    return whole.decode(bytes);
  } catch {
    const offset = firstInvalidByte(bytes);
    throw new InvalidUtf8Error(offset, bytes[offset]);
  }
}

/**
 * The offset of the first byte that does not begin a valid UTF-8 sequence (Unicode table 3-7:
 * no overlong forms, no surrogates, nothing above U+10FFFF; a sequence cut short by the end
 * counts as invalid at its first byte). Bounded work whatever the size: the chunk holding the
 * error is found by native decoding, and only that chunk is walked byte by byte.
 * Returns bytes.length when the whole input is valid.
 */
export function firstInvalidByte(bytes: Uint8Array): number {
  const streaming = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let start = 0;
  for (; start < bytes.length; start += CHUNK) {
    const end = Math.min(start + CHUNK, bytes.length);
    try {
      streaming.decode(bytes.subarray(start, end), { stream: end < bytes.length });
    } catch {
      break;
    }
  }
  if (start >= bytes.length) return bytes.length;
  // Everything before `start` decoded, but up to 3 bytes of a sequence may have been held back
  // at the chunk's edge: walk back over continuation bytes to that sequence's first byte.
  let from = start;
  while (from > 0 && start - from < 3 && isContinuation(bytes[from - 1])) from--;
  if (from > 0 && !isContinuation(bytes[from - 1]) && bytes[from - 1] >= 0xc0) from--;
  return walk(bytes, from, Math.min(start + CHUNK, bytes.length));
}

const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/** Walks sequences from a sequence boundary `from`; the first one that is invalid, or `to`. */
function walk(bytes: Uint8Array, from: number, to: number): number {
  let i = from;
  while (i < to) {
    const length = sequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return Math.min(i, bytes.length);
}

/** The length of the valid sequence that begins at `i`, or 0 when none does. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i];
  if (lead < 0x80) return 1;
  // The allowed range of the second byte depends on the lead (this rules out overlong forms,
  // surrogates and code points above U+10FFFF); later bytes are plain continuation bytes.
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (i + length > bytes.length) return 0;
  const second = bytes[i + 1];
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k++) if (!isContinuation(bytes[i + k])) return 0;
  return length;
}
