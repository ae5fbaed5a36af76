/** Starting and stopping the HTTP server, with graceful shutdown. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpFront } from './app.js';
import type { HttpOptions } from './deps.js';
import { continueWhenRead } from './body/lingeringClose.js';
import type { Metrics } from './metrics.js';
import { warmSchemaCompiler } from '../service/schemas/schemaCompiler.js';

export interface RunningServer {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  /** The server's metrics (a worker of `serve --workers N` sends them to the primary). */
  readonly metrics: Metrics;
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
  options: HttpOptions,
  port: number,
  host: string,
  timeouts = DEFAULT_TIMEOUTS,
): Promise<RunningServer> {
  const front = createHttpFront(options);
  const listener = front.listener;
  const metrics = front.deps.parts.metrics;
  warmSchemaCompiler();
  front.deps.parts.webhooks.start(); // deliveries after each commit of a repository with hooks
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
    metrics.connections = () => connections;
    // Expect: 100-continue: the 100 when a route reads the body, so an early refusal replaces it.
    server.on('checkContinue', (req, res) => {
      continueWhenRead(req, res);
      listener(req, res);
    });
    server.listen(port, host);
    server.once('error', (error) => {
      front.close();
      reject(error);
    });
    server.once('listening', () => {
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      let closing: Promise<void> | undefined;
      resolve({
        server,
        port: address.port,
        metrics,
        url: `http://${shown}:${address.port}`,
        close: () =>
          (closing ??= new Promise<void>((done) => {
            // Held watches answer 304 and replicas waiting on the change feed get their answer now,
            // not at the drain's end; no delivery starts now (waiting ones are in memory only).
            front.endWaits();
            const force = setTimeout(() => server.closeAllConnections(), DRAIN_MS);
            // A keep-alive connection turns idle when its in-flight request ends: close it then,
            // rather than waiting for its keep-alive timeout.
            const sweep = setInterval(() => server.closeIdleConnections(), 25);
            server.close(() => {
              clearTimeout(force);
              clearInterval(sweep);
              front.close();
              done();
            });
            server.closeIdleConnections();
          })),
      });
    });
  });
}
