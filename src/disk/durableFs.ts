/**
 * The durable-write helpers of the write path: write a temporary file, fsync it, rename it into
 * place, fsync the folder. (isomorphic-git, which cfghub once used, never fsyncs and writes files
 * in place.)
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { secondsSince, telemetry } from './telemetry.js';

/**
 * Writes `data` to a temporary file beside `path` and fsyncs it; returns the temporary file's
 * path, for the caller to rename into place. `tmp_obj_` (the default prefix) is one git's gc
 * recognises and prunes if a crash leaves one behind; object files use another (see
 * objectStore.ts), as `git gc --prune=now` would remove them while a push writes them.
 */
export async function writeTemporary(path: string, data: Uint8Array | string, mode = 0o444, prefix = 'tmp_obj_'): Promise<string> {
  const temporary = `${dirname(path)}/${prefix}${process.pid}_${randomBytes(6).toString('hex')}`;
  const handle = await fs.promises.open(temporary, 'wx', mode);
  try {
    await handle.writeFile(data);
    const started = process.hrtime.bigint();
    await handle.sync();
    telemetry.fsync(secondsSince(started));
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temporary;
}

/** Moves a temporary file into place; removes it if that fails. */
export async function renameIntoPlace(temporary: string, path: string): Promise<void> {
  try {
    await fs.promises.rename(temporary, path);
  } catch (error) {
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Writes a file under a temporary name, fsyncs it and renames it into place. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o444): Promise<void> {
  await renameIntoPlace(await writeTemporary(path, data, mode), path);
}

export async function fsyncFolder(path: string): Promise<void> {
  const handle = await fs.promises.open(path, 'r');
  try {
    const started = process.hrtime.bigint();
    await handle.sync();
    telemetry.fsync(secondsSince(started));
  } finally {
    await handle.close();
  }
}
