/**
 * A webhook receiver for tests: a real node:http server on a loopback port that checks each
 * body's HMAC-SHA256 signature with the secret it was given, as a receiver would (its own HMAC),
 * keeps what it got, and answers 204, or holds the request unanswered in `hang` mode.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly json: Record<string, unknown>;
  readonly signed: boolean;
}

/** The receiving server: checks the signature as a receiver would (its own HMAC), answers per `mode`. */
export class Receiver {
  readonly received: Received[] = [];
  /** Requests held unanswered in `hang` mode. */
  readonly held: ServerResponse[] = [];
  mode: 'ok' | 'hang' = 'ok';
  private server: Server | undefined;
  port = 0;

  constructor(private readonly secret: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const expected = `sha256=${createHmac('sha256', this.secret).update(body).digest('hex')}`;
        const signed = req.headers['x-cfghub-signature-256'] === expected;
        this.received.push({ headers: req.headers, body, json: JSON.parse(body), signed });
        if (!signed) res.writeHead(401).end('bad signature');
        else if (this.mode === 'hang') this.held.push(res);
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  of(commit: string): Received[] {
    return this.received.filter((r) => r.json.commit === commit);
  }
}
