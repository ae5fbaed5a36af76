/**
 * Context resolution: a value qualifies for a requested context when, at
 * every level, it is a wildcard, equals the requested item without regard to case, or (with
 * context groups on) names a group holding the requested item; inactive values never qualify.
 * Among qualifying values the heaviest wins, with ConfigHub's weights: the most specific level of
 * the ten possible weighs 5120, each wider one half as much, so one deeper item outweighs every
 * wider one together; a group weighs its level's weight less the level's distance from the
 * end (5119, 2558, ...; see groupWeight): just below a single item of its level, above all wider levels.
 */
import { WILDCARD, type Context } from './context.js';
import { GroupIndex } from './contextGroups.js';
import type { FileRecord, KeyRecord, StoredValue } from './model.js';

/** A requested context: items in lower case (`*` meaning "nothing at this level"), and the groups that hold each. */
export interface RequestContext {
  readonly items: readonly string[];
  readonly groups: GroupIndex;
}

export function requestContext(items: readonly string[], groups: GroupIndex = GroupIndex.EMPTY): RequestContext {
  return { items: items.map((item) => item.toLowerCase()), groups };
}

/** The weight of a single item at level i of n (0 = widest). */
export function levelWeight(i: number, levels: number): number {
  return 10 * 2 ** (10 - levels + i);
}

/**
 * The weight of a group at level i of n: ConfigHub's (the level's weight less its distance from
 * the end), except that it never falls to a wildcard's 0 or below the wider levels together (the
 * widest of ten levels weighs 10; ConfigHub's rule would give its group 0).
 */
export function groupWeight(i: number, levels: number): number {
  return levelWeight(i, levels) - Math.min(levels - i, levelWeight(0, levels) - 1);
}

/** The weight of a stored context for a request, or -1 when it does not qualify. */
export function contextWeight(stored: Context, request: RequestContext): number {
  let weight = 0;
  const n = stored.length;
  for (let i = 0; i < n; i++) {
    const item = stored[i];
    if (item === WILDCARD) continue;
    const lower = item.toLowerCase();
    if (lower === request.items[i]) weight += levelWeight(i, n);
    else if (request.items[i] !== WILDCARD && request.groups.groupsOf(i, request.items[i]).has(lower))
      weight += groupWeight(i, n);
    else return -1;
  }
  return weight;
}

function heaviest<T extends { readonly context: Context; readonly active: boolean }>(
  candidates: Iterable<T>,
  request: RequestContext,
): T | undefined {
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
