/**
 * Test support: one body sent by each kind of client there is, to see which of them receive the
 * server's answer to it: Node's fetch, Python's urllib and Java's HttpURLConnection (child
 * processes, unmodified), curl, and a plain socket that writes the body in pieces. Each try ends
 * as an answer (status and body) or as the error the client reported.
 */
import { execFile } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const JAVA_PROGRAM = resolve(dirname(fileURLToPath(import.meta.url)), 'PostFile.java');
/** Room for what a child process prints about 17 MiB bodies: a few lines. */
const OUTPUT_BYTES = 1024 * 1024;

export type Outcome = { readonly status: number; readonly body: string } | { readonly error: string };

/** "<status> <body>" or "error <what>", one line per try, as the Python and Java clients print them. */
function outcomesOf(stdout: string): Outcome[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const match = /^(\d{3}) (.*)$/.exec(line);
      return match ? { status: Number(match[1]), body: match[2] } : { error: line };
    });
}

export async function fetchPost(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: new Uint8Array(body),
    });
    return { status: response.status, body: await response.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? String(error) };
  }
}

const PYTHON_POST = `
import sys, urllib.request, urllib.error
url, path, tries = sys.argv[1], sys.argv[2], int(sys.argv[3])
body = open(path, 'rb').read()
for _ in range(tries):
    try:
        request = urllib.request.Request(url, data=body, headers={'Content-Type': 'application/json'}, method='POST')
        with urllib.request.urlopen(request) as answer:
            print(answer.status, answer.read().decode())
    except urllib.error.HTTPError as answer:
        print(answer.code, answer.read().decode())
    except Exception as error:
        print('error', repr(error))
`;

/** Python's urllib posting `file` `tries` times. */
export async function urllibPosts(url: string, file: string, tries: number): Promise<Outcome[]> {
  const { stdout } = await run('python3', ['-c', PYTHON_POST, url, file, String(tries)], { maxBuffer: OUTPUT_BYTES });
  return outcomesOf(stdout);
}

/** Java's HttpURLConnection posting `file` `tries` times (PostFile.java). */
export async function javaPosts(url: string, file: string, tries: number): Promise<Outcome[]> {
  const { stdout } = await run('java', [JAVA_PROGRAM, url, file, String(tries)], { maxBuffer: OUTPUT_BYTES });
  return outcomesOf(stdout);
}

/**
 * curl posting `file`; `expectContinue: false` sends it without `Expect: 100-continue` (which curl
 * adds for bodies over 1 MiB). `uploaded`: the body bytes curl sent.
 */
export async function curlPost(
  url: string,
  file: string,
  expectContinue: boolean,
): Promise<Outcome & { uploaded?: number }> {
  const args = [
    '-sS',
    '-H',
    'Content-Type: application/json',
    '--data-binary',
    `@${file}`,
    '-w',
    '\n%{http_code} %{size_upload}',
    url,
  ];
  if (!expectContinue) args.unshift('-H', 'Expect:');
  try {
    const { stdout } = await run('curl', args, { maxBuffer: OUTPUT_BYTES });
    const end = stdout.lastIndexOf('\n');
    const [status, uploaded] = stdout
      .slice(end + 1)
      .split(' ')
      .map(Number);
    return { status, body: stdout.slice(0, end), uploaded };
  } catch (error) {
    return { error: String((error as { stderr?: string }).stderr ?? error).trim() };
  }
}

export interface SocketUpload {
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** The body: bytes, or a size to send of a filler (what comes after a refusal is never read). */
  readonly body: Buffer | number;
  /** No Content-Length: the body in chunks (Transfer-Encoding: chunked). */
  readonly chunked?: boolean;
  /** Stop sending at the first byte of an answer (as a careful client does), or send it all regardless (as most do). */
  readonly stopAtAnswer: boolean;
  /** A pause between pieces, to make a body take a while. */
  readonly pauseMs?: number;
  /** Send `Expect: 100-continue` and the body only after a `100 Continue` (as curl does for large bodies). */
  readonly expectContinue?: boolean;
}

