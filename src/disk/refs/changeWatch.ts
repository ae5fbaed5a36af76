/**
 * Tells a reader whether a file it keeps in memory can have changed on disk since it last read
 * it, so that reading an unchanged file costs no system call at all. Used for a repository's head
 * ref (`refs/heads/main`) and for the token file.
 *
 * Why: every read must see the newest commit, including commits made by other processes (plain
 * git, a second server), and a revoked token must stop working at once. A `stat` of the ref file
 * per read did that, and cost about a quarter of a cached pull's CPU (15 µs of 57 µs, measured
 * with 16 connections). Instead, inotify (through fs.watch) watches the folders from the root
 * down to the file's folder: a file replaced shows as an event in its folder, and a folder on the
 * way removed, renamed or replaced shows as an event in its parent, which also re-arms the watches
 * on the new folders.
 *
 * Why a read that follows a change by another process still sees it: the change's rename queues
 * the inotify event before the writer can answer its own client, so the event is ready no later
 * than any request sent after that answer. The event loop does NOT hand ready descriptors over in
 * the order they became ready: libuv's epoll is level-triggered, and a socket reported in one
 * batch stays queued at its old place in the kernel's ready list, so a request that arrives on it
 * later comes out ahead of a watch event queued before it (seen under load as a stale pull; the
 * kernel also defers to the next batch events that arrive while it fills one). Hence the rule:
 * a request awaits `afterQueuedWatchEvents()` before it trusts a watch (AccessPolicy does, for
 * every route); by then every event queued before the request arrived has been handed over.
 * Safety nets: where fs.watch cannot arm (not Linux, whose inotify is what the argument above
 * rests on; the watch limit reached), the caller reads the file every time, as before; and a file
 * trusted for longer than `RECHECK_MS` is checked again, in case the kernel dropped events (its
 * queue overflowed).
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';

/** How long an unchanged file is trusted without looking at the disk, whatever the watches say. */
export const RECHECK_MS = 1_000;
/** How long to wait before trying again to arm watches that could not be armed. */
const RETRY_MS = 1_000;

let queuedEvents: Promise<void> | undefined;

/**
 * Resolves once the event loop has polled twice more: every watch event queued before the call
 * has then been handed to its watch. A request's own socket and a watch event become ready in
 * either order within one poll (see above), and an event queued while the kernel fills one poll's
 * batch comes in the next, so the wait lasts until the check phase after the following poll.
 * Callers of one loop turn share the wait: one pair of immediates however many requests.
 */
export function afterQueuedWatchEvents(): Promise<void> {
  queuedEvents ??= new Promise((resolve) =>
    setImmediate(() => {
      queuedEvents = undefined;
      // An immediate set during the check phase runs in the next turn's, after its poll.
      setImmediate(resolve);
    }),
  );
  return queuedEvents;
}

/** A watched folder and the entry in it on the way to the file; undefined for the file's own folder. */
interface Link {
  readonly folder: string;
  readonly next?: string;
}

export class ChangeWatch {
  private watchers: FSWatcher[] = [];
  private armed = false;
  /** Nothing on the way to the file changed since `beginCheck`. */
  private quiet = false;
  private checkedAt = 0;
  private retryAt = 0;
  private readonly links: readonly Link[];
  /** Called when an event says the file may have changed (watchers of a head wake on it; see service/answers/watchHub.ts). */
  onChange?: () => void;

  /**
   * Watches `folder` (inside `root`) for changes to the entries named `names` (any entry when
   * left out), and every folder from `root` down to it for being moved or removed.
   */
  constructor(
    root: string,
    folder: string,
    private readonly names?: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    root = resolve(root);
    const links: Link[] = [{ folder: resolve(folder) }];
    for (let child = resolve(folder); child.startsWith(root + sep); child = dirname(child)) {
      links.push({ folder: dirname(child), next: basename(child) });
    }
    this.links = links;
  }

  /** The watch of a repository's head ref: its `refs/heads` folder, any entry. */
  static ofHead(root: string, gitdir: string, now?: () => number): ChangeWatch {
    return new ChangeWatch(root, join(gitdir, 'refs', 'heads'), undefined, now);
  }

  /** True when what was read after the last `beginCheck` is still what is on disk. */
  unchanged(): boolean {
    return this.quiet && this.now() - this.checkedAt < RECHECK_MS;
  }

  /**
   * Call right before reading the file from disk: arms the watches first, so that a change after
   * this point shows, and trusts the read from then on.
   */
  beginCheck(): void {
    this.quiet = this.arm();
    this.checkedAt = this.now();
  }

  /** Forgets the last read: the next read goes to the disk (after a write of one's own, or a failed read). */
  invalidate(): void {
    this.quiet = false;
  }

  close(): void {
    this.quiet = false;
    this.armed = false;
    for (const watcher of this.watchers) watcher.close();
    this.watchers = [];
  }

  private arm(): boolean {
    if (this.armed) return true;
    if (process.platform !== 'linux' || this.now() < this.retryAt) return false;
    try {
      for (const link of this.links) {
        const watcher = watch(link.folder, { persistent: false }, (_event, name) => this.changed(link, name));
        watcher.on('error', () => this.close());
        this.watchers.push(watcher);
      }
      this.armed = true;
      return true;
    } catch {
      // No inotify, the limit of watches reached, or a folder gone: read the file every time.
      this.close();
      this.retryAt = this.now() + RETRY_MS;
      return false;
    }
  }

  private changed(link: Link, name: string | Buffer | null): void {
    const entry = name === null ? null : name.toString();
    // The folder itself (inotify names it by its own name) or the next one on the way changed:
    // the watches may now be on folders no longer in place, so they are armed again.
    if (entry === null || entry === basename(link.folder) || (link.next !== undefined && entry === link.next))
      this.close();
    else if (link.next === undefined && (this.names === undefined || this.names.includes(entry))) this.quiet = false;
    else return;
    this.onChange?.();
  }
}
