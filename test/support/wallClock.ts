/**
 * Bounds on how fast something is, in wall-clock time, are an opt-in tier: `npm run test:timed`
 * (CFGHUB_TIMED=1) checks them; `npm test` runs the same tests and checks everything else in
 * them. A duration depends on the machine and on what else runs on it, so a bound a shared CI
 * machine cannot promise would fail runs at random; the behaviour under the bound (the refusal,
 * the handover, the memory kept) is checked in every run.
 *
 * Not for a bound that tells one behaviour from another by a wide margin (an answer at once
 * against one held 30 s): that is the behaviour, and stays an ordinary assertion.
 */
import { expect } from 'vitest';

/** Whether this run checks wall-clock bounds (`npm run test:timed`). */
export const WALL_CLOCK_BOUNDS = process.env.CFGHUB_TIMED === '1';

/** Expects `ms` under `boundMs` when this run checks wall-clock bounds. */
export function expectWithin(ms: number, boundMs: number, what: string): void {
  if (WALL_CLOCK_BOUNDS) expect(ms, `${what}: ${ms.toFixed(0)} ms`).toBeLessThan(boundMs);
}
