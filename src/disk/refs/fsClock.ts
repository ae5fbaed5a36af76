/**
 * The file system's own notion of "now", for judging how old a file is (a stale lock, a
 * temporary file a crash left behind) without trusting the process clock: a server whose clock
 * is a day behind would never find a dead writer's lock old, and one a day ahead would take a
 * live writer's lock at once. A probe file is created beside the file judged and its mtime read:
 * both stamps then come from the same clock (the kernel's, or the file server's on NFS).
 * The probe's name starts with a dot and ends in `.lock`, which git skips in ref folders and
 * `git gc` never prunes; it is removed at once.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';

/** The file system's current time in `folder`, in ms, as the mtime of a file written now. */
export async function fsNow(folder: string): Promise<number> {
  const probe = join(folder, `.cfghub-clock-${process.pid}-${randomBytes(4).toString('hex')}.lock`);
  const handle = await fs.promises.open(probe, 'wx', 0o644);
  try {
    await handle.write('now\n');
    return (await handle.stat()).mtimeMs;
  } finally {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(probe).catch(() => undefined);
  }
}

/** How old `stat` (a file in `folder`) is on the file system's clock, in ms; never negative. */
export async function ageOnFsClock(folder: string, stat: fs.Stats): Promise<number> {
  return Math.max(0, (await fsNow(folder)) - stat.mtimeMs);
}
