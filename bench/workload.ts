/**
 * The data the push scenarios write: N keys of ~300 bytes of YAML with 1-5 values each, in a
 * repository with three context levels, and, per round, a change of K keys' values. The pull
 * scenarios read the same kind of repository, with longer values (see KeyWorkload's options).
 *
 * The workload keeps its own model of every key, so the git plumbing reference can write exactly
 * the files cfghub writes (same serializer, same paths): the trees of all implementations must
 * stay identical round after round, which the push scenario checks.
 */
import { compareContexts, formatContext, type Context } from '../src/domain/context.js';
import type { KeyRecord } from '../src/domain/model.js';
import type { PushRequest } from '../src/domain/pushRequest.js';
import { parsePushBody } from '../src/api/pushBody.js';
import { requestContext, resolveValue } from '../src/domain/resolve.js';
import { keyPath, serializeKey } from '../src/layout/layout.js';
import { Random } from './random.js';

export const CONTEXT_LEVELS = ['Environment', 'Application', 'Instance'] as const;

/** Contexts keys get values in, widest first; every key has 1 to 5 of them. */
const CONTEXTS: readonly Context[] = [
  ['*', '*', '*'],
  ['Production', '*', '*'],
  ['Staging', '*', '*'],
  ['Development', '*', '*'],
  ['Production', 'web', '*'],
  ['Production', 'api', 'node1'],
  ['Staging', 'api', '*'],
];

/**
 * Fully qualified contexts a client would pull with: every item named, no wildcard. `batch` and
 * `node2` appear in no stored context, so they exercise the wildcard fallbacks.
 */
const PULL_CONTEXTS: readonly Context[] = ['Production', 'Staging', 'Development'].flatMap((environment) =>
  ['web', 'api', 'batch'].flatMap((application) =>
    ['node1', 'node2'].map((instance) => [environment, application, instance]),
  ),
);

/** Length of each value, in characters (the push workload's, and the default). */
const VALUE_LENGTH = 14;

const SERVICES = ['billing', 'catalog', 'checkout', 'gateway', 'identity', 'inventory', 'search', 'shipping'];
const SETTINGS = [
  'db.pool-size',
  'db.url',
  'cache.ttl',
  'http.timeout',
  'feature.flags',
  'retry.max',
  'log.level',
  'queue.name',
];

/** A push as cfghub's two entry points take it: the JSON body for HTTP, the parsed request in-process. */
export interface PushPayload {
  readonly body: string;
  readonly request: PushRequest;
  readonly elements: number;
}

/** A file of the repository after a change, as the git plumbing reference writes it. */
export interface FileChange {
  readonly path: string;
  readonly content: string;
}

export interface ChangeSet {
  readonly payload: PushPayload;
  readonly files: readonly FileChange[];
  readonly message: string;
}

interface WireValue {
  readonly context: string;
  readonly value: string;
  readonly active?: boolean;
}

interface WireKey {
  readonly key: string;
  readonly readme?: string;
  readonly vdt?: string;
  readonly values: readonly WireValue[];
}

/**
 * Parses the body exactly as the HTTP adapter does, so the in-process push gets the same request
 * the server builds from the same bytes (parsing happens before timing starts).
 */
function payload(wire: { changeComment: string; enableKeyCreation?: boolean; data: readonly WireKey[] }): PushPayload {
  const parsed = parsePushBody(wire);
  if (!parsed.ok) throw new Error(`bench workload produced an invalid push: ${JSON.stringify(parsed.problems[0])}`);
  return { body: JSON.stringify(wire), request: parsed.request, elements: wire.data.length };
}

export interface WorkloadOptions {
  readonly seed?: number;
  /**
   * Characters per value. The push scenarios keep the default (their figures stay comparable from
   * run to run); the pull scenario uses longer values, so the JSON of a context of 1,000 keys is
   * about 60 KB, the size of a typical configuration answer.
   */
  readonly valueLength?: number;
}

/** A fully qualified context and how many keys it resolves. */
/** A key and its value resolved for a context: what etcd holds for the pull comparison. */
export interface ResolvedValue {
  readonly key: string;
  readonly value: string;
}

