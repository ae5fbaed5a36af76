/**
 * The ends of many waits with one timer: a timing wheel of TICK_MS slots. Ten
 * thousand held watches cost ten thousand entries in sets, not ten thousand Node timers with a
 * closure each; adding and removing an entry is O(1), and one interval (running only while the
 * wheel holds something) moves the hand.
 *
 * A wait never ends early: its deadline is rounded up to the next tick, so it ends between 0 and
 * TICK_MS (plus the event loop's delay) after it was due.
 */

/** Something that waits: the wheel keeps its tick in `tick`. */
export interface Waiting {
  tick: number;
}

export class DeadlineWheel<T extends Waiting> {
  private readonly slots: Set<T>[];
  /** The next tick whose slot has not been swept. */
  private hand = 0;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * `expire` is called once for each entry whose deadline passed (it is out of the wheel by then).
   * `spanMs` must exceed the longest delay ever added.
   */
  constructor(
    private readonly expire: (item: T) => void,
    private readonly tickMs = 100,
    spanMs = 310_000,
  ) {
    this.slots = Array.from({ length: Math.ceil(spanMs / tickMs) + 1 }, () => new Set<T>());
  }

  get size(): number {
    return this.count;
  }

  /** Holds `item` until `delayMs` from now (at the latest a tick after), unless deleted first. */
  add(item: T, delayMs: number): void {
    const now = Date.now();
    if (delayMs > (this.slots.length - 1) * this.tickMs)
      throw new RangeError(`a delay of ${delayMs} ms is longer than the wheel`);
    if (this.count === 0) this.start(now);
    item.tick = Math.ceil((now + delayMs) / this.tickMs);
    this.slots[item.tick % this.slots.length].add(item);
    this.count++;
  }

  /** Takes `item` out (it will not expire); false when it was not in the wheel. */
  delete(item: T): boolean {
    if (!this.slots[item.tick % this.slots.length].delete(item)) return false;
    if (--this.count === 0) this.stop();
    return true;
  }

  private start(now: number): void {
    this.hand = Math.floor(now / this.tickMs);
    this.timer = setInterval(() => this.sweep(), this.tickMs);
    this.timer.unref(); // the server keeps the process alive, not its waits
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Expires every entry due by now: each slot from the hand up to the current tick. */
  private sweep(): void {
    const now = Math.floor(Date.now() / this.tickMs);
    for (; this.hand <= now && this.count > 0; this.hand++) {
      const slot = this.slots[this.hand % this.slots.length];
      for (const item of slot) {
        if (item.tick > now) continue; // a later turn of the wheel (cannot happen within the span; kept for safety)
        slot.delete(item);
        this.count--;
        this.expire(item);
      }
    }
    if (this.count === 0) this.stop();
  }
}
