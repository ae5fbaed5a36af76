/**
 * Admin tokens, stored hashed in `<repos>/.cfghub/admin-tokens.json`, beside the client tokens
 * and outside every repository: no clone or backup of a repository ever carries one. Admin
 * requests are rare, so the file is read on each one (a revoked token stops working at once);
 * updates take the one lock primitive (lockedFileUpdate.ts) and rename the new content over the
 * file, like the client tokens.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { JsonRecords } from './jsonRecords.js';

export const adminTokenRecordSchema = z.strictObject({
  /** SHA-256 of the token, hex: tokens are 256 random bits, so a fast hash is enough. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  label: z.string(),
  created: z.string(),
  revoked: z.string().nullable(),
});

export type AdminTokenRecord = z.infer<typeof adminTokenRecordSchema>;

const fileSchema = z.strictObject({ adminTokens: z.array(adminTokenRecordSchema) });

/** A lock older than this was left by a process that died mid-update (updates take milliseconds). */
const ADMIN_LOCK = { staleMs: 10_000, owner: 'admin token store', mode: 0o600 };

export class AdminTokenStore {
  private readonly records: JsonRecords<AdminTokenRecord>;

  constructor(reposDir: string) {
    const folder = join(reposDir, '.cfghub');
    this.records = new JsonRecords(
      folder,
      'admin-tokens.json',
      'adminTokens',
      fileSchema,
      'the admin token store',
      ADMIN_LOCK,
    );
  }

  /** Every record, as on disk now; none when the file does not exist. */
  all(): AdminTokenRecord[] {
    return this.records.all();
  }

  /** Replaces the records by `change(records)`, under the lock, durably. Returns what `change` returned. */
  update<T>(change: (records: AdminTokenRecord[]) => { records: AdminTokenRecord[]; result: T }): Promise<T> {
    return this.records.update(change);
  }
}
