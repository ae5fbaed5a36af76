/**
 * Reading request headers the ConfigHub way, and writing JSON answers.
 * Written against node:http's request and response, so both express routes and the read
 * endpoints (served without express, see readRoutes.ts) use them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest } from './errors.js';

/** A header's value, where an empty value counts as absent (the ConfigHub Java client sends empty ones). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const raw = req.headers[name.toLowerCase()];
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** `true` in any case; anything else is false. */
export function booleanHeader(req: IncomingMessage, name: string): boolean {
  return header(req, name)?.toLowerCase() === 'true';
}

/** `If-Match: "<commit id>"` (quotes optional), the head a write must be made on; `*` matches any head. */
export function ifMatch(req: IncomingMessage): string | undefined {
  const value = header(req, 'If-Match');
  if (value === undefined || value === '*') return undefined;
  const match = /^(?:W\/)?"?([0-9a-f]{40})"?$/.exec(value);
  if (!match) throw badRequest('If-Match must be a commit id in quotes, as the ETag of a push gives it');
  return match[1];
}

/** A dry run's `Dry-Run-Contexts`: contexts to weigh besides the named ones, comma-separated. */
export function dryRunContexts(req: IncomingMessage): string[] {
  return (header(req, 'Dry-Run-Contexts') ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean);
}

/**
 * `Client-Version: v<major>.<minor>` or `v<major>.<minor>.<patch>` (what the
 * published ConfigHub Java client sends: `v1.3.0`); absent means latest. The API is v1.x.
 * Returns the value exactly as sent, for the commit's trailer.
 */
export function clientVersion(req: IncomingMessage): string | undefined {
  const value = header(req, 'Client-Version');
  if (value === undefined) return undefined;
  const match = /^v(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?$/.exec(value);
  if (!match) throw badRequest('Client-Version must look like v1.0 or v1.3.0');
  if (match[1] !== '1') throw badRequest(`Client-Version ${value} is not supported; this server speaks v1.x`);
  return value;
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes a whole answer: status, type, length, body (nothing for HEAD, as node:http knows). */
export function sendBytes(res: ServerResponse, status: number, contentType: string, body: Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = booleanHeader(req, 'Pretty') ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  sendBytes(res, status, JSON_TYPE, Buffer.from(text, 'utf8'));
}
