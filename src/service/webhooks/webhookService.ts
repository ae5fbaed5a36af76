/**
 * Signed webhooks: after each commit of a repository (a push, a revert, a restore, a change
 * applied, a commit made with plain git), a POST to each of its hooks, in the background
 * (deliveries.ts). Commits are seen on the repository's head (GitRepository.onHeadChange, which
 * a commit of this process and a ref moved by another process both fire), so every way of writing
 * a commit is covered by one watch, and the writer never waits: the watch only schedules work.
 *
 * When the head moves by several commits at once, each is delivered, oldest first, up to
 * MAX_COMMITS_PER_MOVE (the newest ones); a head that moves to a commit not descending from the
 * last one seen delivers that commit alone.
 *
 * In an HA cluster (`keepsMarks`) every node follows the heads, and only the leader delivers
 * (`delivers` asks it at each move). The leader keeps, per repository, the newest commit whose
 * deliveries have all ended along with every commit before it (the delivered mark, in
 * `.cfghub/webhook-delivered.json`), which travels to the members with the hooks (replication's
 * state). A node elected leader delivers from its mark to its head: the commits its old leader had
 * not finished delivering are delivered again (at least once), none is skipped.
 */
import type { Logger } from 'pino';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { commitInfo } from '../../layout/timeTravel.js';
import { requireRepository } from '../admin/repositories.js';
import { ServiceError } from '../errors.js';
import { commitEventBody } from './commitEvent.js';
import { DeliveryQueue, DEFAULT_DELIVERY_LIMITS, type DeliveryLimits, type DeliveryRecord } from './deliveries.js';
import { Webhooks, type WebhookInfo } from './hooks.js';
import { WebhookStore } from '../../disk/records/webhookStore.js';

/** Commits delivered for one move of a head at most (the newest). */
export const MAX_COMMITS_PER_MOVE = 100;
/**
 * How often the hooks file is looked at again: a hook added or removed by another process (a
 * worker of `serve --workers N` other than the delivering one) takes effect within this long.
 */
export const HOOKS_RECHECK_MS = 1_000;

/** How long the delivered marks wait before they are written (one write for the marks of a burst). */
const MARKS_WRITE_MS = 100;

/** A commit whose deliveries have not all ended yet: `open` of them. */
interface PendingCommit {
  readonly commit: string;
  open: number;
}

interface Watched {
  readonly repository: GitRepository;
  readonly unsubscribe: () => void;
  lastHead: string;
  /** The checks of this repository, one after the other. */
  chain: Promise<void>;
  scheduled: boolean;
}

export interface WebhookServiceOptions {
  readonly limits?: Partial<DeliveryLimits>;
  /** The contexts read from a repository lately (the read record), for the count of answers changed. */
  readonly contextsRead?: (repository: string) => readonly string[];
  /**
   * False: hooks are administered but no commit is delivered from this process (a replica). A
   * function: asked at each move of a head whether this process delivers now (an HA node: the leader).
   */
  readonly delivers?: boolean | (() => boolean);
  /** Keep the delivered marks on disk, and deliver from them on becoming the one that delivers (an HA node). */
  readonly keepsMarks?: boolean;
}

