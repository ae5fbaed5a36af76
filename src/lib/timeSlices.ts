/**
 * Long work on the event loop cut into slices: the caller calls `pause()` between small
 * steps, and every `SLICE_MS` of work it yields with setImmediate, so the requests that arrived
 * meanwhile (their I/O callbacks run before immediates) are served between slices. Used where a
 * single operation's work grows with its input: building a snapshot from its objects, a large
 * push's shape check, validation, staging and pack, a large answer's serialization.
 */
import { performance } from 'node:perf_hooks';
import type { Steps } from './steps.js';

/** Work between two yields, in milliseconds: well under the 50 ms any other request may wait. */
export const SLICE_MS = 8;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class TimeSlices {
  private sliceStart = performance.now();
  /** Yields taken so far (tests and the bench count them). */
  yields = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Resolves at once within a slice; after a slice's worth of work, on the next turn of the loop. */
  pause(): Promise<void> | undefined {
    if (performance.now() - this.sliceStart < this.sliceMs) return undefined;
    this.yields++;
    return turn().then(() => {
      this.sliceStart = performance.now();
    });
  }

  /**
   * Drives work written as steps (src/lib/steps.ts) to its end, pausing between steps once a
   * slice's worth of time has passed: a small input finishes within its first slice, without a
   * single yield, so it pays a clock read per step and nothing more.
   */
  async run<T>(steps: Steps<T>): Promise<T> {
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      const paused = this.pause();
      if (paused) await paused;
    }
  }
}
