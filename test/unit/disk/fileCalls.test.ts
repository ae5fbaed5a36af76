/**
 * The small file calls of a push (src/disk/fileCalls.ts): made at once while this process has one
 * write in flight, in the thread pool while it has more; the same files either way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callsInline, writeStarted } from '../../../src/disk/fileCalls.js';
import { renameIntoPlace, writeTemporary } from '../../../src/disk/durableFs.js';
import { LockFile } from '../../../src/disk/refs/refs.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe('the small file calls of a push', () => {
  it('are made at once with one write in flight, in the thread pool with two, and each end counts once', () => {
    expect(callsInline()).toBe(true);
    const first = writeStarted();
    expect(callsInline()).toBe(true);
    const second = writeStarted();
    expect(callsInline()).toBe(false);
    second();
    second(); // ending twice (a retry's cleanup and its finally) must not free a third
    const third = writeStarted();
    expect(callsInline()).toBe(false);
    third();
    first();
    expect(callsInline()).toBe(true);
  });

  for (const writes of [1, 2]) {
    it(`write the same files with ${writes} write(s) in flight: a lock taken, written, committed; a temporary file renamed into place`, async () => {
      const ends = Array.from({ length: writes }, () => writeStarted());
      try {
        expect(callsInline()).toBe(writes === 1);
        root = mkdtempSync(join(tmpdir(), 'cfghub-filecalls-'));
        const lock = await LockFile.acquire(root, 'ref');
        if (lock === 'locked') throw new Error('locked');
        await lock.write('abc\n', false);
        await lock.commit();
        expect(readFileSync(join(root, 'ref'), 'utf8')).toBe('abc\n');
        const temporary = await writeTemporary(join(root, 'data'), 'x'.repeat(1000), 0o444, 'tmp_obj_', false);
        await renameIntoPlace(temporary, join(root, 'data'));
        expect(readFileSync(join(root, 'data'), 'utf8')).toBe('x'.repeat(1000));
        expect(statSync(join(root, 'data')).mode & 0o777).toBe(0o444);
        expect(readdirSync(root).sort()).toEqual(['data', 'ref']); // the lock's holder note gone with it
        expect(await LockFile.acquire(root, 'ref')).not.toBe('locked'); // released: the lock is free again
      } finally {
        for (const end of ends) end();
      }
    });
  }
});
