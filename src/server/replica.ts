/** The command line of replication: `serve --replica-of URL [--accept-new-primary]`, `promote` and `token create --replication`. */
import type { Logger } from 'pino';
import { ServiceError } from '../service/errors.js';
import { isHttp, urlOf, withoutTrailingSlashes } from '../lib/urls.js';
import { Replicator } from '../service/replication/replicator.js';
import { ensureIdentity, promote, readPin } from '../disk/records/folderIdentity.js';
import type { AccessAdministration } from '../service/admin/accessAdministration.js';
import type { TokenService } from '../service/admin/tokens.js';
import type { RepositoryRegistry } from '../disk/registry.js';

/** The primary's URL (http or https, no path) and the replication token, checked before anything starts. */
export function replicaOfOption(url: string, token: string | undefined, acceptNewPrimary = false): ReplicaOf {
  const parsed = urlOf(url);
  if (!parsed)
    throw new ServiceError(
      'invalid_argument',
      `--replica-of must be the primary's URL, like http://primary:8080; got ${JSON.stringify(url)}`,
    );
  if (!isHttp(parsed) || parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new ServiceError(
      'invalid_argument',
      '--replica-of must be an http:// or https:// URL without user, query or fragment',
    );
  }
  if (!token)
    throw new ServiceError(
      'invalid_argument',
      '--replica-of needs a replication token in CFGHUB_REPLICATION_TOKEN (made on the primary with: cfghub token create --replication)',
    );
  return { primary: parsed.origin + withoutTrailingSlashes(parsed.pathname), token: token.trim(), acceptNewPrimary };
}

export interface ReplicaOf {
  readonly primary: string;
  readonly token: string;
  /** `--accept-new-primary`: the primary's next state is applied whatever it is (see replicator.ts). */
  readonly acceptNewPrimary?: boolean;
}

/**
 * Refuses to serve a replica's folder as a primary before it is promoted: a replica restarted
 * without `--replica-of` by mistake would otherwise take writes beside the real primary, at the
 * same generation. Makes the folder's identity on its first use.
 */
export async function checkFolderRole(
  reposDir: string,
  replicaOf: ReplicaOf | undefined,
  logger: Logger,
  clusterNode = false,
): Promise<void> {
  const following = readPin(reposDir);
  if (!replicaOf && following && !clusterNode) {
    throw new ServiceError(
      'invalid_argument',
      `this repositories folder is a read replica's (it follows generation ${following.generation} of folder ${following.folder}): give --replica-of, or promote it first with: cfghub promote --repos <folder>`,
    );
  }
  try {
    const identity = await ensureIdentity(reposDir);
    logger.info({ event: 'folder-identity', folder: identity.folder, generation: identity.generation });
  } catch (error) {
    // A folder the server may only read is still served for reads (writes answer 503
    // repository_unwritable); its identity is made by the first start that may write it.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw error;
    logger.warn({ event: 'folder-identity-unwritable', reason: `the folder's identity cannot be written (${code})` });
  }
}

/** `cfghub promote`: the folder's generation one above every one it has seen, its pin removed. */
export async function promoteFolder(reposDir: string): Promise<void> {
  const before = readPin(reposDir);
  const promoted = await promote(reposDir);
  process.stdout.write(`${promoted.generation}\n`);
  process.stderr.write(
    `cfghub: folder ${promoted.folder} promoted to primary generation ${promoted.generation}` +
      `${before ? ` (it followed folder ${before.folder}, generation ${before.generation})` : ''}; serve it with: cfghub serve (without --replica-of)\n`,
  );
}

export function startReplicator(
  replicaOf: ReplicaOf,
  registry: RepositoryRegistry,
  tokens: TokenService,
  logger: Logger,
): Replicator {
  const replicator = new Replicator({
    source: replicaOf,
    registry,
    tokens,
    logger,
    acceptNewPrimary: replicaOf.acceptNewPrimary,
  });
  replicator.start();
  logger.info({
    event: 'replica-following',
    primary: replicaOf.primary,
    ...(replicaOf.acceptNewPrimary ? { acceptNewPrimary: true } : {}),
  });
  return replicator;
}

/** `token create --replication`, on a folder or through a server. */
export async function createReplicationToken(
  admin: AccessAdministration,
  fullName: string | undefined,
  options: { name?: string; expires?: string; forceKeyPush?: boolean; securityGroup?: string },
): Promise<void> {
  if (fullName !== undefined)
    throw new ServiceError(
      'invalid_argument',
      'a replication token is for every repository: leave out account/name with --replication',
    );
  if (options.expires !== undefined || options.forceKeyPush || options.securityGroup !== undefined) {
    throw new ServiceError(
      'invalid_argument',
      '--replication takes --name only: a replication token reads, never writes, and opens no security group',
    );
  }
  const created = await admin.createReplicationToken(options.name);
  process.stdout.write(`${created.token}\n`);
  process.stderr.write(`cfghub: replication token ${created.label}; it is shown only this once\n`);
}

/** `token revoke --replication LABEL`: the replica holding it can no longer follow. */
export async function revokeReplicationToken(
  admin: AccessAdministration,
  label: string,
  extra: string | undefined,
): Promise<void> {
  if (extra !== undefined)
    throw new ServiceError('invalid_argument', 'token revoke --replication takes the label only');
  await admin.revokeReplicationToken(label);
  process.stderr.write(`cfghub: replication token ${label} revoked\n`);
}
