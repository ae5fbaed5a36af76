/**
 * The security groups a reader unlocked: `Security-Profile-Auth` (a JSON object of group names to
 * passwords) and the groups of the reader's token. Unknown groups and wrong passwords open
 * nothing, as in ConfigHub; the values stay sealed. The header never reaches a cache key or a log.
 *
 * Each password costs a slow key derivation, so one request tries at most one password per group
 * (names compared as the repository compares them, without regard to case: `secrets` and
 * `Secrets` in one header are a 400) and names at most MAX_PROFILE_GROUPS groups.
 */
import type { IncomingMessage as Request } from 'node:http';
import { groupId } from '../../domain/securityGroups.js';
import { ServiceError } from '../../service/errors.js';
import { readerKeyRing as keyRingAt, type KeyRing, type ReaderKeys } from '../../service/security/keyRing.js';
import type { GroupKey } from '../../service/security/sealing.js';
import { header } from '../answer/headers.js';

export const PROFILE_HEADER = 'Security-Profile-Auth';
/** Groups one header may name: each may cost a key derivation (about 0.1 s of CPU). */
export const MAX_PROFILE_GROUPS = 8;

function passwordsOf(req: Request): { group: string; password: string }[] {
  const text = header(req, PROFILE_HEADER);
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    !Object.values(parsed).every((v) => typeof v === 'string')
  ) {
    throw new ServiceError(
      'invalid_argument',
      `${PROFILE_HEADER} must be a JSON object of security group names to passwords`,
    );
  }
  const entries = Object.entries(parsed as Record<string, string>);
  if (entries.length > MAX_PROFILE_GROUPS) {
    throw new ServiceError(
      'invalid_argument',
      `${PROFILE_HEADER} names ${entries.length} security groups, more than the ${MAX_PROFILE_GROUPS} allowed`,
    );
  }
  const seen = new Map<string, string>();
  for (const [group] of entries) {
    const earlier = seen.get(groupId(group));
    if (earlier !== undefined) {
      throw new ServiceError(
        'invalid_argument',
        `${PROFILE_HEADER} names security group ${JSON.stringify(group)} twice (also as ${JSON.stringify(earlier)}); group names are compared without regard to case`,
      );
    }
    seen.set(groupId(group), group);
  }
  return entries.map(([group, password]) => ({ group, password }));
}

/** What the reader offers to open security groups: the header's passwords and its token's group keys. */
export function readerKeys(req: Request, tokenKeys: readonly GroupKey[]): ReaderKeys {
  return { passwords: passwordsOf(req), tokenKeys };
}

/** The reader's key ring for the commit read (groups, and their keys, are those of that commit). */
export function readerKeyRing(
  req: Request,
  repository: Parameters<typeof keyRingAt>[0],
  commitId: string,
  tokenKeys: readonly GroupKey[],
): Promise<KeyRing> {
  return keyRingAt(repository, commitId, readerKeys(req, tokenKeys));
}
