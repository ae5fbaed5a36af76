/**
 * A small client of etcd's v3 API through its JSON gateway (`/v3/kv/*`, `/v3/lease/*`,
 * `/v3/watch`), the path a client without a gRPC stack takes: keys and values travel as base64,
 * 64-bit numbers as decimal strings, and a field equal to its default (false, 0, empty) is left
 * out of an answer. Only what cfghub's cluster mode needs: leases, guarded transactions, ranges
 * and watches.
 *
 * Several endpoints (the members of one etcd cluster) may be given: a request that cannot reach
 * one member (refused, reset, timed out) is tried on the next, and the member that answered last
 * is tried first next time. An answer from a member whose cluster id differs from the one first
 * seen is refused (EtcdClusterChanged): a rebuilt etcd restarts its revisions, which would make
 * epochs (create revisions) go backwards.
 */

/** A request that no member answered in time. */
export class EtcdUnavailable extends Error {
  readonly code = 'etcd_unavailable';
}

/** An answer from an etcd whose cluster id is not the one this client first saw. */
export class EtcdClusterChanged extends Error {
  readonly code = 'etcd_cluster_changed';
  constructor(
    readonly expected: string,
    readonly found: string,
  ) {
    super(`etcd's cluster id changed from ${expected} to ${found}: an etcd rebuilt with new data`);
  }
}

export interface EtcdHeader {
  readonly clusterId: string;
  readonly revision: number;
}

export interface EtcdKeyValue {
  readonly key: string;
  readonly value: string;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  readonly lease: string;
}

/** One comparison of a transaction (etcd's Compare): on a key's create revision, mod revision, version or value. */
export type EtcdCompare =
  | {
      readonly key: string;
      readonly target: 'CREATE' | 'MOD' | 'VERSION';
      readonly result?: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
      readonly number: number;
    }
  | { readonly key: string; readonly target: 'VALUE'; readonly result?: 'EQUAL' | 'NOT_EQUAL'; readonly value: string };

export type EtcdOperation =
  | { readonly put: { readonly key: string; readonly value: string; readonly lease?: string } }
  | { readonly get: { readonly key: string; readonly prefix?: boolean } }
  | { readonly delete: { readonly key: string; readonly prefix?: boolean } };

export interface EtcdTxnResult {
  readonly header: EtcdHeader;
  readonly succeeded: boolean;
  /** The key-values of each `get` among the operations that ran, in order. */
  readonly ranges: readonly (readonly EtcdKeyValue[])[];
}

export interface EtcdWatchEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly kv: EtcdKeyValue;
}

export interface EtcdWatch {
  /** Ends the watch's stream. */
  close(): void;
  /** Settles when the stream ends (closed, or the member went away: watch again from the last revision). */
  readonly ended: Promise<void>;
}

export interface EtcdClientOptions {
  /** How long one request may take on one member before the next is tried. */
  readonly requestTimeoutMs?: number;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 1_000;

const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const decode = (base64: string | undefined) => Buffer.from(base64 ?? '', 'base64').toString('utf8');

/** The key just past every key that starts with `prefix` (etcd's range_end for a prefix). */
export function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i]++;
      return end.toString('base64');
    }
  }
  return encode('\0');
}

interface RawKeyValue {
  key?: string;
  value?: string;
  create_revision?: string;
  mod_revision?: string;
  version?: string;
  lease?: string;
}

function keyValue(raw: RawKeyValue): EtcdKeyValue {
  return {
    key: decode(raw.key),
    value: decode(raw.value),
    createRevision: Number(raw.create_revision ?? 0),
    modRevision: Number(raw.mod_revision ?? 0),
    version: Number(raw.version ?? 0),
    lease: raw.lease ?? '0',
  };
}

function rawRange(key: string, prefix?: boolean): Record<string, string> {
  return prefix ? { key: encode(key), range_end: prefixEnd(key) } : { key: encode(key) };
}

