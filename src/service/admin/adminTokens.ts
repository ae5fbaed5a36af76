/**
 * Admin tokens: they guard the admin API (`/rest/admin/…`), which does what the CLI
 * does on the repositories folder. 256 random bits, shown once, stored only as a SHA-256 hash,
 * compared by hash lookup, revocable at once. Made only on the server's host
 * (`cfghub admin-token create`), never through the API.
 */
import { createHash, randomBytes } from 'node:crypto';
import { isoSeconds } from '../../lib/dates.js';
import { nameProblem } from '../../domain/names.js';
import type { AdminTokenRecord, AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { ServiceError, translating } from '../errors.js';

export const ADMIN_TOKEN_PREFIX = 'cfgadm_';

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What `admin-token list` shows: never the token, never its hash. */
export interface AdminTokenInfo {
  readonly label: string;
  readonly created: string;
  readonly revoked: string | null;
  readonly active: boolean;
}

export class AdminTokenService {
  constructor(private readonly store: AdminTokenStore) {}

  async create(label?: string): Promise<{ token: string; label: string }> {
    if (label !== undefined) {
      const problem = nameProblem('token label', label);
      if (problem) throw new ServiceError('invalid_argument', problem);
    }
    const token = ADMIN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const chosen = await this.update((records) => {
      const chosen = label ?? nextLabel(records);
      if (records.some((r) => r.revoked === null && r.label.toLowerCase() === chosen.toLowerCase())) {
        throw new ServiceError('conflict', `there already is an active admin token labelled ${chosen}`);
      }
      const record: AdminTokenRecord = {
        hash: hashOf(token),
        label: chosen,
        created: isoSeconds(new Date()),
        revoked: null,
      };
      return { records: [...records, record], result: chosen };
    });
    return { token, label: chosen };
  }

  list(): AdminTokenInfo[] {
    return this.store
      .all()
      .map((r) => ({ label: r.label, created: r.created, revoked: r.revoked, active: r.revoked === null }));
  }

  async revoke(label: string): Promise<void> {
    await this.update((records) => {
      const index = records.findIndex((r) => r.revoked === null && r.label.toLowerCase() === label.toLowerCase());
      if (index < 0) throw new ServiceError('not_found', `there is no unrevoked admin token labelled ${label}`);
      const next = [...records];
      next[index] = { ...records[index], revoked: isoSeconds(new Date()) };
      return { records: next, result: undefined };
    });
  }

  /** The label of the presented token's record, or why it does not authenticate (401). */
  authenticate(token: string | undefined): string {
    if (token === undefined || token === '') {
      throw new ServiceError(
        'unauthorized',
        'the admin API needs an admin token: Authorization: Bearer <token> (cfghub admin-token create makes one)',
      );
    }
    const hash = hashOf(token);
    const found = this.store.all().find((r) => r.hash === hash);
    if (!found) throw new ServiceError('unauthorized', 'the admin token is not valid');
    if (found.revoked !== null) throw new ServiceError('unauthorized', 'the admin token has been revoked');
    return found.label;
  }

  /** How many admin tokens are active (a metric). */
  activeCount(): number {
    return this.store.all().filter((r) => r.revoked === null).length;
  }

  /** The store's update; a token file locked by another process for too long is a 503 (see asServiceError). */
  private update<T>(change: (records: AdminTokenRecord[]) => { records: AdminTokenRecord[]; result: T }): Promise<T> {
    return translating(() => this.store.update(change));
  }
}

function nextLabel(existing: readonly AdminTokenRecord[]): string {
  const taken = new Set(existing.map((r) => r.label.toLowerCase()));
  let n = existing.length + 1;
  while (taken.has(`admin-${n}`)) n++;
  return `admin-${n}`;
}
