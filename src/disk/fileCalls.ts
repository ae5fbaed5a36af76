/**
 * The small file calls of a push (create a file, write a few hundred bytes, close, rename, unlink),
 * one owner for how they are made: synchronously while this process has one write in flight, in
 * libuv's thread pool while it has more.
 *
 * Synchronously, a call is a few microseconds of kernel work instead of a round trip to the thread
 * pool (a thread's wake-up, a promise, a turn of the loop): one client's push made about 14 such
 * round trips one after another on its path to the answer. But creating a file can take far
 * longer: on ext4 without a journal (the benchmark machine's), each new file's inode is found by
 * stepping over every inode freed in the last minute or more, and every push frees several. With
 * 16 pushes into 16 repositories at once, the main thread spent about 35% of its time blocked in
 * these calls (`open` alone 19%; `perf` put it in ext4's `recently_deleted`), time in which it
 * could not parse, stage or answer the other pushes. So with another write in flight they go to
 * the thread pool, and the loop keeps working (README, "Small file calls").
 */
import * as fs from 'node:fs';
import { promisify } from 'node:util';

let writesInFlight = 0;

/** Counts a write (a commit being made) for as long as it runs; call the returned function when it ends. */
export function writeStarted(): () => void {
  writesInFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    writesInFlight--;
  };
}

/** True when the file calls are made at once (no other write in flight in this process). */
export function callsInline(): boolean {
  return writesInFlight <= 1;
}

const openAsync = promisify(fs.open);
const closeAsync = promisify(fs.close);

/** Creates `path`, which must not exist, open for writing; its descriptor. */
export async function createExclusive(path: string, mode: number): Promise<number> {
  return callsInline() ? fs.openSync(path, 'wx', mode) : openAsync(path, 'wx', mode);
}

export async function closeFile(fd: number): Promise<void> {
  if (callsInline()) fs.closeSync(fd);
  else await closeAsync(fd);
}

/** Writes a small file whole (created or replaced). */
export async function writeSmallFile(path: string, data: string, mode = 0o666): Promise<void> {
  if (callsInline()) fs.writeFileSync(path, data, { mode });
  else await fs.promises.writeFile(path, data, { mode });
}

export async function renameFile(from: string, to: string): Promise<void> {
  if (callsInline()) fs.renameSync(from, to);
  else await fs.promises.rename(from, to);
}

export async function unlinkFile(path: string): Promise<void> {
  if (callsInline()) fs.unlinkSync(path);
  else await fs.promises.unlink(path);
}
