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

/**
 * Per repository, the newest commit whose deliveries have all ended (delivered, failed for good or
 * dropped), along with every commit before it: where a new leader of an HA cluster starts
 * delivering (service/webhooks/webhookService.ts).
 */
export const deliveredMarkSchema = z.strictObject({ repository: z.string(), commit: z.string() });
export type DeliveredMark = z.infer<typeof deliveredMarkSchema>;
const marksSchema = z.strictObject({ delivered: z.array(deliveredMarkSchema) });

/** The hooks, their sealing key and the delivered marks, as a replica or an HA member receives them. */
export interface WebhookRecords {
  readonly hooks: readonly WebhookRecord[];
  /** The sealing key, base64; absent while no hook was ever added. */
  readonly key?: string;
  readonly delivered: readonly DeliveredMark[];
}

const LOCK = { staleMs: 10_000, owner: 'webhook store', mode: 0o600 };
const KEY_BYTES = 32;

export class WebhookStore {
  private readonly folder: string;
  private readonly keyPath: string;
  private readonly records: JsonRecords<WebhookRecord>;
  private readonly marks: JsonRecords<DeliveredMark>;

  constructor(reposDir: string) {
    this.folder = join(reposDir, '.cfghub');
    this.records = new JsonRecords(this.folder, 'webhooks.json', 'webhooks', fileSchema, 'the webhook store', LOCK);
    this.keyPath = join(this.folder, 'webhook-secrets.key');
    this.marks = new JsonRecords(this.folder, 'webhook-delivered.json', 'delivered', marksSchema, 'the webhook marks', {
      ...LOCK,
      owner: 'webhook marks',
    });
  }

  /** The delivered marks (see deliveredMarkSchema), as on disk now. */
  delivered(): DeliveredMark[] {
    return this.marks.all();
  }

  /** Sets the delivered marks of some repositories, keeping the others'. */
  markDelivered(marks: ReadonlyMap<string, string>): Promise<void> {
    return this.marks.update((records) => ({
      records: [
        ...records.filter((mark) => !marks.has(mark.repository)),
        ...[...marks].map(([repository, commit]) => ({ repository, commit })),
      ],
      result: undefined,
    }));
  }

  /** What travels to replicas and HA members: the hooks, the sealing key and the marks. */
  replicated(): WebhookRecords {
    let key: string | undefined;
    try {
      key = fs.readFileSync(this.keyPath, 'utf8').trim();
    } catch {
      key = undefined;
    }
    return { hooks: this.all(), ...(key ? { key } : {}), delivered: this.delivered() };
  }

  /** Holds what a primary or leader sent (replicated()): the key first, so that no hook is held without it. */
  async replaceAll(sent: WebhookRecords): Promise<void> {
    const held = this.replicated();
    if (sent.key !== undefined && sent.key !== held.key) {
      fs.mkdirSync(this.folder, { recursive: true, mode: 0o700 });
      const temporary = `${this.keyPath}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, `${sent.key}\n`, { mode: 0o600 });
      const handle = fs.openSync(temporary, 'r');
      try {
        fs.fsyncSync(handle);
      } finally {
        fs.closeSync(handle);
      }
      fs.renameSync(temporary, this.keyPath);
    }
    if (JSON.stringify(sent.hooks) !== JSON.stringify(held.hooks))
      await this.update(() => ({ hooks: [...sent.hooks], result: undefined }));
    if (JSON.stringify(sent.delivered) !== JSON.stringify(held.delivered))
      await this.marks.update(() => ({ records: [...sent.delivered], result: undefined }));
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
