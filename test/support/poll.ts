/**
 * Waiting for a condition instead of sleeping: `until` checks it every few milliseconds and fails
 * the test, naming what it waited for, when the deadline passes; `tracked` tells whether a promise
 * has settled yet, so a test can assert that something is still pending.
 */

export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Checks `invariant` repeatedly for `ms` milliseconds: for what must stay true while a writer waits. */
export async function holdsFor(ms: number, invariant: () => void): Promise<void> {
  const end = Date.now() + ms;
  do {
    invariant();
    await new Promise((resolve) => setTimeout(resolve, 10));
  } while (Date.now() < end);
  invariant();
}

export interface Tracked<T> {
  readonly promise: Promise<T>;
  readonly settled: () => boolean;
}

export function tracked<T>(promise: Promise<T>): Tracked<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  return { promise, settled: () => done };
}
