/**
 * Client tokens: 256 random bits, shown once, stored only as a SHA-256 hash
 * outside git, compared in constant time, revocable at once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { nameProblem } from '../../domain/names.js';
import type { TokenRecord, TokenStore } from '../../disk/records/tokenStore.js';
import type { GitRepository } from '../../disk/repository.js';
import { ServiceError, translating } from '../errors.js';
import { requireRepository } from './repositories.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import { isoSeconds } from '../../lib/dates.js';
import { unwrapForToken, wrapForToken, type GroupKey } from '../security/sealing.js';

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
  /** Read-only: refused on every write route. */
  readonly readOnly?: boolean;
  /** The access rule set the token is assigned to (checked to exist by the caller). */
  readonly ruleSet?: string;
}

/** What `token list` shows: never the token, never its hash. */
export interface TokenInfo {
  readonly label: string;
  readonly created: string;
  readonly expires: string | null;
  readonly forceKeyPush: boolean;
  readonly securityGroups: readonly string[];
  readonly readOnly: boolean;
  readonly ruleSet: string | null;
  readonly revoked: string | null;
  readonly active: boolean;
}

/**
 * A token is bound to one repository identity: the folder it was made for, spelled exactly as on
 * disk (records hold the folder's spelling, whatever case the command was given). A second
 * spelling of a name (`case/Dup.git` restored beside `case/dup.git`) is never served, and a token
 * of the one never acts on, or is listed with, the other.
 */
export function tokenBelongsTo(record: TokenRecord, repository: GitRepository): boolean {
  if (record.kind === 'replication') return false; // clones every repository over /git, reads nothing else
  return record.account === repository.account && record.repository === repository.name;
}

/**
 * The repository a token was made for, found by its folder's exact spelling: a token whose folder
 * is gone does not fall over to another spelling of the name.
 */
