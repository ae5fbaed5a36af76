/**
 * Summary statistics of latency samples (milliseconds). Percentiles use the nearest-rank method:
 * with few samples p99 is simply the largest one, which is the honest answer, not an interpolation.
 */

export interface Summary {
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  /** Operations per second of one sequential client: samples divided by the time they took. */
  readonly opsPerSecond: number;
}

/** The nearest-rank percentile `p` (0-100) of samples, which need not be sorted. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('percentile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function summarize(samples: readonly number[]): Summary {
  const total = samples.reduce((sum, value) => sum + value, 0);
  return {
    samples: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    mean: total / samples.length,
    opsPerSecond: samples.length / (total / 1000),
  };
}

/**
 * Speed-up of `candidate` over `reference`, computed round by round (reference time divided by
 * candidate time of the same round) and then taking the median. Pairing by round cancels noise
 * that hits both alike (a slow disk second, a busy neighbour), which a ratio of two p50s does not.
 */
export function pairedSpeedup(reference: readonly number[], candidate: readonly number[]): number {
  if (reference.length !== candidate.length) throw new Error('paired samples must have the same length');
  return median(reference.map((ref, i) => ref / candidate[i]));
}
