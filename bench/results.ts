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
   * Median of per-round speed-ups over the scenario's reference; undefined for the reference itself.
   * For throughput, per slice pair: this implementation's requests per second over the reference's.
   */
  readonly speedup?: number;
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
  /** The implementation the ratios are relative to, if the scenario has one. */
  readonly reference?: string;
  readonly measurements: readonly Measurement[];
  /** Anything the reader must know to trust the figures (e.g. "trees identical"). */
  readonly notes: readonly string[];
  /** True when an operations-per-second figure would mean nothing (a one-off timing such as a restart). */
  readonly hideRate?: boolean;
}

export function measurementOf(result: ScenarioResult, implementation: string): Measurement {
  const found = result.measurements.find((m) => m.implementation === implementation);
  if (!found) throw new Error(`scenario ${result.id} has no measurement of ${implementation}`);
  return found;
}
