/**
 * What a change of the context groups changes, as elements the access rules decide: a group's
 * values apply to its members, so a member that joins or leaves a group (or a group made or
 * removed) changes what that member reads of every key and file with a value at the group. Each
 * such value, seen from each member whose membership changed, is one element: the value's context
 * with the group replaced by the member (`Production;EU` losing Paris is the element
 * `Production;Paris`). A writer of a rule set may change the groups only when its rules allow every
 * one of those elements (under the groups before and after), exactly as if it had written the
 * member's value itself. Every commit path calls it through the write guard (push, revert,
 * restore, the administration's commands), so no path changes a context's answer by way of a group.
 */
import type { Element } from '../../domain/accessRules.js';
import { WILDCARD, type Context } from '../../domain/context.js';
import type { GroupIndex } from '../../domain/contextGroups.js';

/** One level's changed groups: group (lower case) → members (lower case) that joined or left it. */
type ChangedMembers = Map<string, Set<string>>;

function changedMembers(before: GroupIndex, after: GroupIndex, level: number): ChangedMembers {
  const changed: ChangedMembers = new Map();
  const was = before.groupsAt(level);
  const is = after.groupsAt(level);
  for (const name of new Set([...was.keys(), ...is.keys()])) {
    const a = was.get(name);
    const b = is.get(name);
    const members = new Set<string>();
    for (const member of a ?? []) if (!b?.has(member)) members.add(member);
    for (const member of b ?? []) if (!a?.has(member)) members.add(member);
    if (members.size > 0) changed.set(name, members);
  }
  return changed;
}

/** Anything with a context per value: a key's values, a file variant. */
export interface ContextHolder {
  readonly kind: 'value' | 'file';
  /** The key's name or the file's path. */
  readonly name: string;
  readonly context: Context;
}

/**
 * The elements whose answers a change of the groups from `before` to `after` changes, among the
 * given values and file variants (those of the state after the change). Lazy: the guard stops at
 * the first one refused.
 */
export function* groupChangeElements(
  before: GroupIndex,
  after: GroupIndex,
  levels: number,
  holders: Iterable<ContextHolder>,
  /** A member's name as written (the index holds it in lower case). */
  spelling: (member: string) => string = (member) => member,
): Iterable<Element> {
  const changed: ChangedMembers[] = [];
  let any = false;
  for (let level = 0; level < levels; level++) {
    changed.push(changedMembers(before, after, level));
    any ||= changed[level].size > 0;
  }
  if (!any) return;
  for (const holder of holders) {
    for (let level = 0; level < holder.context.length; level++) {
      const item = holder.context[level];
      if (item === WILDCARD) continue;
      const members = changed[level]?.get(item.toLowerCase());
      if (!members) continue;
      for (const member of members) {
        const context = holder.context.map((at, i) => (i === level ? spelling(member) : at));
        yield holder.kind === 'value'
          ? { kind: 'value', key: holder.name, context }
          : { kind: 'file', path: holder.name, context };
      }
    }
  }
}
