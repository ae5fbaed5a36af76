/** The read record: latest commit, time and count per repository, application and context, bounded. */
import { describe, expect, it } from 'vitest';
import { ReadRecord } from '../../../src/service/read/readRecord.js';

describe('ReadRecord', () => {
  it('keeps the last commit served, when, and how many reads per application and context', () => {
    const record = new ReadRecord();
    record.record(
      { repository: 'acme/app', application: 'web', context: 'Production;*', commit: 'a' },
      new Date('2026-01-01T00:00:00Z'),
    );
    record.record(
      { repository: 'acme/app', application: 'web', context: 'production;*', commit: 'b' },
      new Date('2026-01-01T00:00:05Z'),
    );
    record.record({ repository: 'acme/app', context: '*;*', commit: 'a' });
    record.record({ repository: 'acme/other', application: 'web', context: '*;*', commit: 'c' });
    expect(record.of('acme/app')).toEqual([
      { application: '-', context: '*;*', commit: 'a', lastRead: expect.any(String), reads: 1 },
      { application: 'web', context: 'production;*', commit: 'b', lastRead: '2026-01-01T00:00:05.000Z', reads: 2 },
    ]);
  });

  it('holds at most its bound, dropping the least recently read', () => {
    const record = new ReadRecord(3);
    for (let i = 0; i < 10; i++)
      record.record({ repository: 'acme/app', application: `app${i}`, context: '*', commit: 'a' });
    expect(record.size).toBe(3);
    expect(record.of('acme/app').map((e) => e.application)).toEqual(['app7', 'app8', 'app9']);
  });
});
