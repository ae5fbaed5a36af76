/**
 * How much to measure. `--quick` keeps the whole run under two minutes (fewer rounds, shorter and
 * fewer load slices, fewer restarts; the listing fixture is reused from bench/.fixtures/); the
 * full run gives p99 figures that rest on a few hundred samples. The watch scenario holds its
 * 10,000 watchers in both (the watch target is about that many), with fewer pushes in a quick
 * run; opening and closing them adds about two minutes.
 */
import type { HaPushPlan } from './haPush.js';

export interface RoundPlan {
  /** Untimed rounds first: JIT, caches, connection, page cache. */
  readonly warmup: number;
  readonly rounds: number;
}

/** The scenarios, in the order a run measures them; `--only` picks some. */
export const SCENARIOS = [
  'push',
  'concurrent',
  'ha',
  'listing',
  'pull',
  'restart',
  'memory',
  'history',
  'clone',
  'watch',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Plan {
  readonly mode: 'quick' | 'full';
  /** The scenarios to run: all of them unless `--only` names some (a partial run leaves docs/performance.md alone). */
  readonly only: ReadonlySet<ScenarioName>;
  readonly partial: boolean;
  /**
   * `npm test`'s time on this machine, in seconds, from the suite's own run (`--suite-seconds N`):
   * not a bench scenario, stated on the page beside the targets when given.
   */
  readonly suiteSeconds?: number;
  /** Sizes of the repositories pushed into. */
  readonly keyCounts: readonly number[];
  /** Keys changed per push, with the rounds for each. */
  readonly pushes: ReadonlyArray<{ readonly keysPerPush: number } & RoundPlan>;
  /** Listings: of new server instances, untimed, timed, and each right after one push. */
  readonly listing: {
    readonly cold: number;
    readonly warmup: number;
    readonly warm: number;
    readonly afterPush: number;
  };
  readonly concurrent: ConcurrentPlan;
  /** Pushes beside the HA mode: a plain server, an HA leader and etcd (bench/haPush.ts). */
  readonly ha: HaPushPlan;
  readonly pull: PullPlan;
  readonly restart: RestartPlan;
  readonly memory: MemoryPlan;
  readonly history: HistoryPlan;
  readonly clone: ClonePlan;
  readonly watch: WatchPlan;
}

/** Watchers held at once and woken by pushes. */
export interface WatchPlan {
  readonly watchers: number;
  /** Contexts of one repository the watchers are spread over. */
  readonly contexts: number;
  /** Processes holding the watchers' connections (not the bench's own, see scenarios/watch.ts). */
  readonly clientProcesses: number;
  /** Pushes changing one context, then pushes changing every context. */
  readonly oneRounds: number;
  readonly allRounds: number;
}

/** History of the last 50 commits on a repository with 10,000 commits. */
export interface HistoryPlan {
  readonly commits: number;
  /** First requests of new server instances. */
  readonly cold: number;
  /** Pages of commits not summarized before, on a warm server. */
  readonly fresh: number;
  readonly warmup: number;
  readonly warm: number;
  /** Rounds of a push, then the first page. */
  readonly afterPush: number;
}

/** Many clients pushing at once. */
export interface ConcurrentPlan {
  readonly clients: number;
  readonly warmupSeconds: number;
  /** Timed slices per implementation, in rotating order. */
  readonly slices: number;
  readonly sliceSeconds: number;
}

/** Resident memory with many repositories loaded. */
export interface MemoryPlan {
  readonly repositories: number;
  readonly keyCount: number;
}

/** Clone over HTTP against clone from disk. */
export interface ClonePlan {
  readonly keyCount: number;
  readonly commits: number;
  /** Keys changed by each commit after the first. */
  readonly keysPerCommit: number;
  readonly warmup: number;
  /** Rounds of one clone each way. */
  readonly rounds: number;
}

/** Pull throughput against a static endpoint on the same server. */
export interface PullPlan {
  readonly keyCount: number;
  /** Characters per value: sized so the pulled context's JSON is about 60 KB. */
  readonly valueLength: number;
  readonly connections: readonly number[];
  /** One untimed slice per endpoint first, at each connection count: JIT, caches, connections. */
  readonly warmupSeconds: number;
  /** Timed slices per endpoint, alternating pull and static (ABBA), each `sliceSeconds` long. */
  readonly slices: number;
  readonly sliceSeconds: number;
}

/** The first pull after a restart of `cfghub serve`. */
export interface RestartPlan {
  readonly keyCount: number;
  readonly repetitions: number;
}

const HA_CLIENTS = 16;

const PULL = { keyCount: 1_000, valueLength: 36, connections: [1, 16] } as const;
const RESTART_KEYS = 10_000;
const MEMORY: MemoryPlan = { repositories: 100, keyCount: 1_000 };
const HISTORY_COMMITS = 10_000;
const WATCH = { watchers: 10_000, contexts: 100, clientProcesses: 4 } as const;
const CLONE = { keyCount: 10_000, commits: 1_000, keysPerCommit: 10 } as const;

type Amounts = Omit<Plan, 'only' | 'partial' | 'suiteSeconds'>;

const QUICK: Amounts = {
  mode: 'quick',
  keyCounts: [1_000, 10_000],
  pushes: [
    { keysPerPush: 1, warmup: 4, rounds: 30 },
    { keysPerPush: 100, warmup: 2, rounds: 8 },
  ],
  listing: { cold: 2, warmup: 2, warm: 30, afterPush: 10 },
  concurrent: { clients: 16, warmupSeconds: 1, slices: 2, sliceSeconds: 2 },
  ha: { rounds: 2, sequential: 30, clients: HA_CLIENTS, concurrentSeconds: 2 },
  pull: { ...PULL, warmupSeconds: 1, slices: 2, sliceSeconds: 1 },
  restart: { keyCount: RESTART_KEYS, repetitions: 3 },
  memory: MEMORY,
  history: { commits: HISTORY_COMMITS, cold: 5, fresh: 20, warmup: 3, warm: 30, afterPush: 30 },
  clone: { ...CLONE, warmup: 1, rounds: 3 },
  watch: { ...WATCH, oneRounds: 3, allRounds: 3 },
};

const FULL: Amounts = {
  mode: 'full',
  keyCounts: [1_000, 10_000],
  pushes: [
    { keysPerPush: 1, warmup: 10, rounds: 400 },
    { keysPerPush: 100, warmup: 3, rounds: 100 },
  ],
  listing: { cold: 5, warmup: 3, warm: 200, afterPush: 50 },
  concurrent: { clients: 16, warmupSeconds: 2, slices: 6, sliceSeconds: 3 },
  ha: { rounds: 5, sequential: 100, clients: HA_CLIENTS, concurrentSeconds: 5 },
  pull: { ...PULL, warmupSeconds: 2, slices: 8, sliceSeconds: 3 },
  restart: { keyCount: RESTART_KEYS, repetitions: 10 },
  memory: MEMORY,
  history: { commits: HISTORY_COMMITS, cold: 20, fresh: 100, warmup: 5, warm: 200, afterPush: 200 },
  clone: { ...CLONE, warmup: 2, rounds: 10 },
  watch: { ...WATCH, oneRounds: 10, allRounds: 10 },
};

/** The HA push rounds of a quick or a full run (bench/ha.ts runs them with its own options). */
export function haPushPlan(mode: Plan['mode']): HaPushPlan {
  return (mode === 'quick' ? QUICK : FULL).ha;
}

/** `[--quick] [--only NAME[,NAME…]] [--suite-seconds N]`. */
export function planFromArgs(args: readonly string[]): Plan {
  let quick = false;
  let only: ScenarioName[] | undefined;
  let suiteSeconds: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--suite-seconds' || arg.startsWith('--suite-seconds=')) {
      const value = arg === '--suite-seconds' ? args[++i] : arg.slice('--suite-seconds='.length);
      suiteSeconds = Number(value);
      if (value === undefined || value.trim() === '' || !Number.isFinite(suiteSeconds) || suiteSeconds <= 0)
        throw new Error(
          `--suite-seconds takes npm test's time in seconds, a positive number; got ${value ?? 'nothing'}`,
        );
    } else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? args[++i] : arg.slice('--only='.length);
      const names = (value ?? '').split(',').filter(Boolean);
      const unknown = names.find((name) => !(SCENARIOS as readonly string[]).includes(name));
      if (names.length === 0 || unknown !== undefined)
        throw new Error(
          `--only takes scenario names from ${SCENARIOS.join(', ')}${unknown ? `; ${unknown} is none of them` : ''}`,
        );
      only = names as ScenarioName[];
    } else
      throw new Error(
        `unknown argument ${arg}; the options are --quick, --only ${SCENARIOS.join(',')} and --suite-seconds N`,
      );
  }
  return {
    ...(quick ? QUICK : FULL),
    only: new Set(only ?? SCENARIOS),
    partial: only !== undefined,
    ...(suiteSeconds !== undefined ? { suiteSeconds } : {}),
  };
}
