/**
 * Reading what another server sends, with its size bounded as it arrives: a body or a line over
 * the bound is refused at the chunk that crosses it, never held whole, and each byte is looked at
 * once (a line arriving in many chunks is not searched again from its start for every chunk, which
 * made a long line's cost grow with the square of its length).
 */

/** A body's or a line's size went over its bound. */
export class TooLarge extends Error {}

const NEWLINE = 0x0a;

/** Every byte of `chunks` as one text, refused (TooLarge, naming `what`) once it passes `limit` bytes. */
export async function readAtMost(
  chunks: AsyncIterable<Uint8Array> | null,
  limit: number,
  what: string,
  announced?: number,
): Promise<string> {
  const tooLarge = () => new TooLarge(`${what} is larger than ${limit} bytes`);
  if (announced !== undefined && announced > limit) throw tooLarge();
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks ?? []) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    parts.push(chunk);
  }
  return Buffer.concat(parts, size).toString('utf8');
}

/**
 * Newline-delimited lines from chunks: `add` returns the lines a chunk completes (without their
 * newline), and throws TooLarge once the line being received passes `limit` bytes. A newline byte
 * never occurs inside a multi-byte UTF-8 character, so lines are cut on bytes and decoded whole.
 */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private size = 0;

  constructor(
    private readonly limit: number,
    private readonly what: string,
  ) {}

  /** Bytes of the line being received so far. */
  get pending(): number {
    return this.size;
  }

  add(chunk: Uint8Array): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, end));
      lines.push(Buffer.concat(this.parts, this.size).toString('utf8'));
      this.parts = [];
      this.size = 0;
      start = end + 1;
    }
    if (start < chunk.byteLength) this.take(chunk.subarray(start));
    return lines;
  }

  private take(part: Uint8Array): void {
    this.size += part.byteLength;
    if (this.size > this.limit) throw new TooLarge(`${this.what} is larger than ${this.limit} bytes`);
    if (part.byteLength > 0) this.parts.push(part);
  }
}
