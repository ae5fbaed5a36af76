/**
 * Floors measured next to each push scenario, so absolute figures can be read against the machine:
 * a durable push cannot beat a few sequential fsyncs, and a git plumbing push cannot beat five
 * process spawns. Both vary a lot on a shared VM (fsync p50 moved between 0.5 and 2 ms within
 * minutes while this suite was written), which is why they are measured at the time, not quoted.
 */
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './gitPlumbing.js';
import { summarize, type Summary } from './stats.js';

const DOCUMENT = Buffer.alloc(300, 'x');

/** Create, write 300 bytes, fsync and close a new file: one durable loose object, roughly. */
export async function fsyncFloor(folder: string, samples = 30): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const path = join(folder, `fsync-probe-${i}`);
    const t0 = performance.now();
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(DOCUMENT);
      await handle.sync();
    } finally {
      await handle.close();
    }
    times.push(performance.now() - t0);
    // Small files only: removing them cannot trigger the slow-discard effect of a large rm -rf.
    await rm(path);
  }
  return summarize(times);
}

/** `git --version` from this process: the cost of one spawn, which grows with this process's memory. */
export async function spawnFloor(samples = 20): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await runGit(['--version']);
    times.push(performance.now() - t0);
  }
  return summarize(times);
}

export function residentMiB(): number {
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}
