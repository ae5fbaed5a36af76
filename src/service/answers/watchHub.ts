/**
 * Watches of `pull` and `rawFile`: a request with `If-None-Match` and `Wait`
 * whose answer has not changed is held here until the answer for its context would change, or
 * its wait ends, or the server shuts down.
 *
 * How it scales to 10,000 watchers:
 * - Watchers are grouped by everything that makes their answer (repository, endpoint, format,
 *   the headers that vary it, the security groups unlocked). A group's answer is resolved,
 *   serialised and hashed once per new head, through the read cache, and the same bytes are
 *   written to each of its watchers (`answersMade` counts these, for the test that proves it).
 * - A watcher is answered only when that answer's ETag (content-derived, see readCache.ts) is
 *   not one it holds, so a commit that changes nothing for a context wakes none of its watchers.
 * - A group whose answer the change cannot reach is not even made again: the answers tell
 *   that from what changed between the heads (ReadAnswers.mayDiffer, changeReach.ts), so a push
 *   that changes one context of 1,000 watched makes one answer, not 1,000.
 * - A held watcher is a plain record: no promise, timer or closure of its own. Wait ends come from
 *   one timing wheel (lib/deadlineWheel.ts), and every answer is delivered to the one `deliver`
 *   function the transport gave, with the transport's own handle of the watch (the HTTP adapter's
 *   request and response): the hub knows no transport, so it is tested without one.
 * - Answers go out through one queue drained in slices of SLICE_MS, and answers are made in
 *   slices too, so the event loop stays responsive (other requests, the push's own answer) while
 *   thousands are woken: no single piece of work grows with the number of watchers.
 *
 * What wakes a repository's watchers: its head-change signal (GitRepository.onHeadChange), which
 * fires after a commit of this process and on the inotify event of a ref replaced by plain git or
 * another process. A check every RECHECK_MS per watched repository is the safety net where
 * inotify is missing or dropped events (the head watch then reads the ref again). So with several
 * server processes on one folder (`serve --workers N`, or processes behind a balancer), each
 * process wakes the watchers it holds from its own head watch, whichever process committed.
 *
 * Bounded: at most `maxWatchers` held at once (`full`: the HTTP adapter answers 503 over it).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RECHECK_MS } from '../../disk/refs/changeWatch.js';
import type { GitRepository } from '../../disk/repository.js';
import { DeadlineWheel } from '../../lib/deadlineWheel.js';
import type { ReadAnswers, ReadRequest } from './answers.js';
import type { Answer } from './readCache.js';

/** Longest wait a request may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 300;
/** Watchers held at once unless `CFGHUB_MAX_WATCHERS` or `--max-watchers` says otherwise. */
export const DEFAULT_MAX_WATCHERS = 20_000;
/** Longest stretch of answering (or of making answers) before other work gets a turn of the event loop. */
const SLICE_MS = 5;
/** Answers written between two looks at the clock. */
const CLOCK_EVERY = 16;
/** Distinct heads of one group's watchers weighed against a new head before its answer is simply made. */
const HEADS_WEIGHED = 4;

/** One wake that answered watchers: how many, with how many answers made, in how long from the head change to the last written. */
export interface WakeReport {
  readonly repository: string;
  readonly answersMade: number;
  readonly woken: number;
  readonly ms: number;
}

/** How a wait ends: a new answer, an error making it (answered as such), or nothing new (304). */
export type WaitResult = { answer: Answer } | { error: unknown } | undefined;

/** A held watch, as the transport sees it: it may leave (its client went away) before its answer. */
export interface HeldWatch {
  /** Takes the watch out without an answer; nothing once it was answered. */
  leave(): void;
}

class Watcher<T> implements HeldWatch {
  /** Its slot in the deadline wheel. */
  tick = 0;
  /** How it will be answered, once queued. */
  result: WaitResult = undefined;

  constructor(
    /** The transport's handle of the watch, given back to `deliver`. */
    readonly handle: T,
    /** The ETags the client holds (its If-None-Match), or true for `*`. */
    readonly holds: readonly string[] | true,
    /** The head the client's answer is known to be current for. */
    public head: string,
    /** The group it is in, until it is answered. */
    public group: Group<T> | undefined,
  ) {}

  leave(): void {
    this.group?.repository.hub.forget(this);
  }
}

interface Group<T> {
  readonly key: string;
  /** Makes the group's answer at a commit (through the read cache). */
  readonly answerAt: (commitId: string) => Promise<Answer>;
  readonly mayDiffer: ((from: string, to: string) => Promise<boolean>) | undefined;
  readonly watchers: Set<Watcher<T>>;
  readonly repository: RepositoryWatch<T>;
}

