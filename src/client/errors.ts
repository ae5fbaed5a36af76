/** What the clients throw: the server's error answers, refused pushes, and a server out of reach. */
import { errorBodySchema } from '../api/errorBody.js';

/** `fetch` as the clients call it: the global one, or one a caller passes (tests, a browser's options). */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** The server answered with an error: its status, code and message. */
export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error body as the server sent it, when it sent one. */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

/** The server answered with a redirect, which no cfghub client follows (redirects.ts). */
export class RedirectRefusedError extends ClientError {
  constructor(status: number, message: string) {
    super(status, 'redirect_refused', message);
    this.name = 'RedirectRefusedError';
  }
}

/** A push the server refused (304): nothing was changed; the reason is the message. */
export class PushRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'PushRefusedError';
  }
}

/** The server could not be reached, or answered something that is not its API. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** The ClientError of an error answer: its code and message when the body is an error body, else `fallback`. */
export function failureOf(status: number, body: unknown, fallback: string): ClientError {
  const error = errorBodySchema.safeParse(body);
  if (error.success) return new ClientError(status, error.data.error, error.data.message, body);
  return new ClientError(status, 'http_error', fallback, body);
}
