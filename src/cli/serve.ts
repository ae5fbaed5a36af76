/** `cfghub serve`: the HTTP server until SIGINT or SIGTERM, then a graceful shutdown and exit 0. */
import { withoutPaths } from '../domain/reasons.js';
import { DEFAULT_BODY_LIMIT } from '../http/context.js';
import { startServer } from '../http/server.js';
import { ensureDemoRepository } from '../service/demo.js';
import { TokenService } from '../service/tokens.js';
import { onStaleLockRemoved } from '../disk/refs.js';
import { RepositoryRegistry } from '../disk/registry.js';
import { recoverAtStart } from '../disk/startupRecovery.js';
import { TokenStore } from '../disk/tokenStore.js';
import { createLogger, type LogFormat } from './logger.js';
import { listenError, prepareReposFolder } from './serveChecks.js';
import { startReplicator } from './replica.js';

export interface ServeOptions {
  readonly reposDir: string;
  readonly port: number;
  readonly host: string;
  readonly demo: boolean;
  readonly bodyLimit?: number;
  /** Repack a repository when plain git left more loose objects than this; undefined: never. */
  readonly looseObjectLimit?: number;
  /** Watches held at once at most (see http/watchHub.ts). */
  readonly maxWatchers?: number;
  /** List and serve private repositories only to callers holding a token of theirs (issue 14, item 12). */
  readonly hidePrivate?: boolean;
  /** Serve as a read replica of this primary (issue 21), with this replication token. */
  readonly replicaOf?: { readonly primary: string; readonly token: string };
  /** `GET /metrics` only with `Authorization: Bearer <metricsToken>`; undefined: open. */
  readonly metricsToken?: string;
  readonly logFormat?: LogFormat;
  readonly logLevel?: string;
}

export async function serve(options: ServeOptions): Promise<void> {
  const logger = createLogger(options.logLevel, options.logFormat);
  const created = prepareReposFolder(options.reposDir);
  // The folder is named at start (issue 15): `./repos` depends on where the server was started.
  logger.info({ event: 'repositories', folder: options.reposDir, ...(created ? { created: true } : {}) });
  const registry = new RepositoryRegistry(options.reposDir, { looseObjectLimit: options.looseObjectLimit });
  onStaleLockRemoved((report) => logger.warn({ event: 'stale-lock-removed', ...report }));
  // What crashed writers left is cleaned (or reported) before the first request (startupRecovery.ts).
  for (const finding of await recoverAtStart(options.reposDir)) logger.warn({ event: 'recovered-at-start', ...finding });
  if (options.demo && !options.replicaOf && (await ensureDemoRepository(registry))) {
    logger.info({ event: 'demo-created', repository: 'demo/HowItWorks' });
  }
  const tokens = new TokenService(new TokenStore(options.reposDir));
  const replica = options.replicaOf && startReplicator(options.replicaOf, registry, tokens, logger);
  const running = await startServer(
    { registry, tokens, logger, bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT, maxWatchers: options.maxWatchers, hidePrivate: options.hidePrivate, replica, metricsToken: options.metricsToken },
    options.port,
    options.host,
  ).catch((error: unknown) => {
    registry.close();
    tokens.close();
    throw listenError(error, options);
  });
  logger.info({ event: 'listening', url: running.url });
  process.on('uncaughtException', (error) => {
    logger.fatal({ event: 'uncaught-exception', problem: withoutPaths(`${error.name}: ${error.message}`) });
    process.exit(1);
  });
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ event: 'shutting-down', signal });
      running.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await replica?.stop();
  await registry.settle(); // a pack merge's removals end whole (see consolidatePacks)
  registry.close();
  tokens.close();
  logger.info({ event: 'stopped' });
}
