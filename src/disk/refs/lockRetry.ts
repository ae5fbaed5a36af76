/**
 * The one retry rule for every writer that finds a lock held (a ref, `packed-refs`, the token
 * file) or a ref moved under it: try again after a short, growing pause with jitter, about 5
 * seconds in all, then give up and say so (the caller answers "busy, try again").
 */

/** Attempts before a writer gives up: about 5 seconds of pauses in all. */
export const LOCK_ATTEMPTS = 50;

/** What an attempt returns when it found the lock held or the ref moved, to be tried again. */
export const BUSY: unique symbol = Symbol('busy');
export type Busy = typeof BUSY;

/** The wait before attempt `attempt + 1`: growing, capped at 100 ms, with jitter. */
function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(2 ** attempt, 100) * (0.5 + Math.random())));
}

/** Runs `attempt` until it returns something other than BUSY, at most LOCK_ATTEMPTS times; BUSY if it never did. */
export async function retryWhileBusy<T>(attempt: (n: number) => Promise<T | Busy>): Promise<T | Busy> {
  for (let n = 0; n < LOCK_ATTEMPTS; n++) {
    const result = await attempt(n);
    if (result !== BUSY) return result;
    await pause(n);
  }
  return BUSY;
}
