/**
 * The speed targets of issue 2, checked against what was measured. A target whose scenario did not
 * run is reported as not met, never assumed.
 */
import type { ScenarioResult } from './results.js';
import { measurementOf } from './results.js';
import { LISTING_WARM } from './scenarios/listing.js';
import { GIT_PLUMBING, IN_PROCESS, pushScenarioId } from './scenarios/push.js';

export interface TargetCheck {
  readonly target: string;
  readonly met: boolean;
  /** The measured figure the verdict rests on. */
  readonly measured: string;
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

function find(results: readonly ScenarioResult[], id: string): ScenarioResult | undefined {
  return results.find((result) => result.id === id);
}

function p50Under(results: readonly ScenarioResult[], id: string, implementation: string, limitMs: number, target: string): TargetCheck {
  const result = find(results, id);
  if (!result) return { target, met: false, measured: 'not measured' };
  const { p50 } = measurementOf(result, implementation).summary;
  return { target, met: p50 < limitMs, measured: `p50 ${ms(p50)}` };
}

function speedupAtLeast(results: readonly ScenarioResult[], id: string, factor: number, target: string): TargetCheck {
  const result = find(results, id);
  if (!result) return { target, met: false, measured: 'not measured' };
  const mine = measurementOf(result, IN_PROCESS);
  const git = measurementOf(result, GIT_PLUMBING);
  const speedup = mine.speedup!;
  return {
    target,
    met: speedup >= factor,
    measured: `${speedup.toFixed(1)}x (paired median; p50 ${ms(mine.summary.p50)} vs git ${ms(git.summary.p50)})`,
  };
}

export function checkTargets(results: readonly ScenarioResult[]): TargetCheck[] {
  return [
    p50Under(results, pushScenarioId(1, 10_000), IN_PROCESS, 5, 'push of 1 key into 10,000 keys, in-process, p50 under 5 ms'),
    speedupAtLeast(results, pushScenarioId(1, 10_000), 10, 'push of 1 key into 10,000 keys, in-process, at least 10x faster than git plumbing'),
    speedupAtLeast(results, pushScenarioId(100, 1_000), 2, 'push of 100 keys into 1,000 keys, in-process, at least 2x faster than git plumbing'),
    speedupAtLeast(results, pushScenarioId(100, 10_000), 2, 'push of 100 keys into 10,000 keys, in-process, at least 2x faster than git plumbing'),
    p50Under(results, LISTING_WARM, 'cfghub HTTP', 20, 'GET /rest/info/all with 1,000 repositories, warm, p50 under 20 ms'),
  ];
}
