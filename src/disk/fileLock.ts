/**
 * An exclusive lock file beside a small JSON file that several processes (the CLI, servers) update:
 * taken with O_EXCL, waited for with jitter, and broken when older than any update can take
 * (its holder died mid-update). Used by the admin token file.
 */
import * as fs from 'node:fs';

/** A lock older than this was left by a process that died mid-update (updates take milliseconds). */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

export class FileLockBusyError extends Error {
  readonly code = 'FileLockBusy';
}

/** Runs `work` holding the lock file `lock`; a lock held by another process for too long is FileLockBusyError. */
export async function withFileLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await fs.promises.open(lock, 'wx', 0o600)).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > STALE_LOCK_MS) await fs.promises.unlink(lock).catch(() => undefined);
    else if (Date.now() > deadline) throw new FileLockBusyError('the file is locked by another process');
    else await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
  }
  try {
    return await work();
  } finally {
    await fs.promises.unlink(lock).catch(() => undefined);
  }
}
