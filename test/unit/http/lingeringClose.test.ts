/**
 * The lingering close of a refused body, on a node:http server of its own with small bounds: the
 * refusal reaches a client that sends everything first, the drain stops at each bound (bytes,
 * time in all, time without a byte), and `Expect: 100-continue` gets the final answer in place of
 * the 100 when a body is refused before it is read.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAfterDraining, continueWhenRead, type LingerBounds } from '../../../src/http/body/lingeringClose.js';
import { until } from '../../support/poll.js';
import { socketPost } from '../../support/uploadClients.js';

const MiB = 1024 * 1024;
const LARGE: LingerBounds = { bytes: 1024 * MiB, ms: 60_000, idleMs: 60_000 };
/** Each route refuses its body at once, draining it within these bounds; /read reads it and answers 200. */
const ROUTES: Record<string, LingerBounds> = {
  '/bytes': { ...LARGE, bytes: 16 * MiB },
  '/whole': { ...LARGE, ms: 1_000 },
  '/idle': { ...LARGE, idleMs: 300 },
};

let server: Server;
let url: string;
/** The client ports of the connections the server has closed. */
const closedPorts = new Set<number>();

function refuseOrRead(req: IncomingMessage, res: ServerResponse): void {
  const bounds = ROUTES[req.url ?? ''];
  if (!bounds) {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => res.end(`read ${bytes}`));
    return;
  }
  closeAfterDraining(req, res, bounds);
  res.statusCode = 413;
  res.end('{"error":"payload_too_large"}');
}

beforeAll(async () => {
  server = createServer(refuseOrRead);
  server.on('connection', (socket) => {
    const port = socket.remotePort!;
    socket.once('close', () => closedPorts.add(port));
  });
  server.on('checkContinue', (req, res) => {
    continueWhenRead(req, res);
    refuseOrRead(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A connection that sends a request's head and `sent` body bytes of the `announced`, then nothing; `closed()` once the server closed its side whole. */
async function stalledUpload(path: string, announced: number, sent: number) {
  // Half-open allowed: the server's end of its answer does not end this side.
  const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true });
  await new Promise((connected) => socket.once('connect', connected));
  let text = '';
  socket.on('data', (chunk) => (text += String(chunk)));
  socket.on('error', () => undefined);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${announced}\r\n\r\n`);
  socket.write(Buffer.alloc(sent, 'a'));
  const port = socket.localPort!;
  return { text: () => text, closed: () => closedPorts.has(port), destroy: () => socket.destroy() };
}

describe('a refused body', () => {
  it('is drained whole within the bounds: a client that sends everything before reading gets the answer and a clean end', async () => {
    // 12 MiB: more than the connection's buffers hold, so a server that closed at once would reset it.
    const answer = await socketPost(url, { path: '/bytes', body: 12 * MiB, stopAtAnswer: false });
    expect(answer.error).toBeUndefined();
    expect(answer.status).toBe(413);
    expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(answer.sent).toBe(12 * MiB);
  });

  it('is cut past the bytes bound: the client read its answer, and could not send it all', async () => {
    const answer = await socketPost(url, { path: '/bytes', body: 256 * MiB, stopAtAnswer: false });
    expect(answer.status).toBe(413);
    expect(answer.sent).toBeLessThan(128 * MiB);
  });

  it('is cut at the time bound, however steadily it comes', async () => {
    // A piece every 20 ms: never idle, never near the bytes bound; only the time in all ends it.
    const answer = await socketPost(url, { path: '/whole', body: 64 * MiB, stopAtAnswer: false, pauseMs: 20 });
    expect(answer.status).toBe(413);
    expect(answer.sent).toBeLessThan(64 * MiB);
  });

  it('is cut when the client sends nothing for the idle bound, not before', async () => {
    const upload = await stalledUpload('/idle', 10 * MiB, 1024);
    const start = Date.now();
    try {
      await until(() => upload.closed(), 'the server to close a connection that went idle', 10_000);
      expect(Date.now() - start).toBeGreaterThanOrEqual(ROUTES['/idle'].idleMs);
      expect(upload.text()).toMatch(/^HTTP\/1\.1 413 /);
    } finally {
      upload.destroy();
    }
  });
});

describe('Expect: 100-continue', () => {
  it('gets the final answer in place of the 100 when the body is refused before it is read, and the body is not sent', async () => {
    const answer = await socketPost(url, { path: '/bytes', body: 10 * MiB, stopAtAnswer: true, expectContinue: true });
    expect(answer.continued).toBe(false);
    expect(answer.status).toBe(413);
    expect(answer.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(answer.sent).toBe(0);
    expect(answer.error).toBeUndefined();
  });

  it('gets its 100 when the route reads the body', async () => {
    const answer = await socketPost(url, { path: '/read', body: 3 * MiB, stopAtAnswer: false, expectContinue: true });
    expect(answer.continued).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(new RegExp(`read ${3 * MiB}$`));
  });
});
