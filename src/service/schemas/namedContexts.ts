/**
 * The contexts a repository names: each fully specified context (an item at every level, no
 * wildcard) of a value of a key or of a file variant, with a context group named at a level
 * standing for each of its members. These are the contexts whose answers the schema check and the
 * dry run weigh (an instance reads one of them, or something a wildcard value covers alike).
 */
import { contextId, WILDCARD, type Context } from '../../domain/context.js';
import type { GroupIndex } from '../../domain/contextGroups.js';
import type { Steps } from '../../lib/steps.js';
import type { Snapshot } from '../../layout/snapshot.js';

/** Contexts by identity (contextId), as first spelled. */
export type NamedContexts = ReadonlyMap<string, Context>;

/**
 * The most named contexts weighed: beyond it (a repository of many instances, or groups of many
 * members crossed at several levels) the schema check of files and rules and the dry run are
 * refused with a clear reason rather than run without bound.
 */
export const MAX_NAMED_CONTEXTS = 10_000;

export class TooManyContexts extends Error {
  constructor() {
    super(
      `the repository names more than ${MAX_NAMED_CONTEXTS} contexts, more than the schema check and the dry run weigh`,
    );
  }
}

const KNOWN = new WeakMap<Snapshot, NamedContexts>();

/** Adds a context's expansions, when it names an item at every level; TooManyContexts past the limit. */
export function addNamed(into: Map<string, Context>, context: Context, groups: GroupIndex): void {
  if (context.some((item) => item === WILDCARD)) return;
  let expanded: string[][] = [[]];
  for (const [level, item] of context.entries()) {
    const members = groups.isGroup(level, item) ? groups.spelledMembersOf(level, item) : [item];
    const next: string[][] = [];
    for (const prefix of expanded) for (const member of members) next.push([...prefix, member]);
    if (next.length > MAX_NAMED_CONTEXTS) throw new TooManyContexts();
    expanded = next;
  }
  for (const items of expanded) {
    const id = contextId(items);
    if (!into.has(id)) into.set(id, items);
    if (into.size > MAX_NAMED_CONTEXTS) throw new TooManyContexts();
  }
}

/** The snapshot's named contexts, walked once per snapshot in steps (a pause after each key). */
export function* namedContextsSteps(snapshot: Snapshot): Steps<NamedContexts> {
  const known = KNOWN.get(snapshot);
  if (known) return known;
  const groups = snapshot.groups();
  const named = new Map<string, Context>();
  for (const key of snapshot.keys()) {
    for (const value of key.values) addNamed(named, value.context, groups);
    yield;
  }
  for (const file of snapshot.files()) addNamed(named, file.context, groups);
  KNOWN.set(snapshot, named);
  return named;
}