export class WebhookService {
  readonly hooks: Webhooks;
  readonly queue: DeliveryQueue;
  private readonly watched = new Map<string, Watched>();
  private closed = false;
  private recheck: NodeJS.Timeout | undefined;
  /** Whether this process delivered at the last look (an HA node becomes the leader: it takes over from the marks). */
  private delivering = false;
  private readonly store: WebhookStore;
  /** Per repository, the commits whose deliveries have not all ended, oldest first. */
  private readonly pending = new Map<string, PendingCommit[]>();
  /** Marks to write: per repository, its newest commit whose deliveries have all ended, with every one before it. */
  private readonly marks = new Map<string, string>();
  private marksTimer: NodeJS.Timeout | undefined;
  private marksWritten: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly logger: Logger,
    private readonly options: WebhookServiceOptions = {},
  ) {
    this.hooks = new Webhooks(registry);
    this.store = new WebhookStore(registry.root);
    this.queue = new DeliveryQueue(
      (repository, id) =>
        this.hooks
          .opened(repository, (hook) =>
            this.logger.warn({ event: 'webhook-secret-unopened', hook: hook.id, repository: hook.repository }),
          )
          .find((hook) => hook.id === id),
      logger,
      { ...DEFAULT_DELIVERY_LIMITS, ...options.limits },
    );
  }

  /** Watches the heads of the repositories that have hooks. */
  start(): void {
    this.sync();
    if (this.options.delivers !== false) this.recheck = setInterval(() => this.sync(), HOOKS_RECHECK_MS).unref();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.recheck);
    clearTimeout(this.marksTimer);
    for (const watched of this.watched.values()) watched.unsubscribe();
    this.watched.clear();
    this.queue.close();
  }

  list(fullName: string): WebhookInfo[] {
    return this.hooks.list(fullName);
  }

  async add(fullName: string, url: string, secret: string): Promise<WebhookInfo> {
    const hook = await this.hooks.add(fullName, url, secret);
    // A repository's first hook receives the commits after this one: its mark, which a leader
    // elected later delivers from, is the head now (written before the answer, so it travels with the hook).
    if (this.options.keepsMarks && !this.store.delivered().some((mark) => mark.repository === hook.repository)) {
      const repository = this.repositoryOf(hook.repository);
      const head = repository?.head();
      if (head) await this.store.markDelivered(new Map([[hook.repository, head]]));
    }
    this.sync();
    return hook;
  }

  /** Resolves once the delivered marks known now are on disk (tests, and a server stopping). */
  async marksSettled(): Promise<void> {
    if (this.marksTimer) {
      clearTimeout(this.marksTimer);
      this.marksTimer = undefined;
      this.writeMarks();
    }
    await this.marksWritten;
  }

  async remove(fullName: string, id: string): Promise<WebhookInfo> {
    const hook = await this.hooks.remove(fullName, id);
    this.sync();
    return hook;
  }

  deliveries(fullName: string, hook?: string): DeliveryRecord[] {
    return this.queue.records(this.repositoryName(fullName), hook);
  }

  /** Delivers a logged delivery's commit again, to the same hook, as a new delivery. */
  async redeliver(fullName: string, id: string): Promise<DeliveryRecord> {
    const repositoryName = this.repositoryName(fullName);
    const old = this.queue.find(id);
    if (!old || old.repository !== repositoryName)
      throw new ServiceError(
        'not_found',
        `no delivery ${JSON.stringify(id.slice(0, 64))} of ${repositoryName} in the log`,
      );
    if (!this.hooks.list(fullName).some((hook) => hook.id === old.hook))
      throw new ServiceError('not_found', `the webhook ${old.hook} of ${repositoryName} was removed`);
    const repository = this.repositoryOf(repositoryName)!;
    const body = await this.bodyOf(repository, old.commit);
    return this.queue.add({ id: old.hook }, { repository: repositoryName, commit: old.commit, body }, old.id);
  }

  /** The repository's name as stored; an unknown or malformed one refused. */
  private repositoryName(fullName: string): string {
    const [account, name] = fullName.split('/');
    return requireRepository(this.registry, account ?? '', name ?? '').fullName;
  }

  private repositoryOf(fullName: string): GitRepository | undefined {
    const [account, name] = fullName.split('/');
    return this.registry.find(account ?? '', name ?? '');
  }

  /** Whether this process delivers now. */
  private delivers(): boolean {
    const { delivers } = this.options;
    return typeof delivers === 'function' ? delivers() : delivers !== false;
  }

  /**
   * On becoming the one that delivers (an HA node elected leader): each repository's deliveries
   * start after its delivered mark, which its old leader kept, so the commits it had not finished
   * delivering are delivered (again). A repository without a mark starts at its head.
   */
  private takeOver(): void {
    this.delivering = true;
    if (!this.options.keepsMarks) return;
    this.pending.clear();
    const marks = new Map(this.store.delivered().map((mark) => [mark.repository, mark.commit]));
    for (const [name, watched] of this.watched) {
      const mark = marks.get(name);
      if (mark !== undefined && mark !== watched.lastHead) {
        this.logger.info({ event: 'webhook-take-over', repository: name, from: mark });
        watched.lastHead = mark;
      }
      this.schedule(watched);
    }
  }

  /** Watches each repository with hooks, and stops watching those without. */
  private sync(): void {
    if (this.closed || this.options.delivers === false) return;
    if (!this.delivers()) this.delivering = false;
    const wanted = new Set(this.hooks.repositories());
    for (const [name, watched] of this.watched)
      if (!wanted.has(name)) {
        watched.unsubscribe();
        this.watched.delete(name);
      }
    for (const name of wanted) {
      if (this.watched.has(name)) continue;
      const repository = this.repositoryOf(name);
      if (!repository) continue;
      let lastHead: string;
      try {
        lastHead = repository.head();
      } catch (error) {
        this.logger.warn({
          event: 'webhook-watch-failed',
          repository: name,
          problem: String((error as Error).message),
        });
        continue;
      }
      const watched: Watched = {
        repository,
        lastHead,
        chain: Promise.resolve(),
        scheduled: false,
        unsubscribe: repository.onHeadChange(() => this.schedule(watched)),
      };
      this.watched.set(name, watched);
    }
    if (this.delivers() && !this.delivering) this.takeOver();
  }

  /** Called on the writer's path: only schedules the check, for after the writer's turn. */
  private schedule(watched: Watched): void {
    if (watched.scheduled || this.closed) return;
    watched.scheduled = true;
    setImmediate(() => {
      watched.scheduled = false;
      watched.chain = watched.chain
        .then(() => this.check(watched))
        .catch((error: unknown) =>
          this.logger.warn({
            event: 'webhook-check-failed',
            repository: watched.repository.fullName,
            problem: String((error as Error)?.message ?? error),
          }),
        );
    });
  }

  private async check(watched: Watched): Promise<void> {
    const head = watched.repository.head();
    if (!this.delivers()) {
      // A follower: its leader delivers (and keeps the marks a later leader starts from).
      this.delivering = false;
      watched.lastHead = head;
      return;
    }
    if (!this.delivering) this.takeOver();
    if (head === watched.lastHead) return;
    const commits = await this.commitsSince(watched.repository, watched.lastHead, head);
    watched.lastHead = head;
    const name = watched.repository.fullName;
    for (const commit of commits) {
      const hooks = this.hooks.list(name);
      if (hooks.length === 0 || this.closed) return;
      const body = await this.bodyOf(watched.repository, commit);
      if (!this.options.keepsMarks) {
        for (const hook of hooks) this.queue.add(hook, { repository: name, commit, body });
        continue;
      }
      const entry: PendingCommit = { commit, open: hooks.length };
      let list = this.pending.get(name);
      if (!list) this.pending.set(name, (list = []));
      list.push(entry);
      for (const hook of hooks)
        this.queue.add(hook, { repository: name, commit, body }, undefined, () => {
          entry.open--;
          this.advance(name);
        });
    }
  }

  /** Moves a repository's delivered mark past the commits whose deliveries have all ended. */
  private advance(name: string): void {
    const list = this.pending.get(name);
    let mark: string | undefined;
    while (list && list.length > 0 && list[0].open <= 0) mark = list.shift()!.commit;
    if (list?.length === 0) this.pending.delete(name);
    if (mark === undefined || this.closed) return;
    this.marks.set(name, mark);
    this.marksTimer ??= setTimeout(() => {
      this.marksTimer = undefined;
      this.writeMarks();
    }, MARKS_WRITE_MS);
  }

  private writeMarks(): void {
    if (this.marks.size === 0) return;
    const marks = new Map(this.marks);
    this.marks.clear();
    this.marksWritten = this.marksWritten
      .then(() => this.store.markDelivered(marks))
      .catch((error: unknown) =>
        this.logger.warn({ event: 'webhook-marks-failed', problem: String((error as Error)?.message ?? error) }),
      );
  }

  /** The commits from `from` (excluded) to `to`, oldest first, along first parents; the newest MAX_COMMITS_PER_MOVE. */
  private async commitsSince(repository: GitRepository, from: string, to: string): Promise<string[]> {
    const commits: string[] = [];
    let at: string | undefined = to;
    while (at !== undefined && at !== from && commits.length < MAX_COMMITS_PER_MOVE) {
      commits.push(at);
      at = (await commitInfo(repository, at)).parents[0];
    }
    if (at === from) return commits.reverse();
    if (at === undefined) return [to]; // not a descendant of the last head seen
    this.logger.warn({ event: 'webhook-commits-skipped', repository: repository.fullName, delivered: commits.length });
    return commits.reverse();
  }

  private async bodyOf(repository: GitRepository, commit: string): Promise<string> {
    const contexts = this.options.contextsRead?.(repository.fullName) ?? [];
    return JSON.stringify(await commitEventBody(repository, commit, contexts));
  }
}
