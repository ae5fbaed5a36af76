/**
 * What one node of an HA cluster asks of another, over the others' HTTP API (`/rest/ha/…`),
 * with the cluster's replication token. No request follows a redirect: a node's URL comes from
 * etcd, and a redirect must never carry the token or a record elsewhere.
 */
import { z } from 'zod';

/** The answer of a member to a record (see the `/rest/ha/records` route). */
export type RecordAnswer =
  | { readonly ok: true; readonly outcome: 'applied' | 'already' }
  | { readonly ok: false; readonly code: string; readonly detail: string };

const refusalSchema = z
  .object({ error: z.object({ code: z.string(), message: z.string() }).passthrough() })
  .passthrough();

export const headsAnswerSchema = z.object({
  node: z.string(),
  epoch: z.number(),
  headsDigest: z.string(),
  heads: z.record(z.string(), z.string()),
});
export type HeadsAnswer = z.infer<typeof headsAnswerSchema>;

export class Peers {
  constructor(
    private readonly token: string,
    private readonly timeoutMs: number,
  ) {}

  private async request(
    url: string,
    init: RequestInit & { headers?: Record<string, string> },
    timeoutMs = this.timeoutMs,
  ): Promise<{ status: number; text: string }> {
    const response = await fetch(url, {
      ...init,
      headers: { ...init.headers, 'Client-Token': this.token },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (response.status >= 300 && response.status < 400)
      throw new Error(`${url} answered a redirect (${response.status}); cluster requests are never redirected`);
    return { status: response.status, text };
  }

  private static refusal(status: number, text: string): { code: string; detail: string } {
    try {
      const parsed = refusalSchema.parse(JSON.parse(text));
      return { code: parsed.error.code, detail: parsed.error.message };
    } catch {
      return { code: `http_${status}`, detail: text.slice(0, 200) };
    }
  }

  /** Sends one record to a member; throws when the member cannot be reached in time. */
  async sendRecord(base: string, epoch: number, leader: string, record: Uint8Array): Promise<RecordAnswer> {
    const { status, text } = await this.request(`${base}/rest/ha/records`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Cfghub-Epoch': String(epoch), 'Cfghub-Leader': leader },
      body: record as unknown as BodyInit,
    });
    if (status === 200) return { ok: true, outcome: (JSON.parse(text) as { outcome: 'applied' | 'already' }).outcome };
    return { ok: false, ...Peers.refusal(status, text) };
  }

  /** Tells a node the epoch of a new leader: it refuses lower ones from then on. */
  async announceEpoch(base: string, epoch: number, leader: string): Promise<RecordAnswer> {
    const { status, text } = await this.request(`${base}/rest/ha/epoch`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ epoch, leader }),
    });
    if (status === 200) return { ok: true, outcome: 'applied' };
    return { ok: false, ...Peers.refusal(status, text) };
  }

  /**
   * Asks a member to hold now what this leader holds (its repositories, tags and records), and
   * answers once it does (see SyncSet.confirm).
   */
  async sync(base: string, epoch: number, leader: string): Promise<RecordAnswer> {
    // A whole round (the state, then a fetch of what changed) takes longer than a record's apply.
    const { status, text } = await this.request(
      `${base}/rest/ha/sync`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ epoch, leader }) },
      this.timeoutMs * 3,
    );
    if (status === 200) return { ok: true, outcome: 'applied' };
    return { ok: false, ...Peers.refusal(status, text) };
  }

  /** The heads a node holds, every repository's. */
  async heads(base: string, timeoutMs?: number): Promise<HeadsAnswer> {
    const { status, text } = await this.request(`${base}/rest/ha/heads`, { method: 'GET' }, timeoutMs);
    if (status !== 200) throw new Error(`${base} answered ${status} for its heads`);
    return headsAnswerSchema.parse(JSON.parse(text));
  }
}
