/**
 * Replacing a small file that several processes (the CLI, servers) update, such as the token
 * files: under the one lock primitive (LockFile: created exclusively, a stale lock removed only
 * by its rules) with the one retry rule (lockRetry.ts). The next content is computed under the
 * lock from the file as it is then, written into the lock and renamed over the file, durably.
 */
import { BUSY, retryWhileBusy } from './lockRetry.js';
import { LockBusyError } from '../errors.js';
import { LockFile, type LockFileOptions } from './refs.js';

/** Takes `<folder>/<name>.lock`, retrying while another writer holds it; LockBusyError naming `what` if it never frees. */
export async function takeLock(
  folder: string,
  name: string,
  what: string,
  options: LockFileOptions,
): Promise<LockFile> {
  const lock = await retryWhileBusy(async () => {
    const taken = await LockFile.acquire(folder, name, options);
    return taken === 'locked' ? BUSY : taken;
  });
  if (lock === BUSY) throw new LockBusyError(what);
  return lock;
}

/**
 * Replaces `<folder>/<name>` by the content `next()` gives (called under the lock), durably;
 * returns what `next` returned with it. Nothing changes if `next` throws.
 */
export async function updateLockedFile<T>(
  folder: string,
  name: string,
  what: string,
  options: LockFileOptions,
  next: () => { content: string; result: T },
): Promise<T> {
  const lock = await takeLock(folder, name, what, options);
  try {
    const { content, result } = next();
    await lock.write(content);
    await lock.commit();
    return result;
  } finally {
    await lock.release();
  }
}
