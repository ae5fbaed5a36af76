/** Pauses between tries of a watch that cannot reach its server: doubling from `firstMs` up to `maxMs`, with jitter so that many clients of a restarted server do not all come back at once. */
export interface BackOff {
  readonly firstMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACK_OFF: BackOff = { firstMs: 100, maxMs: 5_000 };

export function backOff(options: Partial<BackOff> = {}): { next(): number; reset(): void } {
  const { firstMs, maxMs } = { ...DEFAULT_BACK_OFF, ...options };
  let current = firstMs;
  return {
    next() {
      const pause = current / 2 + Math.random() * (current / 2);
      current = Math.min(current * 2, maxMs);
      return Math.round(pause);
    },
    reset() {
      current = firstMs;
    },
  };
}
