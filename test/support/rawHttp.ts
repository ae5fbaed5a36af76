/**
 * Test support: HTTP requests with full control over what goes on the wire. Unlike fetch, the
 * path is sent exactly as given (no `..` folding, no re-encoding), no Content-Type is added on
 * its own, and the body can be sent chunked (without Content-Length).
 */
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

export interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  readonly json: any;
}

export interface RawRequest {
  readonly method?: string;
  /** Sent verbatim as the request target. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  /** A string or buffer is sent as it is; anything else as its JSON text. */
  readonly body?: unknown;
  /** Send the body in chunks with Transfer-Encoding: chunked, without Content-Length. */
  readonly chunked?: boolean;
}

export function rawRequest(baseUrl: string, options: RawRequest): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const payload =
    options.body === undefined
      ? undefined
      : Buffer.isBuffer(options.body)
        ? options.body
        : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body), 'utf8');
  const headers: Record<string, string> = { Connection: 'close', ...(options.headers ?? {}) };
  if (payload && !options.chunked) headers['Content-Length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      { host: url.hostname, port: url.port, method: options.method ?? 'POST', path: options.path, headers },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          const body = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = body ? JSON.parse(body) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
        };
        res.on('end', finish);
        // The connection may be cut once the answer is complete: keep what was received.
        res.on('close', finish);
        res.on('error', finish);
      },
    );
    // A server that answers early (413, 415, 401...) may close before reading the whole body.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (payload && options.chunked) {
      const size = 256;
      for (let i = 0; i < payload.length; i += size) req.write(payload.subarray(i, i + size));
      req.end();
    } else {
      req.end(payload);
    }
  });
}
