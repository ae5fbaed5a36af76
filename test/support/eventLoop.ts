import { setImmediate as turn } from 'node:timers/promises';

/**
 * Lets the event loop pass its poll phase, where it reads inotify events (GitRepository's head
 * watch learns there of commits made by other processes), as every request does before it reads
 * the head (`afterQueuedWatchEvents`, src/disk/refs/changeWatch.ts). One immediate may run in the phase right after the current
 * one; two cannot both run before a poll phase.
 */
export async function pollPhase(): Promise<void> {
  await turn();
  await turn();
}
