/** Reading request headers the ConfigHub way, and writing JSON answers (contract section 4). */
import type { Request, Response } from 'express';
import { badRequest } from './errors.js';

/** A header's value, where an empty value counts as absent (the ConfigHub Java client sends empty ones). */
export function header(req: Request, name: string): string | undefined {
  const value = req.get(name);
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `true` in any case; anything else is false. */
export function booleanHeader(req: Request, name: string): boolean {
  return header(req, name)?.toLowerCase() === 'true';
}

/** `Client-Version: v<major>.<minor>`; absent means latest. The API is v1.x. */
export function clientVersion(req: Request): string | undefined {
  const value = header(req, 'Client-Version');
  if (value === undefined) return undefined;
  const match = /^v(\d{1,6})\.(\d{1,6})$/.exec(value);
  if (!match) throw badRequest('Client-Version must look like v1.0');
  if (match[1] !== '1') throw badRequest(`Client-Version ${value} is not supported; this server speaks v1.x`);
  return value;
}

export function sendJson(req: Request, res: Response, status: number, body: unknown): void {
  const text = booleanHeader(req, 'Pretty') ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.status(status).type('application/json').send(text);
}
