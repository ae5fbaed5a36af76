/**
 * Client tokens, stored hashed in `<repos>/.cfghub/tokens.json`: outside every repository, so no
 * clone or backup of a repository ever carries a token or its hash. The CLI and servers may
 * update it at the same time: each update takes `tokens.json.lock` (lockedFileUpdate.ts: the
 * one lock primitive, as refs are locked), re-reads the file, writes the new content into the lock and renames it over the file. Readers see a change at once (the cache is keyed by inode).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ChangeWatch } from '../refs/changeWatch.js';
import { updateLockedFile } from '../refs/lockedFileUpdate.js';

export const tokenRecordSchema = z.strictObject({
  /** SHA-256 of the token, hex. Tokens are 256 random bits, so a fast hash is enough. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  account: z.string(),
  repository: z.string(),
  label: z.string(),
  created: z.string(),
  expires: z.string().nullable(),
  forceKeyPush: z.boolean(),
  revoked: z.string().nullable(),
  /** Keys of security groups the token is bound to, each wrapped under a key derived from the token. */
  groups: z.array(z.strictObject({ group: z.string(), keyId: z.string(), wrappedKey: z.string() })).optional(),
  /** A read-only token: no push, revert or restore, whatever rules say. */
  readOnly: z.boolean().optional(),
  /** The access rule set the token is assigned to; none = full access. */
  ruleSet: z.string().optional(),
  /** `replication`: a replica's token, read-only across every repository; account and repository are ''. */
  kind: z.literal('replication').optional(),
});

export type TokenRecord = z.infer<typeof tokenRecordSchema>;

const fileSchema = z.strictObject({ tokens: z.array(tokenRecordSchema) });

/** A lock older than this was left by a process that died mid-update (updates take milliseconds). */
const STALE_LOCK_MS = 10_000;

export class TokenStore {
  private readonly folder: string;
  private readonly path: string;
  private cached:
    { stamp: string; records: readonly TokenRecord[]; byHash: ReadonlyMap<string, TokenRecord> } | undefined;
  private readonly watch: ChangeWatch;

  constructor(reposDir: string) {
    this.folder = join(reposDir, '.cfghub');
    this.path = join(this.folder, 'tokens.json');
    this.watch = new ChangeWatch(reposDir, this.folder, ['tokens.json']);
  }

  /** Every token record, as on disk now. */
  all(): readonly TokenRecord[] {
    return this.current()?.records ?? [];
  }

  /**
   * The record whose `hash` this is, as on disk now. Looked up by the SHA-256 of the token:
   * timing can tell something about a hash at most, which leads back to no token of 256 random bits.
   */
  byHash(hash: string): TokenRecord | undefined {
    return this.current()?.byHash.get(hash);
  }

  /** Stops watching the token file (the server is shutting down). */
  close(): void {
    this.watch.close();
  }

  private current(): TokenStore['cached'] {
    if (this.cached && this.watch.unchanged()) return this.cached;
    this.watch.beginCheck();
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.path);
    } catch (error) {
      this.cached = undefined;
      this.watch.invalidate();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (this.cached?.stamp !== stamp) {
      try {
        const records = fileSchema.parse(JSON.parse(fs.readFileSync(this.path, 'utf8'))).tokens;
        this.cached = { stamp, records, byHash: new Map(records.map((record) => [record.hash, record])) };
      } catch (error) {
        this.cached = undefined;
        this.watch.invalidate();
        throw error;
      }
    }
    return this.cached;
  }

  /** Replaces the records by `change(records)`, under the lock, durably. Returns what `change` returned. */
  async update<T>(change: (records: TokenRecord[]) => { records: TokenRecord[]; result: T }): Promise<T> {
    await fs.promises.mkdir(this.folder, { recursive: true, mode: 0o700 });
    const options = { staleMs: STALE_LOCK_MS, owner: 'token store', mode: 0o600 };
    try {
      return await updateLockedFile(this.folder, 'tokens.json', 'the token store', options, () => {
        this.cached = undefined;
        const { records, result } = change([...this.all()]);
        return { content: `${JSON.stringify({ tokens: records }, null, 2)}\n`, result };
      });
    } finally {
      // Before the caller goes on, not when inotify tells: its next read must see this update.
      this.cached = undefined;
    }
  }
}
