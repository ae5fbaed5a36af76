/** What the HTTP adapter needs from the rest of the program, and what it holds for its life. */
import type { Logger } from 'pino';
import type { RepositoryRegistry } from '../disk/registry.js';
import type { TokenService } from '../service/admin/tokens.js';
import type { ReplicaLink } from '../service/replication/replicaLink.js';
import type { ClusterNode } from '../service/ha/clusterNode.js';
import type { DeliveryLimits } from '../service/webhooks/deliveries.js';
import type { ServerParts } from './parts.js';

/** What the caller of the HTTP front (serve, a test, a bench) gives it. */
export interface HttpOptions {
  readonly registry: RepositoryRegistry;
  readonly tokens: TokenService;
  readonly logger: Logger;
  /** Largest request body accepted, in bytes (413 above it, before parsing). */
  readonly bodyLimit: number;
  /** Watches (`Wait`) held at once at most; over it, 503 (see service/answers/watchHub.ts). */
  readonly maxWatchers?: number;
  /** `serve --hide-private`: private repositories hidden from callers without a token of theirs (service/access/accessPolicy.ts). */
  readonly hidePrivate?: boolean;
  /** Set on a read replica: its follower, for the lag, `Min-Commit` and the status. */
  readonly replica?: ReplicaLink;
  /** When set, `GET /metrics` answers only with `Authorization: Bearer <metricsToken>`. */
  readonly metricsToken?: string;
  /** The processes serving (`serve --workers N`): the read cache's bound is divided among them. */
  readonly workers?: number;
  /**
   * Set in a worker of `serve --workers N`: the metrics of every worker, summed, in
   * Prometheus' text format (see src/server/clusterWorker.ts); `GET /metrics` answers it.
   */
  readonly clusterMetrics?: () => Promise<string>;
  /** Set on a node of an HA cluster (`serve --cluster`): its part in the cluster (service/ha/). */
  readonly cluster?: ClusterNode;
  /** While start-up work is not finished, why (`/readyz` answers 503 with it); else undefined. */
  readonly starting?: () => string | undefined;
  /** The webhook deliveries' bounds and delays, when not the defaults (service/webhooks/deliveries.ts). */
  readonly webhookLimits?: Partial<DeliveryLimits>;
  /**
   * False in the workers of `serve --workers N` but the one the primary chose (clusterPrimary.ts):
   * every worker sees every commit, and one delivers each; a replaced worker's successor takes its part.
   */
  readonly deliversWebhooks?: boolean;
}

/** What every route gets: the options, and the parts the front made for its life (parts.ts), closed with it. */
export interface HttpDeps extends HttpOptions {
  readonly parts: ServerParts;
}

export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;
