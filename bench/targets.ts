/**
 * The speed targets of issues 2 and 3, checked against what was measured. A target whose scenario
 * did not run is reported as not met, never assumed.
 */
import type { ScenarioResult } from './results.js';
import { measurementOf } from './results.js';
import { LISTING_WARM } from './scenarios/listing.js';
import { PULL, pullScenarioId, STATIC } from './scenarios/pull.js';
import { GIT_PLUMBING, IN_PROCESS, pushScenarioId } from './scenarios/push.js';
import { RESTART_LISTENING, RESTART_SPAWN, SERVE } from './scenarios/restart.js';

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

function perSecond(value: number): string {
  return `${Math.round(value).toLocaleString('en-US')} req/s`;
}

/** Pull's requests per second over the static endpoint's, paired slice by slice. */
function pullThroughputAtLeast(results: readonly ScenarioResult[], connections: number, fraction: number, target: string): TargetCheck {
  const result = find(results, pullScenarioId(connections));
  if (!result) return { target, met: false, measured: 'not measured' };
  const pull = measurementOf(result, PULL);
  const reference = measurementOf(result, STATIC);
  const ratio = pull.speedup!;
  return {
    target,
    met: ratio >= fraction,
    measured: `${ratio.toFixed(2)}x the static endpoint (median over slice pairs; pull ${perSecond(pull.summary.opsPerSecond)} vs static ${perSecond(reference.summary.opsPerSecond)} over all slices)`,
  };
}

/** Every restart must meet the limit: the verdict rests on the slowest one. */
function firstPullWithin(results: readonly ScenarioResult[], limitMs: number, target: string): TargetCheck {
  const listening = find(results, RESTART_LISTENING);
  const spawn = find(results, RESTART_SPAWN);
  if (!listening || !spawn) return { target, met: false, measured: 'not measured' };
  const fromListening = measurementOf(listening, SERVE);
  const fromSpawn = measurementOf(spawn, SERVE);
  const slowest = Math.max(...fromListening.samples);
  return {
    target,
    met: slowest < limitMs,
    measured: `slowest of ${fromListening.samples.length} restarts: ${ms(slowest)} after listening (p50 ${ms(fromListening.summary.p50)}); from spawn p50 ${ms(fromSpawn.summary.p50)}, slowest ${ms(Math.max(...fromSpawn.samples))}`,
  };
}

export function checkTargets(results: readonly ScenarioResult[]): TargetCheck[] {
  return [
    p50Under(results, pushScenarioId(1, 10_000), IN_PROCESS, 5, 'push of 1 key into 10,000 keys, in-process, p50 under 5 ms'),
    speedupAtLeast(results, pushScenarioId(1, 10_000), 10, 'push of 1 key into 10,000 keys, in-process, at least 10x faster than git plumbing'),
    speedupAtLeast(results, pushScenarioId(100, 1_000), 2, 'push of 100 keys into 1,000 keys, in-process, at least 2x faster than git plumbing'),
    speedupAtLeast(results, pushScenarioId(100, 10_000), 2, 'push of 100 keys into 10,000 keys, in-process, at least 2x faster than git plumbing'),
    p50Under(results, LISTING_WARM, 'cfghub HTTP', 20, 'GET /rest/info/all with 1,000 repositories, warm, p50 under 20 ms'),
    pullThroughputAtLeast(results, 1, 0.5, 'GET /rest/pull of 1,000 keys with 1 connection, at least half the requests per second of a static endpoint on the same server'),
    pullThroughputAtLeast(results, 16, 0.5, 'GET /rest/pull of 1,000 keys with 16 connections, at least half the requests per second of a static endpoint on the same server'),
    firstPullWithin(results, 1000, 'first pull of a 10,000-key repository within 1 s of the restarted server listening'),
  ];
}
