/**
 * Context resolution (contract section 7): a value qualifies for a requested context when, at
 * every level, it is a wildcard or equals the requested item without regard to case; inactive
 * values never qualify. Among qualifying values the heaviest wins, the most specific (rightmost)
 * level outweighing all wider levels together: level i of n weighs 2^i, so one deeper item beats
 * every wider one combined (ConfigHub's 10, 20, 40… scale orders the same way).
 */
import { WILDCARD, type Context } from './context.js';
import type { FileRecord, KeyRecord, StoredValue } from './model.js';

/** A requested context: items in lower case, `*` meaning "nothing at this level". */
export type RequestContext = readonly string[];

export function requestContext(items: readonly string[]): RequestContext {
  return items.map((item) => item.toLowerCase());
}

/** The weight of a stored context for a request, or -1 when it does not qualify. */
export function contextWeight(stored: Context, request: RequestContext): number {
  let weight = 0;
  for (let i = 0; i < stored.length; i++) {
    const item = stored[i];
    if (item === WILDCARD) continue;
    if (item.toLowerCase() !== request[i]) return -1;
    weight += 2 ** i;
  }
  return weight;
}

function heaviest<T extends { readonly context: Context; readonly active: boolean }>(candidates: Iterable<T>, request: RequestContext): T | undefined {
  let best: T | undefined;
  let bestWeight = -1;
  for (const candidate of candidates) {
    if (!candidate.active) continue;
    const weight = contextWeight(candidate.context, request);
    if (weight > bestWeight) {
      best = candidate;
      bestWeight = weight;
    }
  }
  return best;
}

/** The value of a key for a context, or undefined when none qualifies. */
export function resolveValue(key: KeyRecord, request: RequestContext): StoredValue | undefined {
  return heaviest(key.values, request);
}

/** The file variant of a path for a context, or undefined when none qualifies. */
export function resolveFile(variants: Iterable<FileRecord>, request: RequestContext): FileRecord | undefined {
  return heaviest(variants, request);
}
