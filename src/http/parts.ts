/**
 * What one HTTP front holds for its whole life besides its routes: its metrics, the replication
 * origin and its change-feed hub, the webhook deliveries, the watch on commits made outside
 * cfghub, and the read record. Made once by the front (app.ts createHttpFront), handed to every
 * route in HttpDeps, and closed by the front's close: no table keyed by the server finds them.
 */
import { FeedHub } from '../service/replication/feedHub.js';
import { ReplicationOrigin } from '../service/replication/origin.js';
import { OutsideCommitWatch } from '../service/schemas/outsideCommits.js';
import { WebhookService } from '../service/webhooks/webhookService.js';
import type { HttpOptions } from './deps.js';
import { Metrics } from './metrics.js';
import { ReadBook } from './routes/clients.js';

export class ServerParts {
  readonly metrics: Metrics;
  /** The serving side of replication: the folder's identity and what its replicas report (readiness, metrics). */
  readonly replication: ReplicationOrigin;
  /** Replicas waiting on the change feed. */
  readonly feeds: FeedHub;
  /** Who reads what (GET /rest/clients, cfghub_reads_total). */
  readonly reads: ReadBook;
  /** Deliveries after each commit of a repository with hooks; started by the server (server.ts). */
  readonly webhooks: WebhookService;
  /** Commits made outside cfghub, weighed against the schemas as they arrive (history, /readyz, metrics). */
  readonly outsideCommits: OutsideCommitWatch;
  private ended = false;

  constructor(options: HttpOptions) {
    this.metrics = new Metrics(options, this);
    this.replication = new ReplicationOrigin(options.registry, options.tokens, options.logger);
    this.feeds = new FeedHub(this.replication);
    this.reads = new ReadBook(this.metrics.registry);
    this.webhooks = new WebhookService(options.registry, options.logger, {
      limits: options.webhookLimits,
      contextsRead: (repository) => this.reads.contextsRead(repository),
      // A read replica follows its primary, which delivers: it would deliver each commit again. In
      // an HA cluster the leader delivers, from the delivered marks its predecessor kept.
      delivers: options.cluster
        ? () => options.cluster!.servesWrites()
        : options.replica === undefined && options.deliversWebhooks !== false,
      keepsMarks: options.cluster !== undefined,
    });
    this.outsideCommits = new OutsideCommitWatch(options.registry, options.logger);
  }

  /**
   * Ends what waits or works in the background: replicas waiting on the feed get the current
   * state, the outside-commit watch and the deliveries stop (waiting ones are dropped: they are in
   * memory only). The metrics keep counting the requests still draining.
   */
  endWaits(): void {
    if (this.ended) return;
    this.ended = true;
    this.feeds.close();
    this.outsideCommits.close();
    this.webhooks.close();
  }

  /** Everything ended, the metrics' listening to the layers below too. */
  close(): void {
    this.endWaits();
    this.metrics.close();
  }
}
