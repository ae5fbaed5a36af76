/**
 * Request bodies of the write endpoints: read whole within the body limit (413 beyond it, before
 * parsing), sent as `application/json` (415 otherwise), valid UTF-8 and JSON (400 otherwise).
 */
import express, { type Request, type Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonSyntaxProblem, lineAndColumn } from '../../lib/jsonSyntax.js';
import { decodeUtf8Strict } from '../../lib/utf8.js';
import { badRequest, HttpError } from '../answer/errors.js';
import { InvalidUtf8Error } from '../../domain/errors.js';
import { closeAfterDraining } from './lingeringClose.js';

/**
 * Reads a body, raw, within `limit` bytes; an empty Buffer when there is none. A body sent as it
 * is (no Content-Encoding) is read by readPlainBody; a compressed one by express's body parser,
 * which inflates it.
 */
export function bodyReader(limit: number): (req: Request, res: Response) => Promise<Buffer> {
  const rawBody = express.raw({ type: () => true, limit });
  return (req, res) => {
    if (!isCompressed(req)) return readPlainBody(req, res, limit);
    const tooLarge = announcedTooLarge(req, res, limit);
    if (tooLarge) return Promise.reject(tooLarge);
    return new Promise<Buffer>((resolve, reject) =>
      rawBody(req, res, (error?: unknown) =>
        error ? reject(error) : resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)),
      ),
    );
  };
}

/** Whether the body has a Content-Encoding other than identity (absent or empty is identity, as body-parser reads it). */
export function isCompressed(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return !!encoding && encoding.toLowerCase() !== 'identity';
}

/**
 * The 413 of a body whose Content-Length announces more than `limit`, or undefined. It is answered
 * before a byte of the body is kept, and the connection is closed after it, the rest of the body
 * drained and thrown away within bounds (lingeringClose.ts): a body parser would drain it whole
 * first, which lets a client hold the request open for as long as it takes to send gigabytes.
 */
function announcedTooLarge(req: IncomingMessage, res: ServerResponse, limit: number): HttpError | undefined {
  const announced = req.headers['content-length'];
  if (announced === undefined || !/^\d+$/.test(announced) || Number(announced) <= limit) return undefined;
  closeAfterDraining(req, res);
  return new HttpError(
    413,
    'payload_too_large',
    `the request body is ${announced} bytes (Content-Length), more than the limit of ${limit}`,
  );
}

/** A body-parser error of the given type: errorAnswer.ts answers it as it answers body-parser's own. */
const parserError = (type: string, message: string) => Object.assign(new Error(message), { type });

/**
 * A body sent as it is (identity), read with node:http alone: the announced 413 at once; a body
 * that grows past `limit` is answered 413 as soon as it does, its chunks no longer kept, and the
 * connection closed after the rest is drained within bounds (as for the announced one); a body cut
 * short or not of its announced length is a 400.
 */
export function readPlainBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const tooLarge = announcedTooLarge(req, res, limit);
  if (tooLarge) return Promise.reject(tooLarge);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (error?: Error) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limit) return void chunks.push(chunk);
      chunks.length = 0;
      closeAfterDraining(req, res);
      done(parserError('entity.too.large', 'request entity too large'));
    };
    const onEnd = () => {
      const announced = req.headers['content-length'];
      if (announced !== undefined && Number(announced) !== received)
        return done(parserError('request.size.invalid', 'request size did not match content length'));
      done();
    };
    const onAborted = () => done(parserError('request.aborted', 'request aborted'));
    const onError = (error: Error) => done(error);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
  });
}

/** A 415 unless the request says its body is JSON; `what` names the request in the message. */
export function requireJsonContentType(req: IncomingMessage, what: string): void {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (contentType !== 'application/json')
    throw new HttpError(415, 'unsupported_media_type', `${what} must be sent with Content-Type: application/json`);
}

/**
 * Every JSON body the server reads goes through here: decoded strictly (a body that is not valid
 * UTF-8 is a 400 naming the first bad byte's offset, never stored with replacement characters),
 * then parsed.
 */
export function parseJson(body: Buffer): unknown {
  let text: string;
  try {
    text = decodeUtf8Strict(body);
  } catch (error) {
    if (!(error instanceof InvalidUtf8Error)) throw error;
    throw badRequest(
      `the body is not valid UTF-8: ${error.message}; send text as UTF-8, or escape each non-ASCII character as \\uXXXX inside JSON strings`,
      [{ path: 'body', message: `not valid UTF-8 at byte offset ${error.offset}` }],
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    // Found again by our own scanner: V8's message may quote the body, which may hold a secret.
    const found = jsonSyntaxProblem(text);
    if (!found) throw badRequest('the body is not valid JSON');
    const { line, column } = lineAndColumn(text, found.offset);
    throw badRequest(
      `the body is not valid JSON: ${found.problem}, at line ${line}, column ${column} (character ${found.offset + 1})`,
    );
  }
}