const holdsEtag = <T>(watcher: Watcher<T>, etag: string) => watcher.holds === true || watcher.holds.includes(etag);

class RepositoryWatch<T> {
  readonly groups = new Map<string, Group<T>>();
  private running = false;
  private again = false;
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly repository: GitRepository,
    readonly hub: WatchHub<T>,
    private readonly onEmpty: () => void,
  ) {
    this.unsubscribe = repository.onHeadChange(() => this.wake());
    this.timer = setInterval(() => this.wake(), RECHECK_MS).unref();
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
      const started = performance.now();
      const answersBefore = this.hub.answersMade;
      let woken = 0;
      let head: string;
      try {
        head = this.repository.head();
      } catch (error) {
        for (const group of [...this.groups.values()])
          for (const watcher of [...group.watchers]) this.hub.answer(watcher, { error });
        return;
      }
      // First every changed group's answer, then the answers out: the last watcher's answer then
      // waits for the making of 100 answers, not for 100 turns of the event loop between them.
      const made: Array<{ group: Group<T>; watchers: Watcher<T>[]; result: WaitResult }> = [];
      let sliceEnds = performance.now() + SLICE_MS;
      for (const group of [...this.groups.values()]) {
        // Weighing a change against a group is work too (as much as its changed keys): the clock is looked at after each group either way.
        if (behind(group, head) && !(await unreached(group, head))) {
          // Those held now: a watcher that arrives while the answer is made holds a head of its own.
          const watchers = [...group.watchers];
          let result: WaitResult;
          try {
            result = { answer: await group.answerAt(head) };
            this.hub.answersMade++;
          } catch (error) {
            result = { error };
          }
          made.push({ group, watchers, result });
        }
        if (performance.now() > sliceEnds) {
          await nextTurn();
          sliceEnds = performance.now() + SLICE_MS;
        }
      }
      for (const { group, watchers, result } of made) {
        for (const watcher of watchers) {
          if (watcher.group !== group) continue; // answered meanwhile (its wait ended, it went away)
          if (result && 'answer' in result && holdsEtag(watcher, result.answer.etag)) watcher.head = head;
          else {
            this.hub.answer(watcher, result);
            woken++;
          }
        }
      }
      if (woken > 0) {
        const answersMade = this.hub.answersMade - answersBefore;
        this.hub.whenWritten(() =>
          this.hub.onWake?.({
            repository: this.repository.fullName,
            answersMade,
            woken,
            ms: performance.now() - started,
          }),
        );
      }
    } while (this.again);
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.timer);
    this.onEmpty();
  }
}

/** Whether some watcher of the group may hold an answer older than `head`. */
function behind<T>(group: Group<T>, head: string): boolean {
  for (const watcher of group.watchers) if (watcher.head !== head) return true;
  return false;
}

/**
 * Whether the group's answer is known to be at `head` what it was at each head its watchers hold
 * (from what changed between them, without making it); those watchers then hold `head`. Any doubt
 * (more than HEADS_WEIGHED heads to weigh, a failure weighing them) answers false: the answer is
 * made, and says what is wrong if anything is.
 */
async function unreached<T>(group: Group<T>, head: string): Promise<boolean> {
  if (!group.mayDiffer) return false;
  const from = new Set<string>();
  for (const watcher of group.watchers) if (watcher.head !== head) from.add(watcher.head);
  if (from.size > HEADS_WEIGHED) return false;
  try {
    for (const held of from) if (await group.mayDiffer(held, head)) return false;
  } catch {
    return false;
  }
  for (const watcher of group.watchers) if (from.has(watcher.head)) watcher.head = head;
  return !behind(group, head); // a watcher that came meanwhile with another head: the answer is made
}

/** A read to hold until its answer changes. */
export interface WaitRequest<T> {
  /** The transport's handle of the watch (the HTTP adapter's request and response), given back to `deliver`. */
  readonly handle: T;
  readonly read: ReadRequest;
  /** The key of the answer's group (ReadAnswers.answerAt): watchers with the same key share one answer per head. */
  readonly groupKey: string;
  /** The ETags the client holds (its If-None-Match), or true for `*`. */
  readonly holds: readonly string[] | true;
  /** The head the client's current answer was made at. */
  readonly head: string;
  readonly waitMs: number;
}

