/**
 * Test support for replication: a read replica as the real server in this process,
 * on a loopback port, following a primary through the real replication endpoints and git fetch.
 */
import { DEFAULT_BODY_LIMIT } from '../../src/http/deps.js';
import { startServer } from '../../src/http/server.js';
import { Replicator } from '../../src/service/replication/replicator.js';
import { TokenService } from '../../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { TokenStore } from '../../src/disk/records/tokenStore.js';
import { capturedLogger } from './harness.js';

export interface TestReplica {
  readonly url: string;
  readonly repos: string;
  readonly replicator: Replicator;
  logText(): string;
  close(): Promise<void>;
}

export async function startTestReplica(
  repos: string,
  primary: string,
  token: string,
  options: { holdMs?: number; port?: number; acceptNewPrimary?: boolean } = {},
): Promise<TestReplica> {
  const { lines, logger } = capturedLogger();
  const registry = new RepositoryRegistry(repos);
  const tokens = new TokenService(new TokenStore(repos));
  const replicator = new Replicator({
    source: { primary, token },
    registry,
    tokens,
    logger,
    holdMs: options.holdMs,
    acceptNewPrimary: options.acceptNewPrimary,
  });
  replicator.start();
  const running = await startServer(
    { registry, tokens, logger, bodyLimit: DEFAULT_BODY_LIMIT, replica: replicator },
    options.port ?? 0,
    '127.0.0.1',
  );
  return {
    url: running.url,
    repos,
    replicator,
    logText: () => lines.join('\n'),
    close: async () => {
      await replicator.stop();
      await running.close();
      registry.close();
      tokens.close();
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms = 10_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
