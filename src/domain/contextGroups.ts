/**
 * Context groups, ConfigHub's model: with `contextGroupsEnabled`, an item of a level
 * may be a group of other items of the same level. No group holds a group; an item may be in
 * several groups. A value whose context names a group applies to the group's members; a group
 * scores just below a single item of its level (a member's own value wins) and above a wildcard.
 * Names are compared without regard to case; the spelling first written is kept.
 */
import { contextId, formatContext, WILDCARD, type Context } from './context.js';
import type { KeyRecord, StoredValue } from './model.js';

export interface ContextGroup {
  /** The level's name, as in the settings. */
  readonly level: string;
  readonly name: string;
  /** Items of the same level; never a group. */
  readonly members: readonly string[];
}

/** Limits, so every check is bounded: groups per repository and members per group. */
export const MAX_CONTEXT_GROUPS = 1000;
export const MAX_GROUP_MEMBERS = 1000;

/** Lookups by level index and lower-cased item name. */
export class GroupIndex {
  /** Per level: group name (lower case) → its members (lower case). */
  private readonly groups: Map<string, Set<string>>[];
  /** Per level: member (lower case) → the groups (lower case) holding it. */
  private readonly memberOf: Map<string, Set<string>>[];
  /** Per level: group name (lower case) → its members as the group spells them (matching ignores case; listings do not). */
  private readonly spelled: Map<string, readonly string[]>[];

  static readonly EMPTY = new GroupIndex([], []);

  constructor(levels: readonly string[], groups: readonly ContextGroup[]) {
    this.groups = levels.map(() => new Map());
    this.memberOf = levels.map(() => new Map());
    this.spelled = levels.map(() => new Map());
    const levelIndex = new Map(levels.map((level, i) => [level.toLowerCase(), i]));
    for (const group of groups) {
      const i = levelIndex.get(group.level.toLowerCase());
      if (i === undefined) continue;
      const name = group.name.toLowerCase();
      const members = new Set(group.members.map((m) => m.toLowerCase()));
      this.groups[i].set(name, members);
      const seen = new Set<string>();
      this.spelled[i].set(
        name,
        group.members.filter((m) => !seen.has(m.toLowerCase()) && seen.add(m.toLowerCase())),
      );
      for (const member of members) {
        let holders = this.memberOf[i].get(member);
        if (!holders) this.memberOf[i].set(member, (holders = new Set()));
        holders.add(name);
      }
    }
  }

  isGroup(level: number, item: string): boolean {
    return this.groups[level]?.has(item.toLowerCase()) ?? false;
  }

  /** The groups (lower case) holding an item at a level. */
  groupsOf(level: number, item: string): ReadonlySet<string> {
    return this.memberOf[level]?.get(item.toLowerCase()) ?? EMPTY_SET;
  }

  /** The groups of a level (lower case) with their members (lower case). */
  groupsAt(level: number): ReadonlyMap<string, ReadonlySet<string>> {
    return this.groups[level] ?? EMPTY_MAP;
  }

  membersOf(level: number, group: string): ReadonlySet<string> {
    return this.groups[level]?.get(group.toLowerCase()) ?? EMPTY_SET;
  }

  /** A group's members as its definition spells them, for what shows them to people. */
  spelledMembersOf(level: number, group: string): readonly string[] {
    return this.spelled[level]?.get(group.toLowerCase()) ?? [];
  }

  /** Whether two groups of a level share a member. */
  overlap(level: number, a: string, b: string): boolean {
    const x = this.membersOf(level, a);
    const y = this.membersOf(level, b);
    const [small, large] = x.size <= y.size ? [x, y] : [y, x];
    for (const member of small) if (large.has(member)) return true;
    return false;
  }
}

const EMPTY_SET: ReadonlySet<string> = new Set();
const EMPTY_MAP: ReadonlyMap<string, ReadonlySet<string>> = new Map();

/** The index of a repository's groups; empty when groups are off, so nothing changes. */
export function groupIndexOf(
  settings: { readonly levels: readonly string[]; readonly contextGroupsEnabled: boolean },
  groups: readonly ContextGroup[],
): GroupIndex {
  return settings.contextGroupsEnabled && groups.length > 0
    ? new GroupIndex(settings.levels, groups)
    : GroupIndex.EMPTY;
}

/**
 * Two active values of one key that no context can choose between: at every level the same item,
 * or two different groups that share a member (so a member's request qualifies both with equal
 * weight). Returns a reason naming both values, or undefined. Quadratic in the values of one key,
 * which the push limits bound.
 */
export function groupConflict(key: KeyRecord, index: GroupIndex): string | undefined {
  if (index === GroupIndex.EMPTY) return undefined;
  const active = key.values.filter(
    (v) => v.active && v.context.some((item, i) => item !== WILDCARD && index.isGroup(i, item)),
  );
  for (let a = 0; a < active.length; a++) {
    for (let b = a + 1; b < active.length; b++) {
      const level = conflictLevel(active[a], active[b], index);
      if (level !== undefined) {
        return `key ${key.key}: the values at ${formatContext(active[a].context)} and ${formatContext(active[b].context)} have equal weight for every member that groups ${active[a].context[level]} and ${active[b].context[level]} share: a context group conflict`;
      }
    }
  }
  return undefined;
}

function conflictLevel(x: StoredValue, y: StoredValue, index: GroupIndex): number | undefined {
  if (contextId(x.context) === contextId(y.context)) return undefined;
  let found: number | undefined;
  for (let i = 0; i < x.context.length; i++) {
    const a = x.context[i];
    const b = y.context[i];
    if (a.toLowerCase() === b.toLowerCase()) continue;
    if (a === WILDCARD || b === WILDCARD || !index.isGroup(i, a) || !index.isGroup(i, b) || !index.overlap(i, a, b))
      return undefined;
    found ??= i;
  }
  return found;
}

/** Why a group or member name cannot be used, or undefined. */
export function groupChangeProblem(
  groups: readonly ContextGroup[],
  level: string,
  group: string,
  member?: string,
): string | undefined {
  const inLevel = groups.filter((g) => g.level.toLowerCase() === level.toLowerCase());
  if (member !== undefined) {
    if (member.toLowerCase() === group.toLowerCase()) return `group ${group} cannot be a member of itself`;
    if (inLevel.some((g) => g.name.toLowerCase() === member.toLowerCase()))
      return `${member} is a group of level ${level}: a group cannot hold a group`;
    if (inLevel.some((g) => g.members.some((m) => m.toLowerCase() === group.toLowerCase())))
      return `${group} is a member of another group of level ${level}: a group cannot be a member`;
  }
  return undefined;
}

/** Context items in a stored context that name a group: for "in use" checks. */
export function usesGroup(context: Context, level: number, group: string): boolean {
  return context[level] !== undefined && context[level].toLowerCase() === group.toLowerCase();
}
