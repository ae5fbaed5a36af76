/**
 * The write routes' access adapter (push, revert, restore): reads the `Client-Token` header and
 * the path's names and asks the access policy (service/accessPolicy.ts), which decides.
 */
import type { Request } from 'express';
import { AccessPolicy, type AccessGrant } from '../service/accessPolicy.js';
import type { AppContext } from './context.js';
import { header } from './headers.js';
import { requireVisibleByName } from './hidePrivate.js';

export type PushAccess = AccessGrant;

export type WriteAccess = (req: Request) => Promise<PushAccess>;

export function pushAccess(ctx: AppContext): { byToken: WriteAccess; byPath: WriteAccess } {
  const policy = new AccessPolicy(ctx.registry, ctx.tokens);
  const byToken: WriteAccess = (req) => policy.require({ operation: 'write', token: header(req, 'Client-Token'), what: `${req.method} ${req.path}` });
  const byPath: WriteAccess = async (req) => {
    const account = String(req.params.account);
    const repository = String(req.params.repository);
    if (ctx.hidePrivate) await requireVisibleByName(ctx, req, account, repository);
    return policy.require({ operation: 'write', account, repository, token: header(req, 'Client-Token'), what: `${req.method} ${req.path}` });
  };
  return { byToken, byPath };
}
