/** What a scenario hands to the report: per implementation, its samples and their summary. */
import type { Summary } from './stats.js';

export interface Measurement {
  readonly implementation: string;
  /** Latencies in milliseconds, in round order (so they pair with the reference's). */
  readonly samples: readonly number[];
  readonly summary: Summary;
  /** Median of per-round speed-ups over the scenario's reference; undefined for the reference itself. */
  readonly speedup?: number;
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
}

export function measurementOf(result: ScenarioResult, implementation: string): Measurement {
  const found = result.measurements.find((m) => m.implementation === implementation);
  if (!found) throw new Error(`scenario ${result.id} has no measurement of ${implementation}`);
  return found;
}
