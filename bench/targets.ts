/**
 * The speed targets, checked against what was measured. A target whose
 * scenario did not run, or whose reference is not installed, is reported as not checked, never
 * assumed met.
 */
import type { ScenarioResult } from './results.js';
import { measurementOf, speedupOver } from './results.js';
import { CONCURRENT, ETCD_CLIENTS, INTO_MANY } from './scenarios/concurrentPush.js';
import { HISTORY_AFTER_PUSH, HISTORY_COLD, HISTORY_FRESH, HISTORY_HTTP, HISTORY_WARM } from './scenarios/history.js';
import { LISTING_COLD, LISTING_WARM } from './scenarios/listing.js';
import { MEMORY, MEMORY_WORKERS } from './scenarios/memory.js';
import { BARE_HTTP, ETCD_RANGE, PULL, pullScenarioId, STATIC } from './scenarios/pull.js';
import { ETCD_TXN, GIT_PLUMBING, IN_PROCESS, OVER_HTTP, pushScenarioId } from './scenarios/push.js';
import { RESTART_LISTENING, RESTART_SPAWN, SERVE } from './scenarios/restart.js';
import { CLONE_DISK, CLONE_HTTP, CLONE_SCENARIO } from './scenarios/clone.js';
import { CFGHUB_WATCH, ETCD_WATCH, WATCH_ALL, WATCH_ALL_LAST, WATCH_ONE } from './scenarios/watch.js';

