/** What a scenario hands to the report: per implementation, its samples and their summary. */
import type { SliceResult } from './load.js';
import type { Histogram, Summary } from './stats.js';

export interface Measurement {
  readonly implementation: string;
  /**
   * Latencies in milliseconds, in round order (so they pair with the reference's). Empty for a
   * throughput measurement, whose requests are too many to list: see `load`.
   */
  readonly samples: readonly number[];
  readonly summary: Summary;
  /**
   * Speed-up over each of the scenario's references, by the reference's implementation name: the
   * median of per-round speed-ups (reference time over this one's, same change set), or for
   * throughput, per slice pair, this implementation's requests per second over the reference's.
   * Absent for a reference itself.
   */
  readonly speedups?: Readonly<Record<string, number>>;
  /** A throughput measurement's raw figures: each slice as the load generator reported it, and every latency pooled. */
  readonly load?: {
    readonly generator: string;
    readonly connections: number;
    readonly slices: ReadonlyArray<Omit<SliceResult, 'histogram'>>;
    readonly histogram: Histogram;
  };
}

export interface ScenarioResult {
  /** Stable id the targets refer to, e.g. `push-k1-n10000`. */
  readonly id: string;
  readonly title: string;
  /** The implementations the ratios are relative to, if the scenario has any. */
  readonly references?: readonly string[];
  readonly measurements: readonly Measurement[];
  /** Anything the reader must know to trust the figures (e.g. "trees identical"). */
  readonly notes: readonly string[];
  /** True when an operations-per-second figure would mean nothing (a one-off timing such as a restart). */
  readonly hideRate?: boolean;
  /** A memory scenario's figure: the server's resident set, in MiB (it has no latency rows). */
  readonly residentMiB?: number;
}

export function measurementOf(result: ScenarioResult, implementation: string): Measurement {
  const found = result.measurements.find((m) => m.implementation === implementation);
  if (!found) throw new Error(`scenario ${result.id} has no measurement of ${implementation}`);
  return found;
}

/** A measurement's speed-up over one reference; throws when it was not computed. */
export function speedupOver(result: ScenarioResult, implementation: string, reference: string): number {
  const speedup = measurementOf(result, implementation).speedups?.[reference];
  if (speedup === undefined)
    throw new Error(`scenario ${result.id} has no ratio of ${implementation} over ${reference}`);
  return speedup;
}
