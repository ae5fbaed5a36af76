/** Starting and stopping the HTTP server, with graceful shutdown. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestListener } from './app.js';
import type { HttpDeps } from './deps.js';
import { continueWhenRead } from './body/lingeringClose.js';
import { connectionCount } from './metrics.js';
import { endFeeds } from './routes/replicationRoutes.js';
import { warmSchemaCompiler } from '../service/schemas/schemaCompiler.js';
import { webhooksOf } from './routes/webhookRoutes.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  /** Stops accepting, lets in-flight requests (pushes) finish, then resolves. */
  close(): Promise<void>;
}

/** How long in-flight requests get to finish on shutdown before their connections are cut. */
const DRAIN_MS = 10_000;

/** How long a client may take to send its headers, and its whole request: slow clients are cut off. */
export interface ServerTimeouts {
  readonly headersMs: number;
  readonly requestMs: number;
  /** How long an idle keep-alive connection is kept open; 5 s when not given. */
  readonly keepAliveMs?: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = { headersMs: 30_000, requestMs: 60_000 };

export function startServer(
  deps: HttpDeps,
  port: number,
  host: string,
  timeouts = DEFAULT_TIMEOUTS,
): Promise<RunningServer> {
  const listener = createRequestListener(deps);
  warmSchemaCompiler();
  const webhooks = webhooksOf(deps);
  webhooks.start(); // deliveries after each commit of a repository with hooks
  return new Promise((resolve, reject) => {
    const server = createServer(
      {
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.requestMs,
        keepAliveTimeout: timeouts.keepAliveMs ?? 5_000,
        // How often the two timeouts are enforced (Node's default is every 30 s).
        connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs / 2),
      },
      listener,
    );
    // Counted as they open and close, so /metrics reads one number whatever their count.
    let connections = 0;
    server.on('connection', (socket) => {
      connections++;
      socket.once('close', () => connections--);
    });
    connectionCount(deps, () => connections);
    // Expect: 100-continue: the 100 when a route reads the body, so an early refusal replaces it.
    server.on('checkContinue', (req, res) => {
      continueWhenRead(req, res);
      listener(req, res);
    });
    server.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      let closing: Promise<void> | undefined;
      resolve({
        server,
        port: address.port,
        url: `http://${shown}:${address.port}`,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            endFeeds(deps); // replicas waiting on the change feed get their answer now, not at the drain's end
            const force = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
            // A keep-alive connection turns idle when its in-flight request ends: close it then,
            // rather than waiting for its keep-alive timeout.
            const sweep = setInterval(() => server.closeIdleConnections(), 25);
            listener.closeWatches(); // held watches answer 304 now rather than hold the drain
            webhooks.close(); // no delivery starts now; waiting ones are dropped (in memory only)
            server.close(() => {
              clearTimeout(force);
              clearInterval(sweep);
              done();
            });
            server.closeIdleConnections();
          })),
      });
    });
  });
}
