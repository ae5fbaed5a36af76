/**
 * Webhooks, stored in `<repos>/.cfghub/webhooks.json` beside the tokens and outside every
 * repository (no clone or backup of a repository carries a hook's secret), with each secret
 * sealed (service/security/sealing.ts) under a key kept in `<repos>/.cfghub/webhook-secrets.key`
 * (mode 0600): the hooks file alone opens no secret. Updates take the one lock primitive
 * (lockedFileUpdate.ts) and rename the new content over the file.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { JsonRecords } from './jsonRecords.js';

export const webhookRecordSchema = z.strictObject({
  id: z.string(),
  /** `account/name` of the repository whose commits it receives. */
  repository: z.string(),
  url: z.string(),
  /** The secret, sealed: `enc:v1:…`. */
  secret: z.string(),
  created: z.string(),
});

export type WebhookRecord = z.infer<typeof webhookRecordSchema>;

const fileSchema = z.strictObject({ webhooks: z.array(webhookRecordSchema) });

const LOCK = { staleMs: 10_000, owner: 'webhook store', mode: 0o600 };
const KEY_BYTES = 32;

export class WebhookStore {
  private readonly folder: string;
  private readonly keyPath: string;
  private readonly records: JsonRecords<WebhookRecord>;

  constructor(reposDir: string) {
    this.folder = join(reposDir, '.cfghub');
    this.records = new JsonRecords(this.folder, 'webhooks.json', 'webhooks', fileSchema, 'the webhook store', LOCK);
    this.keyPath = join(this.folder, 'webhook-secrets.key');
  }

  /** Every hook, as on disk now; none when the file does not exist. */
  all(): WebhookRecord[] {
    return this.records.all();
  }

  /** Replaces the hooks by `change(hooks)`, under the lock, durably. Returns what `change` returned. */
  update<T>(change: (hooks: WebhookRecord[]) => { hooks: WebhookRecord[]; result: T }): Promise<T> {
    return this.records.update((hooks) => {
      const { hooks: records, result } = change(hooks);
      return { records, result };
    });
  }

  /** The key the secrets are sealed with; made (random, mode 0600) when `create` and missing. */
  sealingKey(create: boolean): Buffer | undefined {
    try {
      const key = Buffer.from(fs.readFileSync(this.keyPath, 'utf8').trim(), 'base64');
      if (key.length === KEY_BYTES) return key;
      throw new Error('the webhook secrets key is not 32 bytes');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    }
    fs.mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    try {
      // wx: two processes making it at once keep the first one's key.
      fs.writeFileSync(this.keyPath, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return this.sealingKey(false);
  }
}