export interface TargetCheck {
  readonly target: string;
  /** Undefined when the target could not be checked (scenario not run, reference missing). */
  readonly met: boolean | undefined;
  /** The measured figure the verdict rests on, or why there is none. */
  readonly measured: string;
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

function times(value: number): string {
  return `${value < 1 ? value.toFixed(2) : value.toFixed(1)}x`;
}

type Check = (result: ScenarioResult) => Omit<TargetCheck, 'target'>;

/** Runs `check` on the scenario `id`, or reports the target as not checked. */
function on(results: readonly ScenarioResult[], id: string, target: string, check: Check): TargetCheck {
  const result = results.find((r) => r.id === id);
  if (!result) return { target, met: undefined, measured: 'not measured in this run' };
  return { target, ...check(result) };
}

/** The strict form, for targets that say "answers in": nearly every request within the limit. */
function p99Under(implementation: string, limitMs: number): Check {
  return (result) => {
    const { p50, p99 } = measurementOf(result, implementation).summary;
    return { met: p99 < limitMs, measured: `p99 ${ms(p99)} (p50 ${ms(p50)})` };
  };
}

function p50Under(implementation: string, limitMs: number): Check {
  return (result) => {
    const { p50 } = measurementOf(result, implementation).summary;
    return { met: p50 < limitMs, measured: `p50 ${ms(p50)}` };
  };
}

/** `implementation` at least `factor` times as fast as `reference`, by the scenario's paired ratio. */
function ratioAtLeast(implementation: string, reference: string, factor: number): Check {
  return (result) => {
    if (!result.measurements.some((m) => m.implementation === reference)) {
      return { met: undefined, measured: `${reference} not measured (not installed: bench/install-tools.sh)` };
    }
    const ratio = speedupOver(result, implementation, reference);
    const mine = measurementOf(result, implementation).summary;
    const theirs = measurementOf(result, reference).summary;
    const figures = result.measurements[0].load
      ? `${Math.round(mine.opsPerSecond).toLocaleString('en-US')} vs ${Math.round(theirs.opsPerSecond).toLocaleString('en-US')} req/s over all slices`
      : `p50 ${ms(mine.p50)} vs ${ms(theirs.p50)}, ${Math.round(mine.opsPerSecond)} vs ${Math.round(theirs.opsPerSecond)} ops/s`;
    return { met: ratio >= factor, measured: `${times(ratio)} ${reference} (paired median; ${figures})` };
  };
}

/** Every restart must meet the limit: the verdict rests on the slowest one. */
function firstPullWithin(results: readonly ScenarioResult[], limitMs: number, target: string): TargetCheck {
  const spawn = results.find((r) => r.id === RESTART_SPAWN);
  return on(results, RESTART_LISTENING, target, (listening) => {
    const fromListening = measurementOf(listening, SERVE);
    const slowest = Math.max(...fromListening.samples);
    const fromSpawn = spawn && measurementOf(spawn, SERVE);
    const spawnFigures = fromSpawn
      ? `; from spawn p50 ${ms(fromSpawn.summary.p50)}, slowest ${ms(Math.max(...fromSpawn.samples))}`
      : '';
    return {
      met: slowest < limitMs,
      measured: `slowest of ${fromListening.samples.length} restarts: ${ms(slowest)} after listening (p50 ${ms(fromListening.summary.p50)})${spawnFigures}`,
    };
  });
}

/** HTTP clone time over disk clone time, paired by round: at most `factor`. */
function cloneWithin(factor: number): Check {
  return (result) => {
    const slowdown = 1 / speedupOver(result, CLONE_HTTP, CLONE_DISK);
    const http = measurementOf(result, CLONE_HTTP).summary;
    const disk = measurementOf(result, CLONE_DISK).summary;
    return {
      met: slowdown <= factor,
      measured: `${times(slowdown)} the time of the clone from disk (paired median; p50 ${ms(http.p50)} vs ${ms(disk.p50)})`,
    };
  };
}

/** The time to the last watcher of each push: its p99 over pushes (the slowest, with few pushes) under the limit. */
function lastWatcherWithin(limitMs: number): Check {
  return (result) => {
    if (!result.title.includes('10,000')) return { met: undefined, measured: `not checked: ${result.title}` };
    const { samples } = measurementOf(result, CFGHUB_WATCH);
    const { p50, p99 } = measurementOf(result, CFGHUB_WATCH).summary;
    return {
      met: p99 < limitMs,
      measured: `p99 ${ms(p99)} over ${samples.length} pushes (p50 ${ms(p50)}, max ${ms(Math.max(...samples))})`,
    };
  };
}

export function checkTargets(results: readonly ScenarioResult[]): TargetCheck[] {
  const push1 = pushScenarioId(1, 10_000);
  return [
    on(results, push1, 'push of 1 key into 10,000 keys, in-process, p50 under 5 ms', p50Under(IN_PROCESS, 5)),
    on(
      results,
      push1,
      'push of 1 key into 10,000 keys, in-process, at least 10x git plumbing',
      ratioAtLeast(IN_PROCESS, GIT_PLUMBING, 10),
    ),
    on(
      results,
      pushScenarioId(100, 1_000),
      'push of 100 keys into 1,000 keys, in-process, at least 2x git plumbing',
      ratioAtLeast(IN_PROCESS, GIT_PLUMBING, 2),
    ),
    on(
      results,
      pushScenarioId(100, 10_000),
      'push of 100 keys into 10,000 keys, in-process, at least 2x git plumbing',
      ratioAtLeast(IN_PROCESS, GIT_PLUMBING, 2),
    ),
    // Listing
    on(
      results,
      LISTING_WARM,
      'GET /rest/info/all with 1,000 repositories, warm, p50 under 20 ms',
      p50Under('cfghub HTTP', 20),
    ),
    on(
      results,
      LISTING_COLD,
      'GET /rest/info/all with 1,000 repositories, first request of a new server, p50 under 300 ms',
      p50Under('cfghub HTTP', 300),
    ),
    on(
      results,
      pullScenarioId(1),
      'pull of 1,000 keys, 1 connection, at least half the requests per second of static bytes from the same server',
      ratioAtLeast(PULL, STATIC, 0.5),
    ),
    on(
      results,
      pullScenarioId(16),
      'pull of 1,000 keys, 16 connections, at least half the requests per second of static bytes from the same server',
      ratioAtLeast(PULL, STATIC, 0.5),
    ),
    firstPullWithin(
      results,
      1000,
      'first pull of a 10,000-key repository within 1 s of the restarted server listening',
    ),
    ...[1_000, 10_000].flatMap((keys) => [
      on(
        results,
        pushScenarioId(1, keys),
        `push of 1 key into ${keys.toLocaleString('en-US')} keys over HTTP, at least the transactions per second of etcd`,
        ratioAtLeast(OVER_HTTP, ETCD_TXN, 1),
      ),
      on(
        results,
        pushScenarioId(1, keys),
        `push of 1 key into ${keys.toLocaleString('en-US')} keys over HTTP, at least 0.9x the same push in-process`,
        ratioAtLeast(OVER_HTTP, IN_PROCESS, 0.9),
      ),
    ]),
    on(
      results,
      push1,
      'push of 1 key into 10,000 keys over HTTP, at least 10x git plumbing',
      ratioAtLeast(OVER_HTTP, GIT_PLUMBING, 10),
    ),
    on(
      results,
      CONCURRENT,
      '16 clients pushing into 16 repositories, at least half the transactions per second of etcd with 16 clients',
      ratioAtLeast(INTO_MANY, ETCD_CLIENTS, 0.5),
    ),
    ...[1_000, 10_000].flatMap((keys) => [
      on(
        results,
        pushScenarioId(100, keys),
        `push of 100 keys into ${keys.toLocaleString('en-US')} keys over HTTP, at least half of etcd with 100 keys per transaction`,
        ratioAtLeast(OVER_HTTP, ETCD_TXN, 0.5),
      ),
      on(
        results,
        pushScenarioId(100, keys),
        `push of 100 keys into ${keys.toLocaleString('en-US')} keys over HTTP, at least 2x git plumbing`,
        ratioAtLeast(OVER_HTTP, GIT_PLUMBING, 2),
      ),
    ]),
    on(
      results,
      pullScenarioId(16),
      'pull of 1,000 keys, 16 connections, at least half the requests per second of a bare node:http server',
      ratioAtLeast(PULL, BARE_HTTP, 0.5),
    ),
    on(
      results,
      pullScenarioId(16),
      "pull of 1,000 keys, 16 connections, at least 20x etcd's range read of the same values",
      ratioAtLeast(PULL, ETCD_RANGE, 20),
    ),
    ...(
      [
        [MEMORY, 'one process, --workers 1'],
        [
          MEMORY_WORKERS,
          '--workers auto, one worker per core, all processes together, each resident page counted once',
        ],
      ] as const
    ).map(([id, mode]) =>
      on(
        results,
        id,
        `resident memory with 100 repositories of 1,000 keys loaded, under 500 MB (${mode})`,
        (result) => ({
          met: result.residentMiB! * 1.048576 < 500,
          measured: `${result.residentMiB} MiB (${Math.round(result.residentMiB! * 1.048576)} MB)`,
        }),
      ),
    ),
    on(
      results,
      HISTORY_WARM,
      'GET /rest/history of the last 50 of 10,000 commits, warm, p99 under 50 ms',
      p99Under(HISTORY_HTTP, 50),
    ),
    on(
      results,
      HISTORY_AFTER_PUSH,
      'GET /rest/history of the last 50 of 10,000 commits right after a push, p99 under 50 ms',
      p99Under(HISTORY_HTTP, 50),
    ),
    on(
      results,
      HISTORY_FRESH,
      'GET /rest/history of 50 of 10,000 commits never summarized before, p99 under 50 ms',
      p99Under(HISTORY_HTTP, 50),
    ),
    on(
      results,
      HISTORY_COLD,
      'GET /rest/history of the last 50 of 10,000 commits, first request of a new server, p99 under 50 ms',
      p99Under(HISTORY_HTTP, 50),
    ),
    on(
      results,
      WATCH_ALL_LAST,
      "a push waking 10,000 watchers, p99 under 1 s from its 200 to the last watcher's answer",
      lastWatcherWithin(1000),
    ),
    on(
      results,
      WATCH_ALL,
      "a push waking 10,000 watchers, p99 under 1 s from its 200 to each watcher's answer",
      (result) => {
        if (!result.title.includes('10,000')) return { met: undefined, measured: `not checked: ${result.title}` };
        return p99Under(CFGHUB_WATCH, 1000)(result);
      },
    ),
    on(
      results,
      WATCH_ALL_LAST,
      "a push waking 10,000 watchers, to the last watcher at least as fast as etcd's watch",
      ratioAtLeast(CFGHUB_WATCH, ETCD_WATCH, 1),
    ),
    on(
      results,
      WATCH_ONE,
      'a push changing one context, its 100 of 10,000 watchers answered, p99 under 50 ms',
      p99Under(CFGHUB_WATCH, 50),
    ),
    on(results, WATCH_ONE, 'no unaffected watcher answered', (result) => {
      const note = result.notes.find((n) => n.startsWith('unaffected watchers answered'))!;
      const count = Number(/cfghub watch (\d+)/.exec(note)?.[1]);
      return { met: count === 0, measured: `${count} answered over every round` };
    }),
    on(
      results,
      CLONE_SCENARIO,
      'git clone over HTTP of 10,000 keys and 1,000 commits, at most 1.5 times as long as git clone from its folder on disk',
      cloneWithin(1.5),
    ),
  ];
}
