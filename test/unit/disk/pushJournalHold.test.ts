/**
 * A journal file taken by a push stays open until that push lets it go (pushJournal.ts,
 * JournalFile.hold). A push takes the file before it writes its pack and takes its ref's lock, and
 * appends only after: meanwhile other pushes may fill the file, so that it is retired and (once
 * its own records are done) checkpointed and deleted. Closed under the push that still held it,
 * the push wrote its record to a closed descriptor: a 500 (EBADF) under load, found by 16 clients
 * pushing for five minutes, or, with the descriptor's number reused by a file opened meanwhile,
 * its record written into that other file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JOURNAL_FOLDER, JOURNAL_SUFFIX, PushJournal } from '../../../src/disk/journal/pushJournal.js';
import type { JournalEntry } from '../../../src/disk/journal/journalRecords.js';
import { tempDir } from '../../support/harness.js';

const entry = (n: number, packBytes: number): JournalEntry => ({
  repository: 'acme/app.git',
  ref: 'refs/heads/main',
  old: '1'.repeat(40),
  new: n.toString(16).padStart(40, '0'),
  before: 'loose 1 1 1',
  after: 'loose 2 2 2',
  packName: `pack-${n.toString(16).padStart(40, '0')}`,
  pack: Buffer.alloc(packBytes, n),
  index: Buffer.alloc(64, n),
});

let dir: ReturnType<typeof tempDir>;
let journal: PushJournal;
beforeEach(() => {
  dir = tempDir();
  journal = new PushJournal(dir.path);
});
afterEach(async () => {
  await journal.close();
  dir.remove();
});

const journalFiles = () => readdirSync(join(dir.path, JOURNAL_FOLDER)).filter((name) => name.endsWith(JOURNAL_SUFFIX));

describe('a journal file held by a push', () => {
  it('is not deleted while the push holds it, though other pushes filled and retired it; the push appends to it after', async () => {
    const held = (await journal.file())!; // push A takes the file, then writes its pack (not yet appended)
    // Other pushes fill the file past its rotation size, each done with it at once.
    for (let n = 1; !held.full; n++) {
      const file = (await journal.file())!;
      expect(file).toBe(held);
      const ticket = await file.append(entry(n, 512 * 1024));
      ticket.committed([], []);
      file.letGo();
    }
    const next = (await journal.file())!; // the next push retires the full file
    expect(next).not.toBe(held);
    await journal.settled();
    expect(existsSync(held.path)).toBe(true); // push A still holds it

    const ticket = await held.append(entry(999, 1024)); // push A's record: written and made durable
    ticket.committed([], []);
    held.letGo();
    next.letGo();
    await journal.settled();
    expect(existsSync(held.path)).toBe(false); // let go by every push: checkpointed and deleted
    expect(journalFiles()).toEqual([next.path.slice(next.path.lastIndexOf('/') + 1)]);
  });

  it('that never appends (its lock was taken, its pack failed) lets it go all the same', async () => {
    const held = (await journal.file())!;
    for (let n = 1; !held.full; n++) {
      const file = (await journal.file())!;
      (await file.append(entry(n, 512 * 1024))).committed([], []);
      file.letGo();
    }
    (await journal.file())!.letGo(); // retires the full file
    await journal.settled();
    expect(existsSync(held.path)).toBe(true);
    held.letGo();
    await journal.settled();
    expect(existsSync(held.path)).toBe(false);
  });
});