function rawOperation(operation: EtcdOperation): Record<string, unknown> {
  if ('put' in operation) {
    const { key, value, lease } = operation.put;
    return { request_put: { key: encode(key), value: encode(value), ...(lease ? { lease } : {}) } };
  }
  if ('get' in operation) return { request_range: rawRange(operation.get.key, operation.get.prefix) };
  return { request_delete_range: rawRange(operation.delete.key, operation.delete.prefix) };
}

function rawCompare(compare: EtcdCompare): Record<string, unknown> {
  const base = { key: encode(compare.key), target: compare.target, result: compare.result ?? 'EQUAL' };
  switch (compare.target) {
    case 'CREATE':
      return { ...base, create_revision: String(compare.number) };
    case 'MOD':
      return { ...base, mod_revision: String(compare.number) };
    case 'VERSION':
      return { ...base, version: String(compare.number) };
    case 'VALUE':
      return { ...base, value: encode(compare.value) };
  }
}

export class EtcdClient {
  private preferred = 0;
  private clusterId: string | undefined;
  private readonly requestTimeoutMs: number;

  constructor(
    readonly endpoints: readonly string[],
    options: EtcdClientOptions = {},
  ) {
    if (endpoints.length === 0) throw new Error('etcd: no endpoint given');
    this.requestTimeoutMs = Math.round(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
  }

  /** The cluster id this client pins (the first one it saw), if it has seen one. */
  get pinnedClusterId(): string | undefined {
    return this.clusterId;
  }

  /** Pins a cluster id known from before (persisted by the caller), so a rebuilt etcd is refused from the first answer. */
  pinClusterId(id: string): void {
    this.clusterId = id;
  }

  private header(raw: { cluster_id?: string; revision?: string } | undefined): EtcdHeader {
    const clusterId = raw?.cluster_id ?? '';
    if (this.clusterId === undefined) this.clusterId = clusterId;
    else if (clusterId !== this.clusterId) throw new EtcdClusterChanged(this.clusterId, clusterId);
    return { clusterId, revision: Number(raw?.revision ?? 0) };
  }

  /** POSTs `body` to `path` on the first member that answers within the request timeout. */
  private async post(path: string, body: unknown): Promise<Record<string, unknown>> {
    const problems: string[] = [];
    for (let attempt = 0; attempt < this.endpoints.length; attempt++) {
      const index = (this.preferred + attempt) % this.endpoints.length;
      const endpoint = this.endpoints[index];
      try {
        const response = await fetch(`${endpoint}${path}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(this.requestTimeoutMs),
          redirect: 'error',
        });
        const text = await response.text();
        if (response.status === 200) {
          this.preferred = index;
          return JSON.parse(text) as Record<string, unknown>;
        }
        // A member without a quorum or a leader answers 503 or a gRPC error code; another may do better.
        problems.push(`${endpoint}: ${response.status} ${text.slice(0, 200)}`);
      } catch (error) {
        problems.push(
          `${endpoint}: ${(error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message}`,
        );
      }
    }
    throw new EtcdUnavailable(`etcd did not answer ${path}: ${problems.join('; ')}`);
  }

  /** Grants a lease of `ttlSeconds`; returns its id (a decimal string). */
  async grant(ttlSeconds: number): Promise<{ id: string; ttl: number; header: EtcdHeader }> {
    const answer = await this.post('/v3/lease/grant', { TTL: String(ttlSeconds) });
    return { id: String(answer.ID), ttl: Number(answer.TTL ?? 0), header: this.header(answer.header as never) };
  }

  /** Renews a lease once; returns its remaining TTL in seconds (0 or less: the lease is gone). */
  async keepAlive(id: string): Promise<number> {
    const answer = await this.post('/v3/lease/keepalive', { ID: id });
    const result = answer.result as { header?: never; TTL?: string } | undefined;
    this.header(result?.header);
    return Number(result?.TTL ?? 0);
  }

  /** Revokes a lease: every key bound to it goes at once. */
  async revoke(id: string): Promise<void> {
    const answer = await this.post('/v3/lease/revoke', { ID: id });
    this.header(answer.header as never);
  }

  async txn(
    compare: readonly EtcdCompare[],
    success: readonly EtcdOperation[],
    failure: readonly EtcdOperation[] = [],
  ): Promise<EtcdTxnResult> {
    const answer = await this.post('/v3/kv/txn', {
      compare: compare.map(rawCompare),
      success: success.map(rawOperation),
      failure: failure.map(rawOperation),
    });
    const succeeded = answer.succeeded === true;
    const responses = (answer.responses as { response_range?: { kvs?: RawKeyValue[] } }[] | undefined) ?? [];
    const ran = succeeded ? success : failure;
    const ranges: EtcdKeyValue[][] = [];
    ran.forEach((operation, i) => {
      if ('get' in operation) ranges.push((responses[i]?.response_range?.kvs ?? []).map(keyValue));
    });
    return { header: this.header(answer.header as never), succeeded, ranges };
  }

  async get(key: string, options: { prefix?: boolean } = {}): Promise<{ header: EtcdHeader; kvs: EtcdKeyValue[] }> {
    const answer = await this.post('/v3/kv/range', rawRange(key, options.prefix));
    return {
      header: this.header(answer.header as never),
      kvs: ((answer.kvs as RawKeyValue[] | undefined) ?? []).map(keyValue),
    };
  }

  async put(key: string, value: string, lease?: string): Promise<EtcdHeader> {
    const answer = await this.post('/v3/kv/put', {
      key: encode(key),
      value: encode(value),
      ...(lease ? { lease } : {}),
    });
    return this.header(answer.header as never);
  }

  /** etcd's status of one member (for `ha status` and health): its leader and raft term. */
  async status(): Promise<{ header: EtcdHeader; leader: string; raftTerm: number }> {
    const answer = await this.post('/v3/maintenance/status', {});
    return {
      header: this.header(answer.header as never),
      leader: String(answer.leader ?? ''),
      raftTerm: Number(answer.raftTerm ?? 0),
    };
  }

  /**
   * Watches `key` (or every key under it, with `prefix`) from `fromRevision` on, calling `onEvent`
   * for each change in order. The stream goes to one member; when it ends (the member went away,
   * or close()), `ended` settles and the caller watches again from the revision after the last
   * event it saw.
   */
  watch(
    key: string,
    options: { prefix?: boolean; fromRevision?: number },
    onEvent: (event: EtcdWatchEvent, revision: number) => void,
  ): EtcdWatch {
    const controller = new AbortController();
    const ended = (async () => {
      const endpoint = this.endpoints[this.preferred];
      const request = {
        create_request: {
          ...rawRange(key, options.prefix),
          ...(options.fromRevision ? { start_revision: String(options.fromRevision) } : {}),
        },
      };
      let response: Response;
      try {
        response = await fetch(`${endpoint}/v3/watch`, {
          method: 'POST',
          body: JSON.stringify(request),
          signal: controller.signal,
          redirect: 'error',
        });
      } catch {
        this.preferred = (this.preferred + 1) % this.endpoints.length;
        return;
      }
      if (!response.body) return;
      const decoder = new TextDecoder();
      let pending = '';
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          pending += decoder.decode(chunk, { stream: true });
          // The gateway writes one JSON object per line; a partial line waits for the next chunk.
          let newline: number;
          while ((newline = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, newline).trim();
            pending = pending.slice(newline + 1);
            if (!line) continue;
            const message = JSON.parse(line) as {
              result?: { header?: { revision?: string }; events?: { type?: string; kv?: RawKeyValue }[] };
            };
            const revision = Number(message.result?.header?.revision ?? 0);
            for (const event of message.result?.events ?? []) {
              onEvent(
                { type: event.type === 'DELETE' ? 'DELETE' : 'PUT', kv: keyValue(event.kv ?? {}) },
                Number(event.kv?.mod_revision ?? revision),
              );
            }
          }
        }
      } catch {
        // The stream broke (member gone, or closed): the caller watches again.
        if (!controller.signal.aborted) this.preferred = (this.preferred + 1) % this.endpoints.length;
      }
    })();
    return { close: () => controller.abort(), ended };
  }
}
