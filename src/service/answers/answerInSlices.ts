/**
 * JSON answers serialized, encoded and hashed in slices: the text of `JSON.stringify`
 * made piece by piece (src/lib/jsonSteps.ts), encoded to UTF-8 and fed to the ETag's hash
 * every CHUNK_CHARS characters, with the event loop given to other requests every few ms
 * (TimeSlices). In one piece, the largest allowed answer (8 Mi characters of rendered files)
 * held every other request for 0.8 s on a loaded machine: two JSON.stringify calls (the text and
 * the content its ETag is made of), the encoding and the hash. Here the text is made once.
 */
import { createHash, type Hash } from 'node:crypto';
import { jsonSteps } from '../../lib/jsonSteps.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Answer } from './readCache.js';

/** Characters gathered before they are encoded and hashed: a fraction of a millisecond's work. */
const CHUNK_CHARS = 64 * 1024;

const MEDIA_TYPE = 'application/json';

/** Pieces of text gathered into UTF-8 chunks, each hashed as it is made. */
class EncodedText {
  private pieces: string[] = [];
  private length = 0;
  readonly chunks: Buffer[] = [];
  readonly hash: Hash = createHash('sha1').update(MEDIA_TYPE).update('\0');

  add(piece: string): void {
    this.pieces.push(piece);
    this.length += piece.length;
    if (this.length >= CHUNK_CHARS) this.flush();
  }

  /** Pieces never split a surrogate pair (jsonSteps), so encoding them in chunks gives the bytes of the whole. */
  flush(): void {
    if (this.pieces.length === 0) return;
    const chunk = Buffer.from(this.pieces.join(''), 'utf8');
    this.hash.update(chunk);
    this.chunks.push(chunk);
    this.pieces = [];
    this.length = 0;
  }

  /**
   * The chunks (and `tail`) in one buffer, copied chunk by chunk in slices: in one
   * `Buffer.concat`, the largest answer's 8 MB copy held the event loop for 5 ms after the
   * slice that made its last piece.
   */
  async joined(slices: TimeSlices, tail?: Buffer): Promise<Buffer> {
    this.flush();
    const parts = tail === undefined ? this.chunks : [...this.chunks, tail];
    if (parts.length === 1) return parts[0];
    const whole = Buffer.allocUnsafe(parts.reduce((sum, part) => sum + part.length, 0));
    let at = 0;
    for (const part of parts) {
      at += part.copy(whole, at);
      const paused = slices.pause();
      if (paused) await paused;
    }
    return whole;
  }
}

const answer = (bytes: Buffer, hash: Hash): Answer => ({
  bytes,
  contentType: `${MEDIA_TYPE}; charset=utf-8`,
  etag: `"${hash.digest('hex')}"`,
});

/** The answer `answerOf(JSON.stringify(body[, null, 2]), 'application/json')` gives, made in slices. */
export async function jsonAnswer(body: unknown, pretty: boolean, slices = new TimeSlices()): Promise<Answer> {
  const text = new EncodedText();
  await slices.run(jsonSteps(body, pretty, (piece) => text.add(piece)));
  return answer(await text.joined(slices), text.hash);
}

/**
 * A pull's answer: the JSON of `body` with `generatedOn` as its last member, its ETag made of the
 * content alone (`body` without `generatedOn`) as `answerOf(text, type, content)` does.
 * The text is made once: the content's closing brace is held back from the answer's bytes (but
 * hashed), and `generatedOn` is written before it.
 */
export async function pullAnswer(
  body: Record<string, unknown>,
  pretty: boolean,
  generatedOn: string,
  slices = new TimeSlices(),
): Promise<Answer> {
  const text = new EncodedText();
  let held: string | undefined;
  await slices.run(
    jsonSteps(body, pretty, (piece) => {
      if (held !== undefined) text.add(held);
      held = piece;
    }),
  );
  text.flush();
  // The last piece closes the top object: `}` (compact, or no member) or `\n}` (pretty).
  const closing = held!;
  text.hash.update(closing);
  const hasMembers = Object.values(body).some(
    (value) => value !== undefined && typeof value !== 'function' && typeof value !== 'symbol',
  );
  const member = pretty
    ? `\n  "generatedOn": ${JSON.stringify(generatedOn)}\n}`
    : `"generatedOn":${JSON.stringify(generatedOn)}}`;
  const tail = `${hasMembers ? ',' : ''}${member}`;
  return answer(await text.joined(slices, Buffer.from(tail, 'utf8')), text.hash);
}
