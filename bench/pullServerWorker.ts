/**
 * The pull scenario's server process (see pullServer.ts): cfghub's request listener, built with
 * the HTTP front's listener as `cfghub serve` builds it, plus one extra route, `GET /static`, that
 * answers the exact bytes of a pull with plain node:http calls, so both endpoints are served by
 * one process and one HTTP server. Listens on 127.0.0.1 on a free port, and exits when the parent
 * stops it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createHttpFront } from '../src/http/app.js';
import { DEFAULT_BODY_LIMIT } from '../src/http/deps.js';
import { TokenService } from '../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../src/disk/registry.js';
import { TokenStore } from '../src/disk/records/tokenStore.js';
import type { PullServerMessage, PullServerReply, PullServerStart } from './pullServer.js';
import { residentMiB } from './probes.js';

async function start(request: PullServerStart): Promise<PullServerReply> {
  const deps = {
    registry: new RepositoryRegistry(request.reposRoot),
    tokens: new TokenService(new TokenStore(request.reposRoot)),
    // Silent, as in bench/server.ts: the benchmark measures the service, not log output to a pipe.
    logger: pino({ level: 'silent' }),
    bodyLimit: DEFAULT_BODY_LIMIT,
  };
  let staticBody: Buffer | undefined;
  // /static is answered ahead of cfghub's listener, with no request id, no log call and no route
  // table: the floor of node:http itself. Any bias of this arrangement is against cfghub.
  const cfghub = createHttpFront(deps).listener;
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = createServer((req, res) => {
      if (req.url !== '/static') return cfghub(req, res);
      if (!staticBody) res.writeHead(503).end();
      else
        res
          .writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': staticBody.length })
          .end(staticBody);
    }).listen(0, '127.0.0.1');
    listening.once('error', reject);
    listening.once('listening', () => resolve(listening));
  });
  // The same timeouts as src/http/server.ts, so keep-alive behaves as in `cfghub serve`.
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The static bytes are the pull answer itself, fetched once through the real route (which also
  // builds and caches that answer, as a first client would).
  const response = await fetch(`${url}${request.pullPath}`, { headers: { Context: request.context } });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200)
    throw new Error(`the first pull answered ${response.status}: ${body.toString('utf8', 0, 300)}`);
  staticBody = body;
  return { kind: 'ready', url, bodyBytes: body.length, residentMiB: residentMiB() };
}

process.on('message', (message: PullServerMessage) => {
  const reply = (value: PullServerReply) => process.send!(value);
  if (message.kind === 'memory') {
    reply({ kind: 'memory', residentMiB: residentMiB() });
    return;
  }
  start(message).then(reply, (error: unknown) =>
    reply({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The parent stops this process by its pid; a lost parent (IPC closed) ends it too.
process.on('disconnect', () => process.exit(0));
