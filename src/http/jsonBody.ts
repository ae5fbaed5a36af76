/**
 * Request bodies of the write endpoints: read whole within the body limit (413 beyond it, before
 * parsing), sent as `application/json` (415 otherwise), parsed as JSON (400 otherwise).
 */
import express, { type Request, type Response } from 'express';
import { badRequest, HttpError } from './errors.js';

/** Reads a body, raw, within `limit` bytes; an empty Buffer when there is none. */
export function bodyReader(limit: number): (req: Request, res: Response) => Promise<Buffer> {
  const rawBody = express.raw({ type: () => true, limit });
  return (req, res) =>
    new Promise<Buffer>((resolve, reject) =>
      rawBody(req, res, (error?: unknown) => (error ? reject(error) : resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)))),
    );
}

/** A 415 unless the request says its body is JSON; `what` names the request in the message. */
export function requireJsonContentType(req: Request, what: string): void {
  const contentType = (req.get('Content-Type') ?? '').split(';')[0].trim().toLowerCase();
  if (contentType !== 'application/json') throw new HttpError(415, 'unsupported_media_type', `${what} must be sent with Content-Type: application/json`);
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('the body is not valid JSON');
  }
}
