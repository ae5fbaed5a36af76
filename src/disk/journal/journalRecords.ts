/**
 * The byte format of the push journal (pushJournal.ts): pure, no file calls.
 *
 * A journal file starts with a header of HEADER_BYTES: the line `cfghub push journal v1`, then the
 * holder note of the process that writes it (lockHolder.ts), padded with zeros. Records follow,
 * one after another:
 *
 *     "CFJR" | seq (u32) | body length (u32) | SHA-1 of seq, length and body (20 bytes) | body
 *     body = meta length (u32) | meta (JSON) | pack bytes | pack index bytes
 *
 * A record is voided by rewriting its first four bytes as "CFJX" (voidRecordBytes): it keeps its
 * place in the chain and is never replayed. A record counts only if its checksum holds and its seq is one more than the record before it:
 * a torn write at the end, zeros of a preallocated tail, or an older record found after a newer,
 * shorter one, all end the journal there.
 */
import { createHash } from 'node:crypto';

export const HEADER_BYTES = 4096;
const HEADER_LINE = 'cfghub push journal v1\n';
const MAGIC = 0x43464a52; // "CFJR"
/** A record whose push failed after it was written (its fdatasync or its ref's rename): kept for the chain of seqs, never replayed. */
const VOID_MAGIC = 0x43464a58; // "CFJX"
const RECORD_HEAD = 4 + 4 + 4 + 20;
/** A record's body at most: the largest push's pack is far below (README Limits). */
export const MAX_BODY = 1 << 30;

/** What a record says: a ref moved from `old` to `new` in one repository, and the pack that holds the new commits. */
export interface JournalEntry {
  /** The repository's folder relative to the repositories folder: `<account>/<name>.git`. */
  readonly repository: string;
  readonly ref: string;
  readonly old: string;
  readonly new: string;
  /** The ref's file as it was when the lock was taken (refStamp in refs.ts): replay moves only a ref still so. */
  readonly before: string;
  /** The ref's file as the move leaves it (the lock file renamed over it). */
  readonly after: string;
  /** `pack-<sha1>`: the pack's file name without its ending. */
  readonly packName: string;
  readonly pack: Uint8Array;
  readonly index: Uint8Array;
}

export interface JournalRecord {
  readonly seq: number;
  readonly entry: JournalEntry;
  /** Where the record starts in the file, and its length. */
  readonly offset: number;
  readonly length: number;
}

export function encodeHeader(holderNote: string): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write(HEADER_LINE + holderNote, 'utf8');
  return header;
}

/** The holder note of a journal's header, or undefined if the header is not a journal's. */
export function decodeHeader(header: Uint8Array): string | undefined {
  const text = Buffer.from(header.buffer, header.byteOffset, Math.min(header.length, HEADER_BYTES)).toString('utf8');
  if (!text.startsWith(HEADER_LINE)) return undefined;
  const end = text.indexOf('\0');
  return text.slice(HEADER_LINE.length, end < 0 ? undefined : end);
}

function checksum(seq: number, length: number, body: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(seq, 0);
  head.writeUInt32BE(length, 4);
  return createHash('sha1').update(head).update(body).digest();
}

/** The bytes that, written at a record's offset, void it. */
export function voidRecordBytes(): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(VOID_MAGIC, 0);
  return bytes;
}

export function encodeRecord(seq: number, entry: JournalEntry): Buffer {
  const { pack, index, ...rest } = entry;
  const meta = Buffer.from(JSON.stringify({ ...rest, packBytes: pack.length, indexBytes: index.length }), 'utf8');
  const bodyLength = 4 + meta.length + pack.length + index.length;
  const record = Buffer.allocUnsafe(RECORD_HEAD + bodyLength);
  record.writeUInt32BE(MAGIC, 0);
  record.writeUInt32BE(seq, 4);
  record.writeUInt32BE(bodyLength, 8);
  let at = RECORD_HEAD;
  record.writeUInt32BE(meta.length, at);
  at += 4;
  at += meta.copy(record, at);
  record.set(pack, at);
  at += pack.length;
  record.set(index, at);
  checksum(seq, bodyLength, record.subarray(RECORD_HEAD)).copy(record, 12);
  return record;
}

const HEX40 = /^[0-9a-f]{40}$/;

function entryOf(body: Buffer): JournalEntry | undefined {
  const metaLength = body.readUInt32BE(0);
  if (4 + metaLength > body.length) return undefined;
  let meta: Record<string, unknown>;
  try {
    meta = JSON.parse(body.toString('utf8', 4, 4 + metaLength)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { repository, ref, old, new: next, before, after, packName, packBytes, indexBytes } = meta;
  if (
    typeof repository !== 'string' ||
    typeof ref !== 'string' ||
    typeof before !== 'string' ||
    typeof after !== 'string'
  )
    return undefined;
  if (typeof old !== 'string' || typeof next !== 'string' || !HEX40.test(old) || !HEX40.test(next)) return undefined;
  if (typeof packName !== 'string' || !/^pack-[0-9a-f]{40}$/.test(packName)) return undefined;
  if (
    typeof packBytes !== 'number' ||
    typeof indexBytes !== 'number' ||
    4 + metaLength + packBytes + indexBytes !== body.length
  )
    return undefined;
  const packAt = 4 + metaLength;
  return {
    repository,
    ref,
    old,
    new: next,
    before,
    after,
    packName,
    pack: body.subarray(packAt, packAt + packBytes),
    index: body.subarray(packAt + packBytes),
  };
}

/**
 * One record standing alone (as a cluster's leader sends it to its replicas): the record's bytes
 * exactly, its checksum holding; undefined otherwise.
 */
export function decodeRecord(bytes: Buffer): JournalRecord | undefined {
  if (bytes.length < RECORD_HEAD || bytes.readUInt32BE(0) !== MAGIC) return undefined;
  const seq = bytes.readUInt32BE(4);
  const bodyLength = bytes.readUInt32BE(8);
  if (bodyLength > MAX_BODY || RECORD_HEAD + bodyLength !== bytes.length) return undefined;
  const body = bytes.subarray(RECORD_HEAD);
  if (!checksum(seq, bodyLength, body).equals(bytes.subarray(12, 32))) return undefined;
  const entry = entryOf(body);
  return entry && { seq, entry, offset: 0, length: bytes.length };
}

/** The records of a journal file's bytes, in order, up to the first that does not count. */
export function decodeRecords(file: Buffer): JournalRecord[] {
  const records: JournalRecord[] = [];
  let at = HEADER_BYTES;
  let previous: number | undefined;
  while (at + RECORD_HEAD <= file.length) {
    const magic = file.readUInt32BE(at);
    if (magic !== MAGIC && magic !== VOID_MAGIC) break;
    const seq = file.readUInt32BE(at + 4);
    const bodyLength = file.readUInt32BE(at + 8);
    if (previous !== undefined && seq !== previous + 1) break;
    if (bodyLength > MAX_BODY || at + RECORD_HEAD + bodyLength > file.length) break;
    const body = file.subarray(at + RECORD_HEAD, at + RECORD_HEAD + bodyLength);
    if (!checksum(seq, bodyLength, body).equals(file.subarray(at + 12, at + 32))) break;
    const entry = entryOf(body);
    if (!entry) break;
    if (magic === MAGIC) records.push({ seq, entry, offset: at, length: RECORD_HEAD + bodyLength });
    previous = seq;
    at += RECORD_HEAD + bodyLength;
  }
  return records;
}