export interface PullContext {
  readonly text: string;
  readonly resolvedKeys: number;
  /** Each resolved key with its value, in key order. */
  readonly values: readonly ResolvedValue[];
}

export class KeyWorkload {
  private readonly records: KeyRecord[] = [];
  private readonly random: Random;
  private readonly valueLength: number;
  private sequence = 0;

  constructor(keyCount: number, options: WorkloadOptions = {}) {
    this.random = new Random(options.seed ?? 20_240_601);
    this.valueLength = options.valueLength ?? VALUE_LENGTH;
    for (let i = 0; i < keyCount; i++) this.records.push(this.makeKey(i));
  }

  get keyCount(): number {
    return this.records.length;
  }

  /** Mean size of a key's YAML document, to show the workload matches the engine notes (~310 B). */
  meanDocumentBytes(): number {
    const total = this.records.reduce((sum, record) => sum + Buffer.byteLength(serializeKey(record)), 0);
    return total / this.records.length;
  }

  /**
   * The fully qualified context that resolves the most keys (the first such in a fixed order),
   * found with cfghub's own resolution rule: a pull's worst case among the contexts a client
   * would send, since every resolved key is serialized.
   */
  busiestContext(): PullContext {
    let best: PullContext | undefined;
    for (const context of PULL_CONTEXTS) {
      const request = requestContext(context);
      const values = this.records.flatMap((record) => {
        const value = resolveValue(record, request)?.value;
        return value === undefined ? [] : [{ key: record.key, value: String(value) }];
      });
      if (!best || values.length > best.resolvedKeys)
        best = { text: formatContext(context), resolvedKeys: values.length, values };
    }
    return best!;
  }

  /** Every key document, as cfghub writes it, under its path in git. */
  allFiles(): FileChange[] {
    return this.records.map((record) => ({ path: keyPath(record.key), content: serializeKey(record) }));
  }

  /** One push creating every key. */
  seedPayload(): PushPayload {
    return payload({
      changeComment: `bench: seed ${this.records.length} keys`,
      enableKeyCreation: true,
      data: this.records.map((record) => ({
        key: record.key,
        readme: record.readme,
        vdt: record.vdt,
        values: record.values.map((v) => ({ context: formatContext(v.context), value: v.value!, active: v.active })),
      })),
    });
  }

  /**
   * The next round's change: `count` distinct keys get a new value in their first context.
   * Every value carries the round's sequence number, so every push makes a commit.
   */
  nextChange(count: number): ChangeSet {
    const round = ++this.sequence;
    const data: WireKey[] = [];
    const files: FileChange[] = [];
    for (const index of this.random.distinct(count, this.records.length)) {
      const record = this.records[index];
      const value = `r${round}-${this.random.word(10)}`;
      const [first, ...rest] = record.values;
      const updated: KeyRecord = { ...record, values: [{ ...first, value }, ...rest] };
      this.records[index] = updated;
      data.push({ key: record.key, values: [{ context: formatContext(first.context), value }] });
      files.push({ path: keyPath(record.key), content: serializeKey(updated) });
    }
    const message = `bench: round ${round}, ${count} key${count === 1 ? '' : 's'}`;
    return { payload: payload({ changeComment: message, data }), files, message };
  }

  private makeKey(i: number): KeyRecord {
    const service = SERVICES[i % SERVICES.length];
    const setting = SETTINGS[Math.floor(i / SERVICES.length) % SETTINGS.length];
    const key = `${service}.${setting}.k${i}`;
    const contexts = this.random.distinct(1 + (i % 5), CONTEXTS.length).map((c) => CONTEXTS[c]);
    // Stored order is by context identity (stageCommit sorts the same way), so the model matches the blob.
    contexts.sort(compareContexts);
    return {
      key,
      readme: `${setting} of ${service}; team ${this.random.word(4)}.`,
      deprecated: false,
      vdt: 'Text',
      push: true,
      values: contexts.map((context) => ({ context, value: this.random.word(this.valueLength), active: true })),
    };
  }
}
