/**
 * The durable-write helpers of the write path: write a temporary file, fsync it, rename it into
 * place, fsync the folder. (isomorphic-git, which cfghub once used, never fsyncs and writes files
 * in place.)
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { secondsSince, telemetry } from '../lib/telemetry.js';
import { callsInline, closeFile, createExclusive, renameFile } from './fileCalls.js';

/**
 * Writes of up to SYNC_WRITE_BYTES are made as the other small file calls of a push are
 * (fileCalls.ts: at once while one write is in flight); larger ones, the fsyncs and the renames of
 * objects into place go to the thread pool, so the loop never waits for the disk itself.
 */
const SYNC_WRITE_BYTES = 256 * 1024;
const fsyncAsync = promisify(fs.fsync);
const writeAsync = promisify(fs.write);

/** Writes all of `data` at the file's position: at once when small, in the thread pool when large. */
export async function writeAll(fd: number, data: Uint8Array | string): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let written = 0;
  if (bytes.length <= SYNC_WRITE_BYTES && callsInline()) {
    while (written < bytes.length) written += fs.writeSync(fd, bytes, written);
    return;
  }
  while (written < bytes.length) written += (await writeAsync(fd, bytes, written)).bytesWritten;
}

/** fsync of an open file, timed for the metrics (cfghub_fsync_seconds). */
export async function syncFd(fd: number): Promise<void> {
  const started = process.hrtime.bigint();
  await fsyncAsync(fd);
  telemetry.fsync(secondsSince(started));
}

/** Closes a file descriptor, ignoring a failure (on a path that is failing already). */
export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already failing: the first error is the one reported
  }
}

function unlinkQuietly(path: string): void {
  try {
    fs.unlinkSync(path);
  } catch {
    // gone already, or the caller's own error is reported
  }
}

/**
 * Writes `data` to a temporary file beside `path` and fsyncs it (unless `durable` is false: a
 * journaled push's pack, pushJournal.ts); returns the temporary file's
 * path, for the caller to rename into place. `tmp_obj_` (the default prefix) is one git's gc
 * recognises and prunes if a crash leaves one behind; object files use another (see
 * objectStore.ts), as `git gc --prune=now` would remove them while a push writes them.
 */
export async function writeTemporary(
  path: string,
  data: Uint8Array | string,
  mode = 0o444,
  prefix = 'tmp_obj_',
  durable = true,
): Promise<string> {
  const { temporary, fd } = await createTemporary(dirname(path), prefix, mode);
  try {
    await writeAll(fd, data);
    if (durable) await syncFd(fd);
  } catch (error) {
    closeQuietly(fd);
    unlinkQuietly(temporary);
    throw error;
  }
  await closeFile(fd);
  return temporary;
}

/** A new temporary file of `folder`, open for writing, named as `writeTemporary` names them. */
export async function createTemporary(
  folder: string,
  prefix: string,
  mode: number,
): Promise<{ temporary: string; fd: number }> {
  const temporary = `${folder}/${prefix}${process.pid}_${randomBytes(6).toString('hex')}`;
  return { temporary, fd: await createExclusive(temporary, mode) };
}

/**
 * Moves a temporary file into place; removes it if that fails. Through the thread pool still: the
 * maintenance test runs `git prune` in this very window by wrapping fs.promises.rename.
 */
export async function renameIntoPlace(temporary: string, path: string): Promise<void> {
  try {
    await fs.promises.rename(temporary, path);
  } catch (error) {
    unlinkQuietly(temporary);
    throw error;
  }
}

/**
 * renameIntoPlace as a small file call (fileCalls.ts: at once while one write is in flight): for
 * the second of two renames made one after the other (a pack's index after its data), where a
 * round trip each was a tenth of one client's push's time to its answer.
 */
export async function renameIntoPlaceNext(temporary: string, path: string): Promise<void> {
  try {
    await renameFile(temporary, path);
  } catch (error) {
    unlinkQuietly(temporary);
    throw error;
  }
}

/**
 * Removes a file in the thread pool (an unlink can take milliseconds on a disk mounted with
 * discard); one that is gone already is fine, any other failure is thrown. (`fs.rm` with `force`
 * would stat it first: twice the calls.)
 */
export async function removeIfPresent(path: string): Promise<void> {
  try {
    await fs.promises.unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Writes a file under a temporary name, fsyncs it and renames it into place. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o444): Promise<void> {
  await renameIntoPlace(await writeTemporary(path, data, mode), path);
}

export async function fsyncFolder(path: string): Promise<void> {
  const fd = fs.openSync(path, 'r');
  try {
    await syncFd(fd);
  } finally {
    closeQuietly(fd);
  }
}

/** fsync of a file or folder by path; one that is gone (a merged pack, a ref moved into packed-refs) needs none. */
export async function fsyncIfThere(path: string): Promise<void> {
  try {
    await fsyncFolder(path); // opens read-only and fsyncs: the same for a file
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
