/**
 * Watches of `pull` and `rawFile` (issue 18, item 1): a request with `If-None-Match` and `Wait`
 * whose answer has not changed is held here until the answer for its context would change, or
 * its wait ends, or the server shuts down.
 *
 * Why it scales to 10,000 watchers: watchers are grouped by everything that makes their answer
 * (repository, endpoint, the headers that vary it, the security groups unlocked), and a group's
 * answer is made once per new head, through the read cache, however many watchers it holds. A
 * watcher is answered only when that answer's ETag (content-derived, see readRoutes.ts) is not
 * the one it holds, so a commit that changes nothing for a context wakes none of its watchers.
 *
 * What wakes a repository's watchers: its head-change signal (GitRepository.onHeadChange), which
 * fires after a commit of this process and on the inotify event of a ref replaced by plain git or
 * another process. A check every RECHECK_MS per watched repository is the safety net where
 * inotify is missing or dropped events (the head watch then reads the ref again).
 *
 * Bounded: at most `maxWatchers` held at once (503 over it, with Retry-After); groups are made
 * one after the other and answers are written in slices of ANSWERS_PER_TURN, so no single piece of
 * event-loop work grows with the number of watchers.
 */
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RECHECK_MS } from '../disk/changeWatch.js';
import type { GitRepository } from '../disk/repository.js';
import { HttpError } from './errors.js';
import type { CachedAnswer } from './readCache.js';

/** Longest wait a request may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 300;
/** Watchers held at once unless `CFGHUB_MAX_WATCHERS` or `--max-watchers` says otherwise. */
export const DEFAULT_MAX_WATCHERS = 20_000;
/** Watchers answered before the event loop gets a turn for other work. */
const ANSWERS_PER_TURN = 500;

/** How a wait ends: a new answer, an error making it (the route answers it), or nothing new (304). */
export type WaitResult = { answer: CachedAnswer } | { error: unknown } | undefined;

interface Watcher {
  /** Whether the client already holds this ETag (its If-None-Match names it). */
  readonly holds: (etag: string) => boolean;
  /** The head the client's answer is known to be current for. */
  head: string;
  finish(result: WaitResult): void;
}

interface Group {
  /** Makes the group's answer at a commit (through the read cache). */
  readonly answerAt: (commitId: string) => Promise<CachedAnswer>;
  readonly watchers: Set<Watcher>;
}

class RepositoryWatch {
  readonly groups = new Map<string, Group>();
  private running = false;
  private again = false;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly repository: GitRepository,
    private readonly onEmpty: () => void,
  ) {
    this.unsubscribe = repository.onHeadChange(() => this.wake());
    this.timer = setInterval(() => this.wake(), RECHECK_MS).unref();
  }

  get size(): number {
    let size = 0;
    for (const group of this.groups.values()) size += group.watchers.size;
    return size;
  }

  /** Looks at the head, and answers every watcher whose answer changed; coalesces calls while it runs. */
  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run().finally(() => {
      this.running = false;
      if (this.groups.size === 0) this.close();
    });
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      let head: string;
      try {
        head = this.repository.head();
      } catch (error) {
        for (const group of [...this.groups.values()]) for (const watcher of [...group.watchers]) watcher.finish({ error });
        return;
      }
      for (const group of [...this.groups.values()]) {
        if (![...group.watchers].some((w) => w.head !== head)) continue;
        let result: WaitResult;
        try {
          result = { answer: await group.answerAt(head) };
        } catch (error) {
          result = { error };
        }
        let answered = 0;
        for (const watcher of [...group.watchers]) {
          if ('answer' in result && watcher.holds(result.answer.etag)) {
            watcher.head = head;
            continue;
          }
          watcher.finish(result);
          if (++answered % ANSWERS_PER_TURN === 0) await nextTurn();
        }
        await nextTurn();
      }
    } while (this.again);
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.timer);
    this.onEmpty();
  }
}

export interface WaitRequest {
  readonly repository: GitRepository;
  /** Everything that makes the answer besides the commit: watchers with the same key share one answer per head. */
  readonly groupKey: string;
  readonly answerAt: (commitId: string) => Promise<CachedAnswer>;
  readonly holds: (etag: string) => boolean;
  /** The head the client's current answer was made at. */
  readonly head: string;
  readonly waitMs: number;
  /** Closing it (the client went away) ends the wait. */
  readonly res: ServerResponse;
}

export class WatchHub {
  private readonly repositories = new Map<GitRepository, RepositoryWatch>();
  private count = 0;
  private closed = false;
  private readonly open = new Set<Watcher>();

  constructor(readonly maxWatchers = DEFAULT_MAX_WATCHERS) {}

  /** True once close was called: answers say `Connection: close`. */
  get closing(): boolean {
    return this.closed;
  }

  /** Watchers held now. */
  get size(): number {
    return this.count;
  }

  /** Holds a request until its answer changes (resolves with it), its wait ends or the server shuts down (undefined). */
  wait(request: WaitRequest): Promise<WaitResult> {
    if (this.closed) return Promise.resolve(undefined);
    if (this.count >= this.maxWatchers) {
      request.res.setHeader('Retry-After', '1');
      throw new HttpError(503, 'too_many_watchers', `this server holds ${this.maxWatchers} watches at most; try again shortly, or poll`);
    }
    let watch = this.repositories.get(request.repository);
    if (!watch) {
      watch = new RepositoryWatch(request.repository, () => this.repositories.delete(request.repository));
      this.repositories.set(request.repository, watch);
    }
    const repositoryWatch = watch;
    let group = watch.groups.get(request.groupKey);
    if (!group) {
      group = { answerAt: request.answerAt, watchers: new Set() };
      watch.groups.set(request.groupKey, group);
    }
    const members = group;
    this.count++;
    return new Promise<WaitResult>((resolve) => {
      const finish = (result: WaitResult) => {
        if (!members.watchers.delete(watcher)) return;
        this.count--;
        this.open.delete(watcher);
        clearTimeout(timer);
        request.res.off('close', gone);
        if (members.watchers.size === 0 && repositoryWatch.groups.get(request.groupKey) === members) repositoryWatch.groups.delete(request.groupKey);
        resolve(result);
      };
      const watcher: Watcher = { holds: request.holds, head: request.head, finish };
      const timer = setTimeout(() => finish(undefined), request.waitMs);
      const gone = () => finish(undefined);
      request.res.once('close', gone);
      members.watchers.add(watcher);
      this.open.add(watcher);
      // A commit between the answer the client holds and now: look at it at once.
      if (request.repository.head() !== request.head) repositoryWatch.wake();
    });
  }

  /** Ends every wait with "nothing new" (304): the server is shutting down. */
  close(): void {
    this.closed = true;
    for (const watcher of [...this.open]) watcher.finish(undefined);
  }
}
