/**
 * Tells a repository whether its head ref can have changed since it last read it, so that a read
 * of an unchanged head costs no system call at all.
 *
 * Why: every read must see the newest commit, including commits made by other processes (plain
 * git, a second server). A `stat` of the ref file per read did that, and cost about a quarter of
 * a cached pull's CPU (15 µs of 57 µs, measured with 16 connections). Instead, inotify (through
 * fs.watch) watches the folders from the repositories' root down to `refs/heads`: a new ref file
 * shows as an event in `refs/heads`, and a folder on the way removed, renamed or replaced shows as
 * an event in its parent, which also re-arms the watches on the new folders.
 *
 * Why a read that follows a commit of another process still sees it: the commit's rename queues
 * the inotify event before the writer can answer its own client, so the event is ready no later
 * than any request sent after that answer, and the event loop hands ready descriptors over in the
 * order they became ready. Two safety nets: where fs.watch cannot arm (no inotify, the watch limit
 * reached), the caller reads the ref file every time, as before; and a head trusted for longer
 * than `RECHECK_MS` is checked again, in case the kernel dropped events (its queue overflowed).
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** How long an unchanged head is trusted without looking at the disk, whatever the watches say. */
export const RECHECK_MS = 1_000;
/** How long to wait before trying again to arm watches that could not be armed. */
const RETRY_MS = 1_000;

/** A watched folder and the entry in it on the way to the ref; undefined for `refs/heads` itself. */
interface Link {
  readonly folder: string;
  readonly next?: string;
}

export class HeadWatch {
  private watchers: FSWatcher[] = [];
  private armed = false;
  /** Nothing on the way to the ref changed since `beginCheck`. */
  private quiet = false;
  private checkedAt = 0;
  private retryAt = 0;
  private readonly links: readonly Link[];

  /** `root` is the folder the registry searches; `gitdir` lies inside it. */
  constructor(
    root: string,
    gitdir: string,
    private readonly now: () => number = Date.now,
  ) {
    root = resolve(root);
    gitdir = resolve(gitdir);
    const links: Link[] = [{ folder: join(gitdir, 'refs', 'heads') }, { folder: join(gitdir, 'refs'), next: 'heads' }, { folder: gitdir, next: 'refs' }];
    // Every folder from the root down to the repository: moving any of them moves the ref.
    for (let child = gitdir; dirname(child) !== child && child !== root && child.startsWith(root); child = dirname(child)) {
      links.push({ folder: dirname(child), next: basename(child) });
    }
    this.links = links;
  }

  /** True when the head read at the last `beginCheck` is still the head on disk. */
  unchanged(): boolean {
    return this.quiet && this.now() - this.checkedAt < RECHECK_MS;
  }

  /**
   * Call right before reading the ref from disk: arms the watches first, so that a change after
   * this point shows, and trusts the read from then on.
   */
  beginCheck(): void {
    this.quiet = this.arm();
    this.checkedAt = this.now();
  }

  /** Forgets the head read last: the next read goes to the disk (after a commit, or a failed read). */
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
    if (this.now() < this.retryAt) return false;
    try {
      for (const link of this.links) {
        const watcher = watch(link.folder, { persistent: false }, (_event, name) => this.changed(link, name));
        watcher.on('error', () => this.close());
        this.watchers.push(watcher);
      }
      this.armed = true;
      return true;
    } catch {
      // No inotify, the limit of watches reached, or a folder gone: read the ref every time.
      this.close();
      this.retryAt = this.now() + RETRY_MS;
      return false;
    }
  }

  private changed(link: Link, name: string | Buffer | null): void {
    const entry = name === null ? null : name.toString();
    // The folder itself (inotify names it by its own name) or the next one on the way changed:
    // the watches may now be on folders no longer in place, so they are armed again.
    if (entry === null || entry === basename(link.folder) || (link.next !== undefined && entry === link.next)) this.close();
    else if (link.next === undefined) this.quiet = false;
  }
}
