/**
 * A small seeded random generator (mulberry32), so every run writes the same key names, contexts
 * and change sets, and two runs differ only by the machine, never by the workload.
 */

export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, bound). */
  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** `count` distinct integers from [0, bound), by a partial Fisher-Yates shuffle. */
  distinct(count: number, bound: number): number[] {
    if (count > bound) throw new Error(`cannot pick ${count} distinct numbers below ${bound}`);
    const chosen = new Map<number, number>();
    const result: number[] = [];
    for (let i = 0; i < count; i++) {
      const j = i + this.int(bound - i);
      result.push(chosen.get(j) ?? j);
      chosen.set(j, chosen.get(i) ?? i);
    }
    return result;
  }

  /** Lower-case letters and digits. */
  word(length: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let text = '';
    for (let i = 0; i < length; i++) text += alphabet[this.int(alphabet.length)];
    return text;
  }
}
