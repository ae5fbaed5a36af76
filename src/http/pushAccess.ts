/**
 * Who may write a repository (contract section 6), for push, revert and restore: on the token
 * form the `Client-Token` names the repository; on the path form a token of that repository, or
 * none if the repository allows token-free push.
 */
import type { Request } from 'express';
import { ServiceError } from '../service/errors.js';
import { requireRepository } from '../service/repositories.js';
import type { GroupKey } from '../service/sealing.js';
import { tokenBelongsTo, tokenGroupKeys, tokenRepository } from '../service/tokens.js';
import { settingsAt } from '../store/readSettings.js';
import type { GitRepository } from '../store/repository.js';
import type { TokenRecord } from '../store/tokenStore.js';
import type { AppContext } from './context.js';
import { header } from './headers.js';
import { requireVisible } from './hidePrivate.js';

export interface PushAccess {
  readonly repository: GitRepository;
  readonly token?: TokenRecord;
  /** Keys of the security groups the token is bound to. */
  readonly groupKeys?: readonly GroupKey[];
}

export type WriteAccess = (req: Request) => Promise<PushAccess>;

export function pushAccess(ctx: AppContext): { byToken: WriteAccess; byPath: WriteAccess } {
  const byToken: WriteAccess = async (req) => {
    const presented = header(req, 'Client-Token');
    if (!presented) throw new ServiceError('unauthorized', `${req.method} ${req.path} needs a Client-Token header`);
    const token = ctx.tokens.authenticate(presented);
    return { repository: tokenRepository(ctx.registry, token), token, groupKeys: tokenGroupKeys(token, presented) };
  };

  const byPath: WriteAccess = async (req) => {
    const repository = requireRepository(ctx.registry, String(req.params.account), String(req.params.repository));
    if (ctx.hidePrivate) await requireVisible(ctx, req, repository, String(req.params.account), String(req.params.repository));
    const presented = header(req, 'Client-Token');
    if (presented) {
      const token = ctx.tokens.authenticate(presented);
      if (!tokenBelongsTo(token, repository)) throw new ServiceError('forbidden', `the Client-Token is not a token of ${repository.fullName}`);
      return { repository, token, groupKeys: tokenGroupKeys(token, presented) };
    }
    const settings = await settingsAt(repository, repository.head());
    if (!settings.tokenFreePush) {
      throw new ServiceError('forbidden', `repository ${repository.fullName} does not allow push without a Client-Token`);
    }
    return { repository };
  };
  return { byToken, byPath };
}
