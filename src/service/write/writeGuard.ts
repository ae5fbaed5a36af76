/**
 * The checks every commit passes whoever makes it (push, revert, restore, the CLI's commands),
 * run by every commit (commit.ts) on the changes planned against the head:
 * - context group conflicts: two values of one key that a member's request cannot choose between;
 * - access rules: with `accessControlsEnabled`, a writer assigned to a rule set may change only the
 *   elements its rules allow. Writers without a set keep full access.
 */
import { runSteps, type Steps } from '../../lib/steps.js';
import { decide, refusal, type Element } from '../../domain/accessRules.js';
import { groupConflict, groupIndexOf } from '../../domain/contextGroups.js';
import { contextId } from '../../domain/context.js';
import type { KeyRecord, PushChanges, StoredValue } from '../../domain/model.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { groupChangeElements, type ContextHolder } from '../access/contextGroupChanges.js';

/** Who makes a commit, as far as the rules care. */
export interface Writer {
  /** The rule set the writer's token is assigned to. */
  readonly ruleSet?: string;
}

export interface GuardProblem {
  readonly reason: string;
  /** True for a refusal by the access rules (a 403 on revert and restore), false for a conflict. */
  readonly denied: boolean;
}

export function guardProblem(
  base: Snapshot,
  changes: PushChanges,
  writer: Writer | undefined,
): GuardProblem | undefined {
  return runSteps(guardProblemSteps(base, changes, writer));
}

/** guardProblem as steps (src/lib/steps.ts): a pause is safe after each key and each element decided. */
export function* guardProblemSteps(
  base: Snapshot,
  changes: PushChanges,
  writer: Writer | undefined,
): Steps<GuardProblem | undefined> {
  const conflict = yield* conflictIn(base, changes);
  if (conflict) return { reason: `a context group conflict: ${conflict}`, denied: false };
  if (writer?.ruleSet === undefined || !base.settings.accessControlsEnabled) return undefined;
  const set = base.ruleSets.find((s) => s.name.toLowerCase() === writer.ruleSet!.toLowerCase());
  if (!set)
    return {
      reason: `You do not have write access for specified context: the token's rule set ${writer.ruleSet} no longer exists`,
      denied: true,
    };
  const groups = base.groups();
  for (const element of changedElements(base, changes)) {
    const decision = decide(set, element, groups);
    if (!decision.editable) return { reason: refusal(element, decision), denied: true };
    yield;
  }
  // A change of the groups is judged by the members whose answers it changes (access/contextGroupChanges.ts).
  const after =
    changes.contextGroups || changes.settings
      ? groupIndexOf(changes.settings ?? base.settings, changes.contextGroups ?? base.contextGroups)
      : groups;
  if (after === groups) return undefined;
  const spelled = new Map<string, string>();
  for (const group of [...(changes.contextGroups ?? []), ...base.contextGroups])
    for (const member of group.members) spelled.set(member.toLowerCase(), member);
  const spelling = (member: string) => spelled.get(member) ?? member;
  for (const element of groupChangeElements(
    groups,
    after,
    base.settings.levels.length,
    holdersAfter(base, changes),
    spelling,
  )) {
    for (const index of [groups, after]) {
      const decision = decide(set, element, index);
      if (!decision.editable)
        return {
          reason: `${refusal(element, decision)} (a change of the context groups changes what it reads)`,
          denied: true,
        };
    }
    yield;
  }
  return undefined;
}

/** The key values and file variants of the state after the changes. */
function* holdersAfter(base: Snapshot, changes: PushChanges): Iterable<ContextHolder> {
  for (const key of allKeys(base, changes)) {
    if (key) for (const value of key.values) yield { kind: 'value', name: key.key, context: value.context };
  }
  for (const [, file] of changes.files) if (file) yield { kind: 'file', name: file.path, context: file.context };
  for (const [id, entry] of base.fileEntries)
    if (!changes.files.has(id)) yield { kind: 'file', name: entry.record.path, context: entry.record.context };
}

