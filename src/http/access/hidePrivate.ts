/**
 * `serve --hide-private`: private repositories are hidden from callers who
 * hold no token of them. The listing leaves them out, and a read (or push, or clone) of one without
 * a valid token of its own answers exactly as a repository that does not exist, so neither the
 * listing nor a probe tells whether the name is taken. Off by default: the seed lists everything.
 */
import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../../service/errors.js';
import { requireRepository, unknownRepository } from '../../service/admin/repositories.js';
export { unknownRepository };
import type { RepositoryRecord } from '../../service/read/listing.js';
import { tokenBelongsTo } from '../../service/admin/tokens.js';
import { settingsAt } from '../../layout/readSettings.js';
import type { GitRepository } from '../../disk/repository.js';
import type { TokenRecord } from '../../disk/records/tokenStore.js';
import type { HttpDeps } from '../deps.js';
import { header } from '../answer/headers.js';

/** Whether the repository is private (its head's settings; unreadable settings count as private). */
async function isPrivate(repository: GitRepository): Promise<boolean> {
  try {
    return (await settingsAt(repository, repository.head())).isPrivate;
  } catch {
    return true;
  }
}

/**
 * Under --hide-private, throws the unknown-repository answer unless the caller may see the
 * repository: it is public, or the request holds a valid token of it. `account` and `name` are the
 * names as the request spelled them.
 */
export async function requireVisible(
  deps: HttpDeps,
  req: IncomingMessage,
  repository: GitRepository,
  account: string,
  name: string,
  presented?: string,
): Promise<void> {
  if (!deps.hidePrivate) return;
  const credential = presented ?? header(req, 'Client-Token');
  if (credential !== undefined) {
    let token: TokenRecord | undefined;
    try {
      token = deps.tokens.authenticate(credential);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
    }
    if (token && tokenBelongsTo(token, repository)) return;
  }
  if (await isPrivate(repository)) throw unknownRepository(account, name);
}

/**
 * The listing a caller sees under --hide-private: every public repository, and a private one only
 * when the caller's token is one of its own (bound to its folder's exact spelling, as tokenBelongsTo).
 */
export function visibleRecords(
  records: readonly RepositoryRecord[],
  token: TokenRecord | undefined,
): RepositoryRecord[] {
  const mine = (record: RepositoryRecord) =>
    token !== undefined && token.account === record.account && token.repository === record.name;
  return records.filter((record) => !record.isPrivate || mine(record));
}

/** requireVisible for a repository named by the request's path (an unknown name is the same 404). */
export async function requireVisibleByName(
  deps: HttpDeps,
  req: IncomingMessage,
  account: string,
  name: string,
  presented?: string,
): Promise<void> {
  await requireVisible(deps, req, requireRepository(deps.registry, account, name), account, name, presented);
}
