/** The options of `cfghub serve` (resolved from its flags and config file by serveConfig.ts). */
import type { LogFormat } from './logger.js';
import type { ReplicaOf } from './replica.js';

export interface ServeOptions {
  readonly reposDir: string;
  readonly port: number;
  readonly host: string;
  readonly demo: boolean;
  readonly bodyLimit?: number;
  /** Repack a repository when plain git left more loose objects than this; undefined: never. */
  readonly looseObjectLimit?: number;
  /** Watches held at once at most (see service/answers/watchHub.ts). */
  readonly maxWatchers?: number;
  /** List and serve private repositories only to callers holding a token of theirs. */
  readonly hidePrivate?: boolean;
  /** Serve as a read replica of this primary, with this replication token. */
  readonly replicaOf?: ReplicaOf;
  /** `GET /metrics` only with `Authorization: Bearer <metricsToken>`; undefined: open. */
  readonly metricsToken?: string;
  /** Processes serving requests; 1 or undefined: this process alone. */
  readonly workers?: number;
  /** Serve as a node of an HA cluster (service/ha/): elected on etcd, writes synchronously replicated. */
  readonly cluster?: {
    readonly name: string;
    readonly etcd: readonly string[];
    readonly advertise: string;
    readonly token: string;
    readonly strict: boolean;
    readonly leaseSeconds: number;
  };
  readonly logFormat?: LogFormat;
  readonly logLevel?: string;
}