export class WatchHub<T> {
  private readonly repositories = new Map<GitRepository, RepositoryWatch<T>>();
  private count = 0;
  private closed = false;
  private readonly wheel = new DeadlineWheel<Watcher<T>>((watcher) => this.answer(watcher, undefined));
  /** Watchers to answer, in order; `next` is the first not yet answered. */
  private queue: Watcher<T>[] = [];
  private next = 0;
  private draining = false;
  /** Answers made for groups of watchers since the start: one per group and new head, however many watchers it holds. */
  answersMade = 0;
  /** Held requests answered since the start (200, 304 or an error). */
  answered = 0;
  /** Told once the answers of a wake that woke watchers are all written (the route logs it). */
  onWake: ((wake: WakeReport) => void) | undefined;
  /** Called when the queue is next empty. */
  private written: Array<() => void> = [];

  /**
   * `answers` makes each group's answer at a new head. `deliver` answers a held watch (the new
   * answer, nothing new when the result is undefined, or the error): one function for every
   * watcher, called once for each.
   */
  constructor(
    private readonly answers: ReadAnswers,
    readonly maxWatchers: number,
    private readonly deliver: (handle: T, result: WaitResult) => void,
  ) {}

  /** True once close was called: answers say `Connection: close`. */
  get closing(): boolean {
    return this.closed;
  }

  /** Watchers held now (answers queued but not yet written included). */
  get size(): number {
    return this.count;
  }

  /** True when no more watchers may be held now (`hold` takes none). */
  get full(): boolean {
    return this.count >= this.maxWatchers;
  }

  /**
   * Holds a read until its answer changes, its wait ends or the hub closes; `deliver` answers it
   * then (at once, with nothing new, when the hub is closed). Undefined when the hub is `full`.
   */
  hold(request: WaitRequest<T>): HeldWatch | undefined {
    if (this.closed) {
      this.deliver(request.handle, undefined);
      return undefined;
    }
    if (this.full) return undefined;
    const repository = request.read.repository;
    let watch = this.repositories.get(repository);
    if (!watch) {
      watch = new RepositoryWatch(repository, this, () => this.repositories.delete(repository));
      this.repositories.set(repository, watch);
    }
    let group = watch.groups.get(request.groupKey);
    if (!group) {
      const read = request.read;
      group = {
        key: request.groupKey,
        answerAt: async (commitId) => (await this.answers.answerAt(read, commitId)).answer,
        mayDiffer: this.answers.mayDiffer(read),
        watchers: new Set(),
        repository: watch,
      };
      watch.groups.set(request.groupKey, group);
    }
    const watcher = new Watcher(request.handle, request.holds, request.head, group);
    this.count++;
    group.watchers.add(watcher);
    this.wheel.add(watcher, request.waitMs);
    // A commit between the answer the client holds and now: look at it at once.
    if (repository.head() !== request.head) watch.wake();
    return watcher;
  }

  /** Takes a watcher out of its group and the wheel and queues its answer; once per watcher. */
  answer(watcher: Watcher<T>, result: WaitResult): void {
    const group = watcher.group;
    if (!group) return;
    watcher.group = undefined;
    group.watchers.delete(watcher);
    if (group.watchers.size === 0 && group.repository.groups.get(group.key) === group)
      group.repository.groups.delete(group.key);
    this.wheel.delete(watcher);
    watcher.result = result;
    this.queue.push(watcher);
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => this.drain());
    }
  }

  /** The client went away: its watcher leaves without an answer (the transport writes nothing to a client gone). */
  forget(watcher: Watcher<T>): void {
    if (!watcher.group) return;
    this.answer(watcher, undefined);
  }

  /** Writes queued answers for at most SLICE_MS, then lets other work run before the next slice. */
  private drain(): void {
    const sliceEnds = performance.now() + SLICE_MS;
    while (this.next < this.queue.length) {
      const watcher = this.queue[this.next];
      this.queue[this.next++] = undefined as unknown as Watcher<T>; // let it be collected once answered
      this.count--;
      this.answered++;
      try {
        this.deliver(watcher.handle, watcher.result);
      } catch {
        // The transport's own failure (it ends that watch itself): never stops the others' answers.
      }
      if (this.next % CLOCK_EVERY === 0 && performance.now() > sliceEnds) break;
    }
    if (this.next < this.queue.length) {
      setImmediate(() => this.drain());
      return;
    }
    this.queue = [];
    this.next = 0;
    this.draining = false;
    for (const call of this.written.splice(0)) call();
  }

  /** Calls `call` once every answer queued so far is written. */
  whenWritten(call: () => void): void {
    if (this.draining) this.written.push(call);
    else call();
  }

  /** Ends every wait with "nothing new" (304): the server is shutting down. */
  close(): void {
    this.closed = true;
    for (const watch of [...this.repositories.values()]) {
      for (const group of [...watch.groups.values()])
        for (const watcher of [...group.watchers]) this.answer(watcher, undefined);
    }
  }
}