export interface SocketAnswer {
  /** Everything received, as text, and its status (0 when nothing came). */
  readonly text: string;
  readonly status: number;
  /** The answer's JSON body, or undefined. */
  readonly json: any;
  /** Body bytes written before the client stopped. */
  readonly sent: number;
  /** The connection's error (ECONNRESET, EPIPE), or undefined when it ended cleanly. */
  readonly error?: string;
  /** Whether a `100 Continue` came (it is not part of `text`). */
  readonly continued: boolean;
}

export const PIECE_BYTES = 64 * 1024;

/** Resolves at the first of `events` on `socket`. */
function firstOf(socket: Socket, events: readonly string[]): Promise<void> {
  return new Promise((next) => {
    const done = () => {
      for (const event of events) socket.off(event, done);
      next();
    };
    for (const event of events) socket.on(event, done);
  });
}

/** A plain socket that writes the request, then its body in 64 KiB pieces, and reads until the connection ends. */
export function socketPost(url: string, upload: SocketUpload): Promise<SocketAnswer> {
  const { hostname, port } = new URL(url);
  let size = typeof upload.body === 'number' ? upload.body : upload.body.length;
  const filler = Buffer.alloc(PIECE_BYTES, 'a');
  const pieceAt = (offset: number) => {
    const length = Math.min(PIECE_BYTES, size - offset);
    return typeof upload.body === 'number' ? filler.subarray(0, length) : upload.body.subarray(offset, offset + length);
  };
  const headers: Record<string, string> = {
    Host: `${hostname}:${port}`,
    'Content-Type': 'application/json',
    ...upload.headers,
  };
  if (upload.expectContinue) headers.Expect = '100-continue';
  if (upload.chunked) headers['Transfer-Encoding'] = 'chunked';
  else headers['Content-Length'] = String(size);
  const head = `POST ${upload.path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

  return new Promise((resolve) => {
    // Half-open allowed: like any client, it may go on sending after the server's side has ended.
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    const received: Buffer[] = [];
    let sent = 0;
    let error: string | undefined;
    let finished = false;
    let continued = false;
    const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
    const finish = () => {
      if (finished) return;
      finished = true;
      let text = Buffer.concat(received).toString('utf8');
      if (continued) text = text.slice(CONTINUE.length);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      let json: unknown;
      try {
        json = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      } catch {
        json = undefined;
      }
      resolve({ text, status, json, sent, error, continued });
    };
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', (problem: NodeJS.ErrnoException) => {
      error ??= problem.code ?? problem.message;
      finish();
    });
    socket.on('close', finish);
    let sending = true;
    let serverEnded = false;
    socket.on('end', () => {
      serverEnded = true;
      if (!sending) socket.end();
    });
    const receivedBytes = () => received.reduce((sum, chunk) => sum + chunk.length, 0);
    const answered = () => receivedBytes() > (continued ? CONTINUE.length : 0);
    const stopped = () => finished || error !== undefined || (upload.stopAtAnswer && answered());
    const sendAll = async () => {
      socket.write(head);
      if (upload.expectContinue) {
        while (receivedBytes() < CONTINUE.length && !finished) await firstOf(socket, ['data', 'close']);
        continued = Buffer.concat(received).toString('latin1').startsWith(CONTINUE);
        if (!continued) size = 0;
      }
      while (sent < size && !stopped()) {
        const piece = pieceAt(sent);
        const framed = upload.chunked
          ? [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]
          : [piece];
        let flushed = true;
        for (const part of framed) flushed = socket.write(part) && flushed;
        sent += piece.length;
        if (!flushed) await firstOf(socket, ['drain', 'close']);
        // Back to the event loop after every piece, so that an answer is read as it arrives: when the
        // kernel takes each piece at once (a server draining faster than this client writes), 'drain'
        // comes on the next tick and a loop awaiting it alone never reads, sending the whole body unseen.
        if (upload.pauseMs) await new Promise((next) => setTimeout(next, upload.pauseMs));
        else await new Promise((next) => setImmediate(next));
      }
      if (upload.chunked && sent >= size && !stopped()) socket.write('0\r\n\r\n');
      sending = false;
      if (serverEnded) socket.end();
    };
    socket.once('connect', () => void sendAll());
  });
}
