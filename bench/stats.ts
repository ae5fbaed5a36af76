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

/**
 * Latencies as a histogram: [microseconds, count] pairs, the form wrk reports them in (1 µs
 * buckets). A throughput run makes hundreds of thousands of requests; a histogram keeps them all
 * exactly, so slices can be pooled into true percentiles rather than averaged ones.
 */
export type Histogram = ReadonlyArray<readonly [micros: number, count: number]>;

/** Adds histograms bucket by bucket; the result is sorted by latency. */
export function mergeHistograms(histograms: readonly Histogram[]): Histogram {
  const counts = new Map<number, number>();
  for (const histogram of histograms)
    for (const [micros, count] of histogram) counts.set(micros, (counts.get(micros) ?? 0) + count);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]);
}

/** The nearest-rank percentile `p` (0-100) of a histogram, in milliseconds. */
export function histogramPercentile(histogram: Histogram, p: number): number {
  const sorted = [...histogram].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) throw new Error('percentile of an empty histogram');
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [micros, count] of sorted) {
    seen += count;
    if (seen >= rank) return micros / 1000;
  }
  return sorted[sorted.length - 1][0] / 1000;
}

/**
 * The summary of a throughput run: `samples` is the number of requests, `opsPerSecond` the
 * requests per second of all connections together (requests divided by the time the load ran),
 * latencies from the histogram. The histogram may hold more entries than there were requests:
 * wrk adds synthetic ones to correct for coordinated omission (see wrk.ts).
 */
export function summarizeLoad(histogram: Histogram, requests: number, seconds: number): Summary {
  const entries = histogram.reduce((sum, [, count]) => sum + count, 0);
  const totalMicros = histogram.reduce((sum, [micros, count]) => sum + micros * count, 0);
  return {
    samples: requests,
    p50: histogramPercentile(histogram, 50),
    p99: histogramPercentile(histogram, 99),
    mean: totalMicros / entries / 1000,
    opsPerSecond: requests / seconds,
  };
}
