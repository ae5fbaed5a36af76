/**
 * Who may read a repository (contract section 7), for every read endpoint (pull and the others,
 * history, diff): on `/rest/<name>` the `Client-Token` names the repository; on
 * `/rest/<name>/{account}/{repository}` a token of that repository, or none if the repository
 * allows token-free pull and is not private.
 */
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../service/errors.js';
import { requireRepository } from '../service/repositories.js';
import type { GroupKey } from '../service/sealing.js';
import { tokenBelongsTo, tokenGroupKeys, tokenRepository } from '../service/tokens.js';
import { settingsAt } from '../store/readSettings.js';
import type { GitRepository } from '../store/repository.js';
import type { AppContext } from './context.js';
import { header } from './headers.js';
import { requireVisible } from './hidePrivate.js';

/** The repository a request names: by the path form's names (decoded), or by its token when they are absent. */
export interface NamedRepository {
  /** The request's path, to name it in errors. */
  readonly pathname: string;
  readonly account?: string;
  readonly repository?: string;
}

/** The repository a read is allowed on, its head as read once for this request, and the keys of the token's security groups. */
export type ReadAccess = (req: IncomingMessage, named: NamedRepository) => Promise<{ repository: GitRepository; head: string; groupKeys?: readonly GroupKey[] }>;

/** The access check of a read: the token form when the path names no repository, else the path form. */
export function readAccess(ctx: AppContext): ReadAccess {
  const byToken: ReadAccess = async (req, named) => {
    const presented = header(req, 'Client-Token');
    if (!presented) throw new ServiceError('unauthorized', `${named.pathname} needs a Client-Token header`);
    const token = ctx.tokens.authenticate(presented);
    const repository = tokenRepository(ctx.registry, token);
    return { repository, head: repository.head(), groupKeys: tokenGroupKeys(token, presented) };
  };

  const byPath: ReadAccess = async (req, named) => {
    const repository = requireRepository(ctx.registry, named.account!, named.repository!);
    // Only under --hide-private: otherwise the head is read in the same turn as the lookup, as before.
    if (ctx.hidePrivate) await requireVisible(ctx, req, repository, named.account!, named.repository!);
    const head = repository.head();
    const presented = header(req, 'Client-Token');
    if (presented) {
      const token = ctx.tokens.authenticate(presented);
      if (!tokenBelongsTo(token, repository)) throw new ServiceError('forbidden', `the Client-Token is not a token of ${repository.fullName}`);
      return { repository, head, groupKeys: tokenGroupKeys(token, presented) };
    }
    // Settings alone when the head breaks the layout rules, so history can show what went wrong.
    const settings = await settingsAt(repository, head);
    if (settings.isPrivate) throw new ServiceError('unauthorized', `repository ${repository.fullName} is private: reading it needs a Client-Token of its own`);
    if (!settings.tokenFreePull) throw new ServiceError('forbidden', `repository ${repository.fullName} does not allow reads without a Client-Token`);
    return { repository, head };
  };
  return (req, named) => (named.account === undefined ? byToken : byPath)(req, named);
}
