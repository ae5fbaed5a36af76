/**
 * Refusing a body before it is read whole, so that the refusal reaches the client.
 *
 * A server that answers early (a 413 for a body announced or grown past the limit) and closes at
 * once has the kernel answer every byte still arriving with a reset. Clients that send the whole
 * body before they read a byte (Node's fetch, Python's urllib, Java's HttpURLConnection, a plain
 * socket) then see a broken pipe or a reset, never the answer. So, as nginx's lingering close: the
 * answer says `Connection: close` and the server's side of the connection is shut after it (the
 * client reads the answer, then the end of it), while the rest of the body is read and thrown away,
 * never kept, until the client has sent it all or closed its side; the connection is closed then,
 * or at the first bound reached: LINGER_BOUNDS.bytes more bytes, LINGER_BOUNDS.ms in all,
 * LINGER_BOUNDS.idleMs without a byte.
 *
 * `Expect: 100-continue` (curl's large uploads, Java's when asked): the 100 goes out when a route
 * starts reading the body, so a request refused before that (a 413 by its Content-Length, a 401,
 * 403, 415 or 404) gets its final answer instead and its body is never sent at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

export interface LingerBounds {
  /** Bytes of a refused body read and thrown away before the connection is closed regardless. */
  readonly bytes: number;
  /** How long a refused body is drained at most, from its answer. */
  readonly ms: number;
  /** How long the client may send nothing while its refused body drains. */
  readonly idleMs: number;
}

/**
 * 64 MiB: four times the default body limit, so a body somewhat over any limit (the usual mistake)
 * is drained whole in well under a second on a local network; 30 s and 5 s idle are nginx's
 * lingering_time and lingering_timeout.
 */
export const LINGER_BOUNDS: LingerBounds = { bytes: 64 * 1024 * 1024, ms: 30_000, idleMs: 5_000 };

/**
 * Marks the answer being made as one that closes the connection after draining what remains of
 * the request's body (within `bounds`). Call it before the answer's headers are sent.
 */
export function closeAfterDraining(
  req: IncomingMessage,
  res: ServerResponse,
  bounds: LingerBounds = LINGER_BOUNDS,
): void {
  res.setHeader('Connection', 'close');
  // Just before the answer is complete: node:http then has the socket ended and destroyed (which
  // resets a connection with unread bytes), and would stop handing the body on.
  res.once('prefinish', () => {
    if (!req.complete) linger(req, req.socket, bounds);
  });
}

function linger(req: IncomingMessage, socket: Socket, bounds: LingerBounds): void {
  let drained = 0;
  let bodyDone = false;
  let answered = false;
  const stop = () => {
    clearTimeout(whole);
    clearTimeout(idle);
  };
  const cut = () => {
    stop();
    socket.destroy();
  };
  // The answer flushed, then the connection closed: nothing unread is left to cause a reset.
  const closeWhenFlushed = () => {
    stop();
    Socket.prototype.destroySoon.call(socket);
  };
  const whole = setTimeout(cut, bounds.ms).unref();
  const idle = setTimeout(cut, bounds.idleMs).unref();
  // A listener added now keeps node:http from dropping the body unread; the chunks are not kept.
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > bounds.bytes) cut();
    else idle.refresh();
  });
  req.once('end', () => {
    bodyDone = true;
    if (answered) closeWhenFlushed();
  });
  socket.once('close', stop);
  // What node:http calls once the answer is complete, for an answer that closes the connection.
  socket.destroySoon = () => {
    answered = true;
    if (bodyDone) closeWhenFlushed();
    else socket.end();
  };
}

/**
 * The server's `checkContinue` handling (see the module's comment): the 100 when the body is first
 * read; an answer made before that closes the connection, after draining the body should the
 * client send it anyway.
 */
export function continueWhenRead(req: IncomingMessage, res: ServerResponse): void {
  req.once('resume', () => {
    if (!res.headersSent) res.writeContinue();
  });
  closeAfterDraining(req, res);
}
