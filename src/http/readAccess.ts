/**
 * The read endpoints' access adapter (pull and the others, history, diff): reads the
 * `Client-Token` header and asks the access policy (service/accessPolicy.ts), which decides.
 */
import type { IncomingMessage } from 'node:http';
import { AccessPolicy } from '../service/accessPolicy.js';
import type { GroupKey } from '../service/sealing.js';
import type { GitRepository } from '../disk/repository.js';
import type { AppContext } from './context.js';
import { header } from './headers.js';
import { requireVisibleByName } from './hidePrivate.js';

/** The repository a request names: by the path form's names (decoded), or by its token when they are absent. */
export interface NamedRepository {
  /** The request's path, to name it in errors. */
  readonly pathname: string;
  readonly account?: string;
  readonly repository?: string;
}

/** The repository a read is allowed on, its head as read once for this request, and the keys of the token's security groups. */
export type ReadAccess = (
  req: IncomingMessage,
  named: NamedRepository,
  /** The read needs no key of the head (history): see AccessRequest.settingsOnly. */
  options?: { readonly settingsOnly?: boolean },
) => Promise<{ repository: GitRepository; head: string; groupKeys?: readonly GroupKey[] }>;

export function readAccess(ctx: AppContext): ReadAccess {
  const policy = new AccessPolicy(ctx.registry, ctx.tokens);
  return async (req, named, options) => {
    // Only under --hide-private: otherwise the head is read in the same turn as the lookup, as before.
    if (ctx.hidePrivate && named.account !== undefined) await requireVisibleByName(ctx, req, named.account, named.repository!);
    return policy.require({
      operation: 'read',
      account: named.account,
      repository: named.account === undefined ? undefined : named.repository,
      token: header(req, 'Client-Token'),
      what: named.pathname,
      ...(options?.settingsOnly ? { settingsOnly: true } : {}),
    });
  };
}
