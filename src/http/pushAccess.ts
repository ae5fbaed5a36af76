/**
 * The write routes' access adapter (push, revert, restore): reads the `Client-Token` header and
 * the path's names and asks the access policy (service/accessPolicy.ts), which decides.
 */
import type { Request } from 'express';
import { AccessPolicy, type AccessGrant } from '../service/accessPolicy.js';
import type { AppContext } from './context.js';
import { header } from './headers.js';

export type PushAccess = AccessGrant;

export type WriteAccess = (req: Request) => Promise<PushAccess>;

export function pushAccess(ctx: AppContext): { byToken: WriteAccess; byPath: WriteAccess } {
  const policy = new AccessPolicy(ctx.registry, ctx.tokens);
  const byToken: WriteAccess = (req) => policy.require({ operation: 'write', token: header(req, 'Client-Token'), what: `${req.method} ${req.path}` });
  const byPath: WriteAccess = (req) =>
    policy.require({
      operation: 'write',
      account: String(req.params.account),
      repository: String(req.params.repository),
      token: header(req, 'Client-Token'),
      what: `${req.method} ${req.path}`,
    });
  return { byToken, byPath };
}
