/**
 * The token of a request made by another protocol's client: Spring Cloud Config clients send HTTP
 * Basic (the token as the password; a user name alone counts as the token when the password is
 * empty), OAuth-style clients and OpenFeature providers `Authorization: Bearer <token>`. Without an
 * Authorization header, cfghub's own `Client-Token` header. The token goes to the access policy
 * exactly as a `Client-Token` would (readAccess.ts); it never reaches a log.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest } from '../answer/errors.js';
import { header } from '../answer/headers.js';

export function presentedToken(req: IncomingMessage): string | undefined {
  const apiKey = header(req, 'X-API-Key'); // OFREP's ApiKeyAuth
  if (apiKey !== undefined) return apiKey;
  const authorization = header(req, 'Authorization');
  if (authorization === undefined) return header(req, 'Client-Token');
  const space = authorization.indexOf(' ');
  const scheme = (space === -1 ? authorization : authorization.slice(0, space)).toLowerCase();
  const credential = space === -1 ? '' : authorization.slice(space + 1).trim();
  if (scheme === 'bearer' && credential) return credential;
  if (scheme === 'basic' && credential) {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw badRequest('HTTP Basic credentials must be user:password (the token as the password)');
    const password = decoded.slice(colon + 1);
    const user = decoded.slice(0, colon);
    return password || user || undefined;
  }
  throw badRequest('Authorization must be Basic (the token as the password) or Bearer <token>');
}
