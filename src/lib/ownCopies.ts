/**
 * Copies that hold their own memory, for what a cache keeps for long: a short-lived view would
 * keep the whole of what it was cut from.
 */

/** V8's shortest sliced string: a shorter substring is a copy of its own. */
const SLICED_MIN_LENGTH = 13;

/**
 * A string that holds its own characters. V8 makes a substring of 13 or more characters a view
 * of the string it was cut from (a "sliced string"), so a value cut from a key document kept the
 * document's whole text alive as long as a snapshot held the value: 31 MB of document texts for
 * 100 repositories of 1,000 keys, a tenth of the server's memory.
 *
 * A short string is copied by concatenating and slicing (about 40 ns). A longer one goes through
 * JSON, whose parser makes a flat string of its own (about 200 ns, exact for every string, lone
 * surrogates too). Concatenating and slicing it too, as before 2026-11-27, made the slice a view
 * of the concatenation: each kept value a 32-byte view plus its own text again, 426,000 views
 * (13.6 MB) and their texts (16 MB) in a process holding 100 repositories of 1,000 keys.
 */
export function ownString(text: string): string {
  return text.length < SLICED_MIN_LENGTH ? ` ${text}`.slice(1) : (JSON.parse(JSON.stringify(text)) as string);
}

/**
 * `bytes` in memory of their own. A Buffer under 4 KiB is a view into one of Node's shared 8 KiB
 * pool slabs, and a kept view keeps its whole slab: delta bases counted as 16 MiB held 43 MB of
 * slabs (5,200 of them, 100 repositories of 1,000 keys, one pull each). Returned as it is when it
 * is its own already.
 */
export function ownBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const own = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(own);
  return own;
}
