/**
 * Client tokens, stored hashed in `<repos>/.cfghub/tokens.json`: outside every repository, so no
 * clone or backup of a repository ever carries a token or its hash. The CLI and servers may
 * update it at the same time: each update takes `tokens.json.lock` exclusively, re-reads the file,
 * and replaces it by an atomic rename. Readers see a change at once (the cache is keyed by inode).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { fsyncFolder, writeFileAtomic } from './durableFs.js';

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
});

export type TokenRecord = z.infer<typeof tokenRecordSchema>;

const fileSchema = z.strictObject({ tokens: z.array(tokenRecordSchema) });

/** A lock older than this was left by a process that died mid-update (updates take milliseconds). */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

export class TokenStoreBusyError extends Error {
  readonly code = 'TokenStoreBusy';
}

export class TokenStore {
  private readonly folder: string;
  private readonly path: string;
  private cached: { stamp: string; records: readonly TokenRecord[] } | undefined;

  constructor(reposDir: string) {
    this.folder = join(reposDir, '.cfghub');
    this.path = join(this.folder, 'tokens.json');
  }

  /** Every token record, as on disk now. */
  all(): readonly TokenRecord[] {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (this.cached?.stamp !== stamp) {
      this.cached = { stamp, records: fileSchema.parse(JSON.parse(fs.readFileSync(this.path, 'utf8'))).tokens };
    }
    return this.cached.records;
  }

  /** Replaces the records by `change(records)`, under the lock, durably. Returns what `change` returned. */
  async update<T>(change: (records: TokenRecord[]) => { records: TokenRecord[]; result: T }): Promise<T> {
    await fs.promises.mkdir(this.folder, { recursive: true, mode: 0o700 });
    const lock = `${this.path}.lock`;
    await this.acquire(lock);
    try {
      this.cached = undefined;
      const { records, result } = change([...this.all()]);
      await writeFileAtomic(this.path, `${JSON.stringify({ tokens: records }, null, 2)}\n`, 0o600);
      await fsyncFolder(this.folder);
      return result;
    } finally {
      await fs.promises.unlink(lock).catch(() => undefined);
    }
  }

  private async acquire(lock: string): Promise<void> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await (await fs.promises.open(lock, 'wx', 0o600)).close();
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) await fs.promises.unlink(lock).catch(() => undefined);
      else if (Date.now() > deadline) throw new TokenStoreBusyError('the token store is locked by another process');
      else await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}
