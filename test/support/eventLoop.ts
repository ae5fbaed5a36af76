import { setImmediate as turn } from 'node:timers/promises';

/**
 * Lets the event loop pass its poll phase, where it reads inotify events (GitRepository's head
 * watch learns there of commits made by other processes), as it always has before it reads a
 * request that follows such a commit. One immediate may run in the phase right after the current
 * one; two cannot both run before a poll phase.
 */
export async function pollPhase(): Promise<void> {
  await turn();
  await turn();
}
