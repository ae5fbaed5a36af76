/**
 * Work whose cost grows with its input, written as a generator that yields (nothing) between
 * items (no single piece of event-loop work over ~50 ms). The domain stays pure: it only
 * marks where a pause is safe. `runSteps` drives such work to its end at once (tests, small
 * inputs, callers off the request path); the server drives it through `TimeSlices.run`
 * (src/lib/timeSlices.ts), which gives other requests the event loop every few milliseconds.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to completion without pausing and returns its result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
