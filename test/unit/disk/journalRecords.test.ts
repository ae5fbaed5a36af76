/**
 * The push journal's byte format (src/disk/journal/journalRecords.ts): what is written reads back; a torn
 * tail, a break in the chain of seqs, and the zeros of a preallocated file end the journal; a
 * voided record is skipped and the chain goes on past it.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeHeader,
  decodeRecords,
  encodeHeader,
  encodeRecord,
  HEADER_BYTES,
  voidRecordBytes,
  type JournalEntry,
} from '../../../src/disk/journal/journalRecords.js';

const entry = (n: number): JournalEntry => ({
  repository: 'acme/app.git',
  ref: 'refs/heads/main',
  old: n.toString(16).padStart(40, '0'),
  new: (n + 1).toString(16).padStart(40, '0'),
  before: `loose 1 ${n} 41`,
  after: `loose 2 ${n + 1} 41`,
  packName: `pack-${'ab'.repeat(20)}`,
  pack: Buffer.from(`PACK bytes ${n}`),
  index: Buffer.from(`index bytes ${n}`),
});

function journal(...records: Buffer[]): Buffer {
  return Buffer.concat([encodeHeader('cfghub 12 34 56 boot host\n'), ...records, Buffer.alloc(1024)]);
}

describe('journal records', () => {
  it('read back as written, header note included, up to the zeros after the last', () => {
    const file = journal(encodeRecord(1, entry(1)), encodeRecord(2, entry(2)));
    expect(decodeHeader(file.subarray(0, HEADER_BYTES))).toBe('cfghub 12 34 56 boot host\n');
    const records = decodeRecords(file);
    expect(records.map((r) => r.seq)).toEqual([1, 2]);
    expect(records[1].entry).toMatchObject({
      ...entry(2),
      pack: Buffer.from('PACK bytes 2'),
      index: Buffer.from('index bytes 2'),
    });
    expect(records[1].offset).toBe(HEADER_BYTES + records[0].length);
  });

  it('end at a torn record: one cut short, or with a byte changed', () => {
    const first = encodeRecord(1, entry(1));
    const second = encodeRecord(2, entry(2));
    expect(decodeRecords(journal(first, second.subarray(0, second.length - 3))).map((r) => r.seq)).toEqual([1]);
    const changed = Buffer.from(second);
    changed[changed.length - 1] ^= 1;
    expect(decodeRecords(journal(first, changed, encodeRecord(3, entry(3)))).map((r) => r.seq)).toEqual([1]);
  });

  it('end where the seqs break: an older record left behind a newer one is not read', () => {
    expect(decodeRecords(journal(encodeRecord(7, entry(7)), encodeRecord(3, entry(3)))).map((r) => r.seq)).toEqual([7]);
  });

  it('skip a voided record and go on with the chain', () => {
    const voided = encodeRecord(2, entry(2));
    voidRecordBytes().copy(voided, 0);
    expect(
      decodeRecords(journal(encodeRecord(1, entry(1)), voided, encodeRecord(3, entry(3)))).map((r) => r.seq),
    ).toEqual([1, 3]);
  });

  it('is not a journal without its header line', () => {
    expect(decodeHeader(Buffer.alloc(HEADER_BYTES))).toBeUndefined();
    expect(decodeRecords(Buffer.alloc(HEADER_BYTES + 100))).toEqual([]);
  });
});
