/**
 * The security groups a reader unlocked: `Security-Profile-Auth` (a JSON object of group names to
 * passwords) and the groups of the reader's token. Unknown groups and wrong passwords open
 * nothing, as in ConfigHub; the values stay sealed. The header never reaches a cache key or a log.
 */
import type { IncomingMessage as Request } from 'node:http';
import { ServiceError } from '../service/errors.js';
import { KeyRing, unlockWithPasswords } from '../service/keyRing.js';
import type { GroupKey } from '../service/sealing.js';
import type { GitRepository } from '../store/repository.js';
import { header } from './headers.js';

export const PROFILE_HEADER = 'Security-Profile-Auth';

function passwordsOf(req: Request): { group: string; password: string }[] {
  const text = header(req, PROFILE_HEADER);
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
    throw new ServiceError('invalid_argument', `${PROFILE_HEADER} must be a JSON object of security group names to passwords`);
  }
  return Object.entries(parsed as Record<string, string>).map(([group, password]) => ({ group, password }));
}

/** The reader's key ring for the commit read (groups, and their keys, are those of that commit). */
export async function readerKeyRing(req: Request, repository: GitRepository, commitId: string, tokenKeys: readonly GroupKey[]): Promise<KeyRing> {
  const attempts = passwordsOf(req);
  if (attempts.length === 0 && tokenKeys.length === 0) return KeyRing.EMPTY;
  const { securityGroups } = await repository.snapshot(commitId);
  if (securityGroups.length === 0) return KeyRing.EMPTY;
  return KeyRing.of(securityGroups, tokenKeys).with(await unlockWithPasswords(repository.gitdir, securityGroups, attempts));
}
