/**
 * Which security groups a caller has unlocked, with their data keys: from passwords (a push
 * element's `password`, the `Security-Profile-Auth` header) and from a token bound to groups.
 *
 * scrypt costs about 0.1 s, too much for every pull, so an opened data key is kept in memory for a
 * few minutes, found by a keyed hash (a random per-process key) of repository, group, wrapped key
 * and password: never the password itself, never on disk. A wrong password is remembered the same
 * way, so repeating it costs nothing either.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { SecurityGroup } from '../../domain/model.js';
import type { GitRepository } from '../../disk/repository.js';
import { findGroup, groupId } from '../../domain/securityGroups.js';
import { secretLookupId, unlockWithPassword, type GroupKey } from './sealing.js';

const KEPT_MS = 5 * 60_000;
const MAX_KEPT = 1000;

class PasswordCache {
  private readonly pepper = randomBytes(32);
  /** Derivations under way are kept too, so simultaneous requests with one password derive once. */
  private readonly entries = new Map<string, { key: Promise<GroupKey | undefined>; until: number }>();

  unlock(scope: string, group: SecurityGroup, password: string): Promise<GroupKey | undefined> {
    const id = secretLookupId(this.pepper, scope, group.name, group.keyId, group.wrappedKey, password);
    const now = Date.now();
    const kept = this.entries.get(id);
    if (kept && kept.until > now) return kept.key;
    const key = unlockWithPassword(group, password);
    key.catch(() => this.entries.delete(id));
    this.entries.delete(id);
    this.entries.set(id, { key, until: now + KEPT_MS });
    for (const [old, entry] of this.entries) {
      if (this.entries.size <= MAX_KEPT && entry.until > now) break;
      this.entries.delete(old);
    }
    return key;
  }
}

const passwords = new PasswordCache();

/** The data keys one caller holds for the groups of one snapshot. */
export class KeyRing {
  static readonly EMPTY = new KeyRing(new Map());

  private constructor(private readonly keys: ReadonlyMap<string, GroupKey>) {}

  /**
   * Only keys that belong to the groups (of `repository`, `account/name`) as they are: a key of a
   * group whose password changed since opens nothing.
   */
  static of(groups: readonly SecurityGroup[], keys: Iterable<GroupKey | undefined>, repository: string): KeyRing {
    const current = new Map<string, GroupKey>();
    for (const key of keys) {
      const group = key && findGroup(groups, key.group);
      if (key && group && group.keyId === key.keyId)
        current.set(groupId(group.name), { ...key, group: group.name, repository });
    }
    return current.size === 0 ? KeyRing.EMPTY : new KeyRing(current);
  }

  key(group: string): GroupKey | undefined {
    return this.keys.get(groupId(group));
  }

  has(group: string): boolean {
    return this.keys.has(groupId(group));
  }

  get size(): number {
    return this.keys.size;
  }

  /** Names the unlocked groups (and their key ids) for a cache key; '' when none. Holds no secret. */
  fingerprint(): string {
    if (this.keys.size === 0) return '';
    const ids = [...this.keys.values()].map((key) => `${groupId(key.group)}:${key.keyId}`).sort();
    return createHash('sha256').update(ids.join('\n')).digest('hex');
  }

  with(other: KeyRing): KeyRing {
    if (other.size === 0) return this;
    if (this.size === 0) return other;
    return new KeyRing(new Map([...this.keys, ...other.keys]));
  }
}

/**
 * The groups that (group name, password) attempts open among `groups` of `repository`
 * (`account/name`; `scope` tells repositories apart in the cache); unknown names and wrong
 * passwords open nothing.
 */
export async function unlockWithPasswords(
  scope: string,
  repository: string,
  groups: readonly SecurityGroup[],
  attempts: Iterable<{ group: string; password: string }>,
): Promise<KeyRing> {
  const opened: (GroupKey | undefined)[] = [];
  for (const { group: name, password } of attempts) {
    const group = findGroup(groups, name);
    if (group && password) opened.push(await passwords.unlock(scope, group, password));
  }
  return KeyRing.of(groups, opened, repository);
}

/** What a reader offers to open security groups: passwords to try (group name, password) and its token's group keys. */
export interface ReaderKeys {
  readonly passwords: readonly { group: string; password: string }[];
  readonly tokenKeys: readonly GroupKey[];
}

/** The reader's key ring for the commit read (groups, and their keys, are those of that commit). */
export async function readerKeyRing(repository: GitRepository, commitId: string, keys: ReaderKeys): Promise<KeyRing> {
  if (keys.passwords.length === 0 && keys.tokenKeys.length === 0) return KeyRing.EMPTY;
  const { securityGroups } = await repository.snapshot(commitId);
  if (securityGroups.length === 0) return KeyRing.EMPTY;
  return KeyRing.of(securityGroups, keys.tokenKeys, repository.fullName).with(
    await unlockWithPasswords(repository.gitdir, repository.fullName, securityGroups, keys.passwords),
  );
}
