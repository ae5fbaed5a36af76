/**
 * The real cfghub HTTP server, started in this process on a free loopback port, with fresh
 * registry and token service (a "fresh server process state"), and a silent logger so the
 * benchmark measures the service, not log output to a terminal.
 */
import pino from 'pino';
import { DEFAULT_BODY_LIMIT } from '../src/http/deps.js';
import { startServer } from '../src/http/server.js';
import { TokenService } from '../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../src/disk/registry.js';
import { TokenStore } from '../src/disk/records/tokenStore.js';

export interface BenchServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBenchServer(reposRoot: string): Promise<BenchServer> {
  const registry = new RepositoryRegistry(reposRoot);
  const tokens = new TokenService(new TokenStore(reposRoot));
  const running = await startServer(
    { registry, tokens, logger: pino({ level: 'silent' }), bodyLimit: DEFAULT_BODY_LIMIT },
    0,
    '127.0.0.1',
  );
  // Closed as `cfghub serve` closes (src/server/serve.ts): without it every instance's repositories
  // stayed open (head watches, packs, caches), and each new instance of a cold scenario paid to
  // collect the garbage of all those before it.
  const close = async () => {
    await running.close();
    await registry.settle();
    registry.close();
    tokens.close();
  };
  return { url: running.url, close };
}

/**
 * GETs a URL and reads the whole body (so the timing covers the full answer); throws on any status
 * but 200. Node's fetch (undici) keeps the connection alive between calls.
 */
export async function getText(url: string): Promise<string> {
  const response = await fetch(url);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

/** POSTs a push body; returns the new commit id from the ETag, throws unless the push applied (200). */
export async function postPush(url: string, body: string): Promise<string> {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const text = await response.text();
  if (response.status !== 200) {
    throw new Error(
      `POST ${url} answered ${response.status} ${response.headers.get('etag') ?? ''}: ${text.slice(0, 300)}`,
    );
  }
  return (response.headers.get('etag') ?? '').replace(/"/g, '');
}
