/**
 * The keys of a snapshot resolved for one context, as the compatibility protocols (Spring Cloud
 * Config, OpenFeature's OFREP) give them: each key's winning value with the context it was stored
 * at and that context's weight, opened when the reader's key ring holds its security group and
 * otherwise marked sealed (its text is never handed out). As steps (lib/steps.ts): a pause is
 * safe after each key, so a repository of any size is resolved in time slices.
 */
import { formatContext, type Context } from '../../domain/context.js';
import type { KeyRecord } from '../../domain/model.js';
import { contextWeight, requestContext, resolveValue, type RequestContext } from '../../domain/resolve.js';
import type { Steps } from '../../lib/steps.js';
import type { ValueType } from '../../domain/valueTypes.js';
import { KeyRing } from '../security/keyRing.js';
import { openValue } from '../security/unsealing.js';
import type { ReadTarget } from '../read/read.js';

export interface ResolvedKey {
  readonly key: string;
  readonly vdt: ValueType;
  /** The stored context of the winning value, as text (`Production;*;*`). */
  readonly context: string;
  /** How specific that context is for the request (resolve.ts's weights): 0 for all wildcards. */
  readonly weight: number;
  /** The value's text, or undefined when it is sealed for this reader. */
  readonly text: string | null | undefined;
}

/** The request context of a read (items in level order, `*` for none). */
export function readerContext(target: ReadTarget, context: Context): RequestContext {
  return requestContext(context, target.snapshot.groups());
}

/** One key resolved for a request, or undefined when no value of it qualifies. */
export function resolveKey(key: KeyRecord, request: RequestContext, ring: KeyRing): ResolvedKey | undefined {
  const value = resolveValue(key, request);
  if (!value) return undefined;
  const opened = openValue(key, value, ring);
  return {
    key: key.key,
    vdt: key.vdt,
    context: formatContext(value.context),
    weight: contextWeight(value.context, request),
    text: opened ? opened.text : undefined,
  };
}

/** Every key that resolves for the context, by name. */
export function* resolvedKeys(target: ReadTarget, context: Context): Steps<ResolvedKey[]> {
  const request = readerContext(target, context);
  const ring = target.ring ?? KeyRing.EMPTY;
  const out: ResolvedKey[] = [];
  for (const key of yield* target.snapshot.keysByName()) {
    const resolved = resolveKey(key, request, ring);
    if (resolved) out.push(resolved);
    yield;
  }
  return out;
}

const INTEGER_TYPES = new Set<ValueType>(['Integer', 'Long']);
const DECIMAL_TYPES = new Set<ValueType>(['Float', 'Double']);
const STRUCTURED_TYPES = new Set<ValueType>(['JSON', 'Map', 'List']);

/**
 * A value as a typed JSON value: Boolean as true/false, Integer, Long, Float and Double as a
 * number (text when it does not fit a JavaScript number exactly, as a Long beyond 2^53 may not),
 * JSON, Map and List parsed when `structured` is 'parsed' (else their JSON text), the rest as
 * text. null stays null.
 */
export function typedValue(vdt: ValueType, text: string | null, structured: 'parsed' | 'text'): unknown {
  if (text === null) return null;
  if (vdt === 'Boolean') {
    const lower = text.trim().toLowerCase();
    return lower === 'true' ? true : lower === 'false' ? false : text;
  }
  if (INTEGER_TYPES.has(vdt) || DECIMAL_TYPES.has(vdt)) {
    const n = Number(text);
    if (!Number.isFinite(n) || text.trim() === '') return text;
    if (INTEGER_TYPES.has(vdt) && !Number.isSafeInteger(n)) return text;
    return n;
  }
  if (STRUCTURED_TYPES.has(vdt) && structured === 'parsed') {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
