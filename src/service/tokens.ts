/**
 * Client tokens (contract section 3): 256 random bits, shown once, stored only as a SHA-256 hash
 * outside git, compared in constant time, revocable at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { nameProblem } from '../domain/names.js';
import { TokenStoreBusyError, type TokenRecord, type TokenStore } from '../store/tokenStore.js';
import type { GitRepository } from '../store/repository.js';
import { ServiceError } from './errors.js';
import { isoSeconds } from '../domain/dates.js';
import { unwrapForToken, wrapForToken, type GroupKey } from './sealing.js';

export const TOKEN_PREFIX = 'cfg_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface NewToken {
  readonly label?: string;
  readonly expires?: Date;
  readonly forceKeyPush?: boolean;
  /** Opened keys of the security groups the token unlocks on its own. */
  readonly groupKeys?: readonly GroupKey[];
}

/** What `token list` shows: never the token, never its hash. */
export interface TokenInfo {
  readonly label: string;
  readonly created: string;
  readonly expires: string | null;
  readonly forceKeyPush: boolean;
  readonly securityGroups: readonly string[];
  readonly revoked: string | null;
  readonly active: boolean;
}

export function tokenBelongsTo(record: TokenRecord, repository: GitRepository): boolean {
  return (
    record.account.toLowerCase() === repository.account.toLowerCase() &&
    record.repository.toLowerCase() === repository.name.toLowerCase()
  );
}

export function isActive(record: TokenRecord, now = Date.now()): boolean {
  return record.revoked === null && (record.expires === null || Date.parse(record.expires) > now);
}

export class TokenService {
  constructor(private readonly store: TokenStore) {}

  async create(repository: GitRepository, input: NewToken): Promise<{ token: string; label: string }> {
    if (input.label !== undefined) {
      const problem = nameProblem('token label', input.label);
      if (problem) throw new ServiceError('invalid_argument', problem);
    }
    if (input.expires !== undefined && input.expires.getTime() <= Date.now()) {
      throw new ServiceError('invalid_argument', 'the expiry date is in the past');
    }
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const label = await this.update((records) => {
      const mine = records.filter((r) => tokenBelongsTo(r, repository));
      const label = input.label ?? nextLabel(mine);
      if (mine.some((r) => isActive(r) && r.label.toLowerCase() === label.toLowerCase())) {
        throw new ServiceError('conflict', `repository ${repository.fullName} already has an active token labelled ${label}`);
      }
      const record: TokenRecord = {
        hash: hashToken(token),
        account: repository.account,
        repository: repository.name,
        label,
        created: isoSeconds(new Date()),
        expires: input.expires ? isoSeconds(input.expires) : null,
        forceKeyPush: input.forceKeyPush ?? false,
        revoked: null,
        ...(input.groupKeys?.length ? { groups: input.groupKeys.map((key) => wrapForToken(token, key)) } : {}),
      };
      return { records: [...records, record], result: label };
    });
    return { token, label };
  }

  list(repository: GitRepository): TokenInfo[] {
    return this.store
      .all()
      .filter((r) => tokenBelongsTo(r, repository))
      .map((r) => ({
        label: r.label,
        created: r.created,
        expires: r.expires,
        forceKeyPush: r.forceKeyPush,
        securityGroups: (r.groups ?? []).map((g) => g.group),
        revoked: r.revoked,
        active: isActive(r),
      }));
  }

  async revoke(repository: GitRepository, label: string): Promise<void> {
    await this.update((records) => {
      const index = records.findIndex((r) => tokenBelongsTo(r, repository) && r.revoked === null && r.label.toLowerCase() === label.toLowerCase());
      if (index < 0) throw new ServiceError('not_found', `repository ${repository.fullName} has no unrevoked token labelled ${label}`);
      const next = [...records];
      next[index] = { ...records[index], revoked: isoSeconds(new Date()) };
      return { records: next, result: undefined };
    });
  }

  /** Revokes every unrevoked token of the repository (it is being deleted); returns how many. */
  async revokeAll(repository: GitRepository): Promise<number> {
    return this.update((records) => {
      const now = isoSeconds(new Date());
      let count = 0;
      const next = records.map((r) => (tokenBelongsTo(r, repository) && r.revoked === null ? (count++, { ...r, revoked: now }) : r));
      return { records: next, result: count };
    });
  }

  /** The store's update; a token file locked by another process for too long is a 503. */
  private async update<T>(change: (records: TokenRecord[]) => { records: TokenRecord[]; result: T }): Promise<T> {
    try {
      return await this.store.update(change);
    } catch (error) {
      if (error instanceof TokenStoreBusyError) throw new ServiceError('unavailable', 'the token store is busy with other writers; try again');
      throw error;
    }
  }

  /** Active tokens of one repository: the listing's `userCount`. */
  activeCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    const now = Date.now();
    for (const record of this.store.all()) {
      if (!isActive(record, now)) continue;
      const id = `${record.account}/${record.repository}`.toLowerCase();
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  /** Stops watching the token file (the server is shutting down). */
  close(): void {
    this.store.close();
  }

  /** The record of a presented token, or why it does not authenticate. */
  authenticate(token: string): TokenRecord {
    const found = this.store.byHash(hashToken(token));
    if (!found) throw new ServiceError('unauthorized', 'the Client-Token is not valid');
    if (found.revoked !== null) throw new ServiceError('unauthorized', 'the Client-Token has been revoked');
    if (found.expires !== null && Date.parse(found.expires) <= Date.now()) {
      throw new ServiceError('unauthorized', 'the Client-Token has expired');
    }
    return found;
  }
}

/** The group keys a presented token holds (it authenticated as `record`). */
export function tokenGroupKeys(record: TokenRecord, presented: string): GroupKey[] {
  return (record.groups ?? []).map((held) => unwrapForToken(presented, held)).filter((key): key is GroupKey => key !== undefined);
}

function nextLabel(existing: readonly TokenRecord[]): string {
  const taken = new Set(existing.map((r) => r.label.toLowerCase()));
  let n = existing.length + 1;
  while (taken.has(`token-${n}`)) n++;
  return `token-${n}`;
}