function* conflictIn(base: Snapshot, changes: PushChanges): Steps<string | undefined> {
  const index = groupIndexOf(changes.settings ?? base.settings, changes.contextGroups ?? base.contextGroups);
  // New groups or settings can make old values conflict: then every key is checked, else the changed ones.
  const keys: Iterable<KeyRecord | null> =
    changes.contextGroups || changes.settings ? allKeys(base, changes) : changes.keys.values();
  for (const key of keys) {
    const problem = key && groupConflict(key, index);
    if (problem) return problem;
    yield;
  }
  return undefined;
}

function* allKeys(base: Snapshot, changes: PushChanges): Iterable<KeyRecord | null> {
  yield* changes.keys.values();
  for (const key of base.keys()) if (!changes.keys.has(key.key.toLowerCase())) yield key;
}

const sameValue = (a: StoredValue | undefined, b: StoredValue | undefined) =>
  a?.value === b?.value && a?.active === b?.active;

/** Each element a change touches: a key's values by context, its own fields, file variants. */
export function changedElements(base: Snapshot, changes: PushChanges): Element[] {
  const elements: Element[] = [];
  for (const [id, after] of changes.keys) {
    const count = elements.length;
    const before = base.key(id);
    const name = (after ?? before)?.key ?? id;
    const was = new Map((before?.values ?? []).map((v) => [contextId(v.context), v]));
    const is = new Map((after?.values ?? []).map((v) => [contextId(v.context), v]));
    for (const [cid, value] of was)
      if (!sameValue(value, is.get(cid))) elements.push({ kind: 'value', key: name, context: value.context });
    for (const [cid, value] of is)
      if (!was.has(cid)) elements.push({ kind: 'value', key: name, context: value.context });
    // A key's own fields are an element when they change on a key that stays, or when a key is
    // created or deleted without values (with values, the values are the elements).
    const valuesChanged = elements.length > count;
    if ((before && after && fieldsDiffer(before, after)) || (!valuesChanged && (!before || !after)))
      elements.push({ kind: 'key', key: name });
  }
  for (const [id, after] of changes.files) {
    const before = base.file(id);
    const file = (after ?? before)!;
    if (file) elements.push({ kind: 'file', path: file.path, context: file.context });
  }
  return elements;
}

function fieldsDiffer(a: KeyRecord, b: KeyRecord): boolean {
  return (
    a.readme !== b.readme ||
    a.deprecated !== b.deprecated ||
    a.vdt !== b.vdt ||
    a.push !== b.push ||
    a.securityGroup !== b.securityGroup
  );
}

/** The keys and files that differ between two snapshots, as changes from `from` to `to` (compared by blob). */
export function snapshotChanges(from: Snapshot, to: Snapshot): PushChanges {
  const keys = new Map<string, KeyRecord | null>();
  const shardNames = new Set([...from.shards.keys(), ...to.shards.keys()]);
  for (const name of shardNames) {
    const a = from.shards.get(name);
    const b = to.shards.get(name);
    if (a?.treeId === b?.treeId) continue;
    for (const [id, entry] of a?.byId ?? [])
      if (b?.byId.get(id)?.blobId !== entry.blobId) keys.set(id, b?.byId.get(id)?.record ?? null);
    for (const [id, entry] of b?.byId ?? []) if (!a?.byId.has(id)) keys.set(id, entry.record);
  }
  const files = new Map<string, import('../../domain/model.js').FileRecord | null>();
  for (const [id, entry] of from.fileEntries)
    if (
      to.fileEntries.get(id)?.blobId !== entry.blobId ||
      to.fileEntries.get(id)?.record.active !== entry.record.active
    )
      files.set(id, to.fileEntries.get(id)?.record ?? null);
  for (const [id, entry] of to.fileEntries) if (!from.fileEntries.has(id)) files.set(id, entry.record);
  // The context groups are part of what a restore brings back: what they change is judged too.
  return from.contextGroupsBlobId === to.contextGroupsBlobId
    ? { keys, files }
    : { keys, files, contextGroups: to.contextGroups };
}
