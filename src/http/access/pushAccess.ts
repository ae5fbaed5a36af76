/**
 * The write routes' access adapter (push, revert, restore): reads the `Client-Token` header and
 * the path's names and asks the access policy (service/access/accessPolicy.ts), which decides.
 */
import type { Request } from 'express';
import type { IncomingMessage } from 'node:http';
import { AccessPolicy, type AccessGrant } from '../../service/access/accessPolicy.js';
import type { HttpDeps } from '../deps.js';
import { header } from '../answer/headers.js';

export type PushAccess = AccessGrant;

export type WriteAccess = (req: Request) => Promise<PushAccess>;

/** The repository a write names: by the path's names (decoded), or by its token when they are absent; `pathname` names the request in errors. */
export interface NamedWrite {
  readonly pathname: string;
  readonly account?: string;
  readonly repository?: string;
}

/** Write access for a request of node:http (the push route, which is served without express). */
export type PlainWriteAccess = (req: IncomingMessage, named: NamedWrite) => Promise<PushAccess>;

export function plainWriteAccess(deps: HttpDeps): PlainWriteAccess {
  const policy = new AccessPolicy(deps.registry, deps.tokens, { hidePrivate: deps.hidePrivate });
  return (req, named) =>
    policy.require({
      operation: 'write',
      account: named.account,
      repository: named.account === undefined ? undefined : named.repository,
      token: header(req, 'Client-Token'),
      what: `${req.method} ${named.pathname}`,
    });
}

export function pushAccess(deps: HttpDeps): { byToken: WriteAccess; byPath: WriteAccess } {
  const access = plainWriteAccess(deps);
  const byToken: WriteAccess = (req) => access(req, { pathname: req.path });
  const byPath: WriteAccess = (req) =>
    access(req, { pathname: req.path, account: String(req.params.account), repository: String(req.params.repository) });
  return { byToken, byPath };
}