export function tokenRepository(registry: RepositoryRegistry, record: TokenRecord): GitRepository {
  const repository = requireRepository(registry, record.account, record.repository);
  if (!tokenBelongsTo(record, repository)) {
    throw new ServiceError(
      'not_found',
      `the repository of this Client-Token, ${record.account}/${record.repository}, no longer exists under that name`,
    );
  }
  return repository;
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
        throw new ServiceError(
          'conflict',
          `repository ${repository.fullName} already has an active token labelled ${label}`,
        );
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
        ...(input.readOnly ? { readOnly: true } : {}),
        ...(input.ruleSet !== undefined ? { ruleSet: input.ruleSet } : {}),
      };
      return { records: [...records, record], result: label };
    });
    return { token, label };
  }

  /** A replication token: read-only over /git for every repository, and the replication endpoints. */
  async createReplication(label: string | undefined): Promise<{ token: string; label: string }> {
    if (label !== undefined) {
      const problem = nameProblem('token label', label);
      if (problem) throw new ServiceError('invalid_argument', problem);
    }
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const chosen = await this.update((records) => {
      const mine = records.filter((r) => r.kind === 'replication');
      const chosen = label ?? `replica-${mine.length + 1}`;
      if (mine.some((r) => isActive(r) && r.label.toLowerCase() === chosen.toLowerCase())) {
        throw new ServiceError('conflict', `there is already an active replication token labelled ${chosen}`);
      }
      const record: TokenRecord = {
        hash: hashToken(token),
        account: '',
        repository: '',
        label: chosen,
        created: isoSeconds(new Date()),
        expires: null,
        forceKeyPush: false,
        revoked: null,
        kind: 'replication',
      };
      return { records: [...records, record], result: chosen };
    });
    return { token, label: chosen };
  }

  /** Revokes a replication token by its label. */
  async revokeReplication(label: string): Promise<void> {
    await this.update((records) => {
      const index = records.findIndex(
        (r) => r.kind === 'replication' && r.revoked === null && r.label.toLowerCase() === label.toLowerCase(),
      );
      if (index < 0) throw new ServiceError('not_found', `there is no unrevoked replication token labelled ${label}`);
      const next = [...records];
      next[index] = { ...records[index], revoked: isoSeconds(new Date()) };
      return { records: next, result: undefined };
    });
  }

  /** Every record, hashes only (the replication state offers them to replicas). */
  records(): readonly TokenRecord[] {
    return this.store.all();
  }

  /** Replaces every record by the primary's (a replica keeping its tokens in step). */
  async replaceAll(records: readonly TokenRecord[]): Promise<void> {
    await this.update(() => ({ records: [...records], result: undefined }));
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
        readOnly: r.readOnly ?? false,
        ruleSet: r.ruleSet ?? null,
        revoked: r.revoked,
        active: isActive(r),
      }));
  }

  async revoke(repository: GitRepository, label: string): Promise<void> {
    await this.update((records) => {
      const index = records.findIndex(
        (r) => tokenBelongsTo(r, repository) && r.revoked === null && r.label.toLowerCase() === label.toLowerCase(),
      );
      if (index < 0)
        throw new ServiceError(
          'not_found',
          `repository ${repository.fullName} has no unrevoked token labelled ${label}`,
        );
      const next = [...records];
      next[index] = { ...records[index], revoked: isoSeconds(new Date()) };
      return { records: next, result: undefined };
    });
  }

  /** Revokes every active token of a repository (it is being deleted); returns how many. */
  async revokeAll(repository: GitRepository): Promise<number> {
    return this.update((records) => {
      let count = 0;
      const now = isoSeconds(new Date());
      const next = records.map((r) =>
        tokenBelongsTo(r, repository) && r.revoked === null ? (count++, { ...r, revoked: now }) : r,
      );
      return { records: next, result: count };
    });
  }

  /** Labels of the active tokens of a repository assigned to a rule set. */
  assignedTo(repository: GitRepository, ruleSet: string): string[] {
    return this.store
      .all()
      .filter((r) => tokenBelongsTo(r, repository) && isActive(r) && r.ruleSet?.toLowerCase() === ruleSet.toLowerCase())
      .map((r) => r.label);
  }

  /** The store's update; a token file locked by another process for too long is a 503 (see asServiceError). */
  private update<T>(change: (records: TokenRecord[]) => { records: TokenRecord[]; result: T }): Promise<T> {
    return translating(() => this.store.update(change));
  }

  /** Active tokens of one repository: the listing's `userCount`. */
  activeCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    const now = Date.now();
    for (const record of this.store.all()) {
      if (!isActive(record, now)) continue;
      const id = `${record.account}/${record.repository}`;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  /** Stops watching the token file (the server is shutting down). */
  close(): void {
    this.store.close();
  }

  private clusterSecret: TokenRecord | undefined;

  /**
   * Accepts `secret` as a replication token on this node whatever its token file holds: the
   * nodes of an HA cluster share one (CFGHUB_REPLICATION_TOKEN), and a node new to the cluster
   * must accept the leader's requests before its token file has been replicated.
   */
  acceptClusterSecret(secret: string): void {
    this.clusterSecret = {
      hash: hashToken(secret),
      account: '',
      repository: '',
      label: 'cluster',
      created: isoSeconds(new Date()),
      expires: null,
      forceKeyPush: false,
      revoked: null,
      kind: 'replication',
    };
  }

  /**
   * Whether `token` is the HA cluster's token this node was started with: the credential of a
   * member of the cluster, which alone receives what only members may hold (the webhooks' sealing
   * key, see replication/state.ts). A read replica presents a replication token of its own.
   */
  isClusterSecret(token: string): boolean {
    return this.clusterSecret !== undefined && this.clusterSecret.hash === hashToken(token);
  }

  /** The record of a presented token, or why it does not authenticate. */
  authenticate(token: string): TokenRecord {
    const hash = hashToken(token);
    const found = this.store.byHash(hash) ?? (this.clusterSecret?.hash === hash ? this.clusterSecret : undefined);
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
  return (record.groups ?? [])
    .map((held) => unwrapForToken(presented, held))
    .filter((key): key is GroupKey => key !== undefined);
}

function nextLabel(existing: readonly TokenRecord[]): string {
  const taken = new Set(existing.map((r) => r.label.toLowerCase()));
  let n = existing.length + 1;
  while (taken.has(`token-${n}`)) n++;
  return `token-${n}`;
}
