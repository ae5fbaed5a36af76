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

/** Commits delivered for one move of a head at most (the newest). */
export const MAX_COMMITS_PER_MOVE = 100;
/**
 * How often the hooks file is looked at again: a hook added or removed by another process (a
 * worker of `serve --workers N` other than the delivering one) takes effect within this long.
 */
export const HOOKS_RECHECK_MS = 1_000;

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
  /** False: hooks are administered but no commit is delivered from this process (a replica). */
  readonly delivers?: boolean;
}

export class WebhookService {
  readonly hooks: Webhooks;
  readonly queue: DeliveryQueue;
  private readonly watched = new Map<string, Watched>();
  private closed = false;
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly logger: Logger,
    private readonly options: WebhookServiceOptions = {},
  ) {
    this.hooks = new Webhooks(registry);
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
    for (const watched of this.watched.values()) watched.unsubscribe();
    this.watched.clear();
    this.queue.close();
  }

  list(fullName: string): WebhookInfo[] {
    return this.hooks.list(fullName);
  }

  async add(fullName: string, url: string, secret: string): Promise<WebhookInfo> {
    const hook = await this.hooks.add(fullName, url, secret);
    this.sync();
    return hook;
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

  /** Watches each repository with hooks, and stops watching those without. */
  private sync(): void {
    if (this.closed || this.options.delivers === false) return;
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
    if (head === watched.lastHead) return;
    const commits = await this.commitsSince(watched.repository, watched.lastHead, head);
    watched.lastHead = head;
    const name = watched.repository.fullName;
    for (const commit of commits) {
      const hooks = this.hooks.list(name);
      if (hooks.length === 0 || this.closed) return;
      const body = await this.bodyOf(watched.repository, commit);
      for (const hook of hooks) this.queue.add(hook, { repository: name, commit, body });
    }
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
