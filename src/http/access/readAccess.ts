/**
 * The read endpoints' access adapter (pull and the others, history, diff): reads the
 * `Client-Token` header and asks the access policy (service/access/accessPolicy.ts), which decides.
 */
import type { IncomingMessage } from 'node:http';
import { AccessPolicy, type AccessGrant } from '../../service/access/accessPolicy.js';
import type { HttpDeps } from '../deps.js';
import { header } from '../answer/headers.js';

/** The repository a request names: by the path form's names (decoded), or by its token when they are absent. */
export interface NamedRepository {
  /** The request's path, to name it in errors. */
  readonly pathname: string;
  readonly account?: string;
  readonly repository?: string;
  /**
   * The token as another protocol carries it (HTTP Basic's password or a Bearer token, see
   * routes/protocolAuth.ts); absent: the `Client-Token` header.
   */
  readonly token?: string;
}

/** The repository a read is allowed on, its head as read once for this request, and the keys of the token's security groups. */
export type ReadAccess = (
  req: IncomingMessage,
  named: NamedRepository,
  /** The read needs no key of the head (history): see AccessRequest.settingsOnly. */
  options?: { readonly settingsOnly?: boolean },
) => Promise<AccessGrant>;

export function readAccess(deps: HttpDeps): ReadAccess {
  const policy = new AccessPolicy(deps.registry, deps.tokens, { hidePrivate: deps.hidePrivate });
  return async (req, named, options) => {
    const token = named.token ?? header(req, 'Client-Token');
    return policy.require({
      operation: 'read',
      account: named.account,
      repository: named.account === undefined ? undefined : named.repository,
      token,
      what: named.pathname,
      ...(options?.settingsOnly ? { settingsOnly: true } : {}),
    });
  };
}
