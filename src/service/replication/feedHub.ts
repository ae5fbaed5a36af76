/**
 * The primary's side of the change feed: replicas wait for "any repository's branches or tags, a
 * token set, or the folder followed, differs from what I hold". One timer looks at the folder for all of them while
 * any waits: a head read costs no system call while its inotify watch is quiet (changeWatch.ts),
 * so a look is a folder listing or two, and commits by plain git or another process show up just
 * like the server's own pushes.
 */
import type { RepositoryLocation } from '../../disk/registry.js';
import {
  currentState,
  currentStateInSlices,
  sameAsHeld,
  type HeldState,
  type ReplicationState,
  type StateSource,
} from './state.js';

/** How often the folder is looked at while a replica waits: the feed's share of replication lag. */
export const FEED_TICK_MS = 50;
/** Replicas that may wait at once; more get a 503 (each waiting replica holds one connection). */
export const MAX_FEED_WAITERS = 64;
/**
 * How long a listing of the folder is used for the looks: the heads are looked at every tick, but
 * which repositories exist only this often, since a listing is most of a look's cost (about 10 ms
 * for 300 repositories on the loaded 2-core machine, against microseconds for the heads). A
 * repository created or deleted shows within this long; a deleted one's head reads '' at once.
 */
export const LISTING_MS = 1_000;

interface Waiter {
  readonly held: HeldState;
  readonly changed: (state: ReplicationState) => void;
  readonly ticked: () => void;
}

export class FeedHub {
  private readonly waiters = new Set<Waiter>();
  private timer: NodeJS.Timeout | undefined;
  private listed: { at: number; locations: readonly RepositoryLocation[] } | undefined;
  private looking = false;

  constructor(private readonly source: StateSource) {}

  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Calls `changed` once the state differs from `held` (after the next look, which starts at once
   * if none is under way), `ticked` after every look that found it unchanged; returns the function
   * that stops waiting. Neither is ever called before this returns (a look awaits at least once),
   * so a caller may call the returned function from them.
   */
  wait(held: HeldState, changed: (state: ReplicationState) => void, ticked: () => void): () => void {
    const waiter: Waiter = { held, changed, ticked };
    this.waiters.add(waiter);
    this.timer ??= setInterval(() => void this.look(), FEED_TICK_MS);
    void this.look();
    return () => this.drop(waiter);
  }

  /** Answers every waiter with the state as it is now (the server is shutting down). */
  close(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    if (waiters.length > 0) {
      const state = currentState(this.source);
      for (const waiter of waiters) waiter.changed(state);
    }
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private drop(waiter: Waiter): void {
    this.waiters.delete(waiter);
    if (this.waiters.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * One look at the folder, its heads read in slices (a head read over a second ago is read
   * from disk again, and they all come due in the same tick): one look at a time, a tick that
   * comes during a look is skipped.
   */
  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    let state: ReplicationState;
    try {
      const now = performance.now();
      if (!this.listed || now - this.listed.at >= LISTING_MS)
        this.listed = { at: now, locations: this.source.registry.locations() };
      state = await currentStateInSlices(this.source, this.listed.locations);
    } catch {
      return; // the folder or token file unreadable for a moment: look again next tick
    } finally {
      this.looking = false;
    }
    for (const waiter of [...this.waiters]) {
      if (sameAsHeld(state, waiter.held)) waiter.ticked();
      else {
        this.drop(waiter);
        waiter.changed(state);
      }
    }
  }
}
