/**
 * The serving side of replication, for any server (a primary, or a replica followed by another):
 * the folder's identity and generation that its states carry, and what its replicas report. A
 * replica sends the generation it follows with each request (`Replica-Generation`); one above this
 * folder's means this server was started as a primary after another was promoted (an old primary
 * restarted by its supervisor, a backup restored): it says so in the log, in `/readyz` (unready,
 * so that a load balancer stops sending it writes) and in a metric, until it is stopped.
 */
import type { Logger } from 'pino';
import type { RepositoryRegistry } from '../../disk/registry.js';
import { AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { WebhookStore } from '../../disk/records/webhookStore.js';
import type { TokenService } from '../admin/tokens.js';
import { ensureIdentity, readIdentity, type FolderIdentity } from '../../disk/records/folderIdentity.js';
import type { StateSource } from './state.js';

/** How long the identity read from disk is used (a promotion or a replica's new pin changes it). */
const IDENTITY_READ_MS = 1_000;

export class ReplicationOrigin implements StateSource {
  readonly adminTokens: AdminTokenStore;
  readonly webhooks: WebhookStore;
  private identity: { at: number; value: FolderIdentity } | undefined;
  private made: Promise<FolderIdentity> | undefined;
  /** The highest generation a replica reported that is above this folder's; undefined while none did. */
  private newer: number | undefined;

  constructor(
    readonly registry: RepositoryRegistry,
    readonly tokens: TokenService,
    private readonly logger: Logger,
  ) {
    this.adminTokens = new AdminTokenStore(registry.root);
    this.webhooks = new WebhookStore(registry.root);
  }

  /** Makes the folder's identity if it has none yet (the first time it is served); call before `origin`. */
  ready(): Promise<FolderIdentity> {
    this.made ??= ensureIdentity(this.registry.root).then((value) => {
      this.identity = { at: performance.now(), value };
      return value;
    });
    return this.made;
  }

  origin(): FolderIdentity {
    const now = performance.now();
    if (!this.identity || now - this.identity.at >= IDENTITY_READ_MS) {
      const value = readIdentity(this.registry.root) ?? this.identity?.value;
      if (!value) throw new Error('the folder identity is not made yet');
      this.identity = { at: now, value };
    }
    return this.identity.value;
  }

  /** A replica's request said it follows `generation`: above this folder's, it is reported loudly. */
  replicaReports(generation: number): void {
    const own = this.origin().generation;
    if (generation <= own || generation <= (this.newer ?? 0)) return;
    this.newer = generation;
    this.logger.error(
      { event: 'replication-generation-behind', generation: own, replicaGeneration: generation },
      "a replica follows a newer primary generation than this server's: another server was promoted since this one was primary; stop this one (see the replicas page of the docs)",
    );
  }

  /** Why this server must not be taken for the primary, or undefined. */
  problem(): string | undefined {
    if (this.newer === undefined) return undefined;
    return `a replica follows primary generation ${this.newer}, above this server's ${this.origin().generation}: another server was promoted since this one was primary`;
  }

  /** The highest generation a replica reported above this folder's, else 0 (a metric). */
  newerGeneration(): number {
    return this.newer ?? 0;
  }
}
