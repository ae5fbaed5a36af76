/**
 * The zlib stream of a git object's data in a pack. Git accepts any valid zlib stream there, so
 * small objects (key documents, trees, commits: nearly all a push writes) are framed as zlib
 * "stored" blocks, uncompressed, and only large ones are deflated.
 *
 * Why: Node's deflateSync costs about 30 µs per call whatever the size (it builds a stream
 * object and a zlib state each time), which made deflating 5.5 of the 18 ms of a 100-key push
 * into 10,000 keys; framing the same objects costs 0.4 ms. The price is disk: those objects take
 * about twice the bytes (a key document or tree of a few hundred bytes to 2 KiB). `git gc
 * --aggressive` or `git repack -a -d -F` recompresses a repository whenever its size matters.
 * Reading such a stream back is a copy and a checksum (`inflateObject`), again without a zlib call.
 */
import { deflateSync, inflateSync } from 'node:zlib';

/** From this size on, an object is deflated: one call's cost is small against the bytes it saves. */
export const DEFLATE_FROM_BYTES = 8 * 1024;
/** zlib's smallest output buffer (zlib.constants.Z_MIN_CHUNK). */
const MIN_CHUNK = 64;
/** The largest stored block zlib allows. */
const BLOCK = 0xffff;
/** CMF 0x78 (deflate, 32 KiB window), FLG 0x01: no dictionary, fastest level, header check bits. */
const HEADER = [0x78, 0x01];

const NOTHING = Buffer.alloc(0);

/**
 * `content`'s zlib stream, after `head` in the same buffer (a pack entry is its header, then its
 * data: one buffer made, not two and their concatenation).
 */
export function compressObject(content: Buffer, head: Uint8Array = NOTHING): Buffer {
  if (content.length < DEFLATE_FROM_BYTES) return storedZlib(content, head);
  const deflated = deflateSync(content, { level: 1 });
  return head.length === 0 ? deflated : Buffer.concat([head, deflated]);
}

/** `content` as a zlib stream of stored (uncompressed) blocks, RFC 1950 and RFC 1951 section 3.2.4, after `head`. */
export function storedZlib(content: Buffer, head: Uint8Array = NOTHING): Buffer {
  const blocks = Math.max(1, Math.ceil(content.length / BLOCK));
  const out = Buffer.allocUnsafe(head.length + HEADER.length + blocks * 5 + content.length + 4);
  out.set(head, 0);
  let at = head.length;
  out[at++] = HEADER[0];
  out[at++] = HEADER[1];
  for (let block = 0; block < blocks; block++) {
    const start = block * BLOCK;
    const length = Math.min(BLOCK, content.length - start);
    out[at] = block === blocks - 1 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    out.writeUInt16LE(length, at + 1);
    out.writeUInt16LE(length ^ 0xffff, at + 3);
    at += 5;
    content.copy(out, at, start, start + length);
    at += length;
  }
  out.writeUInt32BE(adler32(content), at);
  return out;
}

/** The Adler-32 checksum zlib ends a stream with (RFC 1950 section 8). */
export function adler32(data: Buffer): number {
  const MOD = 65521;
  // Reducing every 1,024 bytes keeps both sums below 2^30: small integers, V8's fastest numbers.
  const RUN = 1_024;
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length;) {
    const end = Math.min(data.length, i + RUN);
    for (; i < end; i++) {
      a += data[i];
      b += a;
    }
    a %= MOD;
    b %= MOD;
  }
  return ((b << 16) | a) >>> 0;
}

/**
 * The data of a zlib stream that starts at `stream[0]` (what follows its end is ignored, as
 * zlib does). Streams of stored blocks are copied out and their Adler-32 checked here; any
 * other stream goes to zlib. A corrupt stream throws either way.
 *
 * `size`, the inflated size a pack entry announces, sizes zlib's output buffer: by default each
 * call allocates 16 KiB for objects that are mostly under 200 bytes in a packed history (deltas),
 * which made a page of history spend more time collecting that garbage than inflating. A wrong
 * size costs only speed: zlib then adds buffers as it needs.
 */
export function inflateObject(stream: Buffer, size?: number): Buffer {
  const stored = storedBlocks(stream);
  if (!stored)
    return size === undefined ? inflateSync(stream) : inflateSync(stream, { chunkSize: Math.max(MIN_CHUNK, size + 1) }); // + 1: the output fits with room left, so zlib ends in one call
  const content = stored.length === 1 ? Buffer.from(stored[0]) : Buffer.concat(stored);
  const end = 2 + stored.reduce((sum, block) => sum + 5 + block.length, 0);
  if (end + 4 > stream.length || stream.readUInt32BE(end) !== adler32(content)) {
    // As zlib itself reports it, so callers handle a bad stored stream like a bad deflated one.
    throw Object.assign(new Error('incorrect data check'), { code: 'Z_DATA_ERROR' });
  }
  return content;
}

/** The blocks of a zlib stream made only of stored blocks (no dictionary), or undefined for any other stream. */
function storedBlocks(stream: Buffer): Buffer[] | undefined {
  if (stream.length < 7 || (stream[0] & 0x0f) !== 8 || stream[1] & 0x20 || ((stream[0] << 8) | stream[1]) % 31 !== 0)
    return undefined;
  const blocks: Buffer[] = [];
  let at = 2;
  for (;;) {
    if (at + 5 > stream.length) return undefined;
    const head = stream[at];
    if (head & 0x06) return undefined; // BTYPE not 00: compressed, zlib's work
    const length = stream.readUInt16LE(at + 1);
    if ((length ^ 0xffff) !== stream.readUInt16LE(at + 3) || at + 5 + length > stream.length) return undefined;
    blocks.push(stream.subarray(at + 5, at + 5 + length));
    at += 5 + length;
    if (head & 1) return blocks; // BFINAL
  }
}
