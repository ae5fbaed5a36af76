/**
 * A change request applied on a head that moved since it was made: merged key by key and context
 * by context. What the change request changes is the difference between its base (the head it was
 * made on) and its commit; what changed on the branch meanwhile is the difference between the base
 * and the head. Both sides may change the same key at different contexts, or different files; the
 * same value (key and context) or the same file variant (path and context) changed differently on
 * both sides is a conflict, named; so is a key whose own fields (type, security group, readme…)
 * one side changed while the other changed anything of it, since its values were written for
 * those fields. The same change made on both sides is no conflict.
 */
import { contextId, formatContext } from '../../domain/context.js';
import type { FileRecord, KeyRecord, PushChanges, StoredValue } from '../../domain/model.js';
import type { Steps } from '../../lib/steps.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { snapshotChanges } from '../write/writeGuard.js';
import { ACCESS_RULES_FILE, CONTEXT_GROUPS_FILE } from '../../layout/accessLayout.js';
import { SCHEMAS_FILE } from '../../layout/schemaLayout.js';

export type Merge =
  { readonly ok: true; readonly changes: PushChanges } | { readonly ok: false; readonly conflicts: readonly string[] };

/** Conflicts named in a refusal; more are counted. */
export const MAX_NAMED_CONFLICTS = 20;
const KEYS_PER_STEP = 64;

const sameValue = (a: StoredValue | undefined, b: StoredValue | undefined) =>
  a?.value === b?.value && a?.active === b?.active && (a === undefined) === (b === undefined);

const FIELDS = ['readme', 'deprecated', 'vdt', 'push', 'securityGroup'] as const;

function changedFields(from: KeyRecord | undefined, to: KeyRecord | undefined): Set<string> {
  const changed = new Set<string>();
  if (!from || !to) return changed;
  for (const field of FIELDS) if (from[field] !== to[field]) changed.add(field);
  return changed;
}

const valuesById = (key: KeyRecord | undefined) => new Map((key?.values ?? []).map((v) => [contextId(v.context), v]));

/** The contexts (by id) whose value differs between two versions of a key. */
function changedContexts(from: Map<string, StoredValue>, to: Map<string, StoredValue>): Set<string> {
  const changed = new Set<string>();
  for (const id of new Set([...from.keys(), ...to.keys()])) if (!sameValue(from.get(id), to.get(id))) changed.add(id);
  return changed;
}

/** One key merged: the head's version with the change request's changes of values and fields, or the conflicts. */
function mergeKey(
  base: KeyRecord | undefined,
  mine: KeyRecord | undefined,
  head: KeyRecord | undefined,
  conflicts: string[],
): KeyRecord | null | undefined {
  const name = (mine ?? head ?? base)!.key;
  const [b, m, h] = [valuesById(base), valuesById(mine), valuesById(head)];
  const myContexts = changedContexts(b, m);
  const theirContexts = changedContexts(b, h);
  const myFields = changedFields(base, mine);
  const theirFields = changedFields(base, head);
  if (mine === undefined && head === undefined) return null; // deleted on both sides
  if (base === undefined && mine && head && FIELDS.some((field) => mine[field] !== head[field])) {
    conflicts.push(`key ${name}: created on both sides with different fields`);
    return undefined;
  }
  const existence = (base !== undefined) !== (head !== undefined);
  if (existence && (mine === undefined) !== (head === undefined)) {
    // Created or deleted on the branch meanwhile, and the change request changed it otherwise.
    conflicts.push(`key ${name}: ${head ? 'created' : 'deleted'} on the branch since the change request was made`);
    return undefined;
  }
  if (mine === undefined) {
    // Deleted by the change request: the branch must not have changed it since.
    if (theirContexts.size || theirFields.size) {
      conflicts.push(`key ${name}: deleted by the change request, changed on the branch since`);
      return undefined;
    }
    return null;
  }
  if ((myFields.size && (theirFields.size || theirContexts.size)) || (theirFields.size && myContexts.size)) {
    const fields = [...new Set([...myFields, ...theirFields])].join(', ');
    conflicts.push(`key ${name}: its ${fields || 'fields'} changed on one side while the other changed the key`);
    return undefined;
  }
  const clashes = [...myContexts].filter((id) => theirContexts.has(id) && !sameValue(m.get(id), h.get(id)));
  for (const id of clashes)
    conflicts.push(`key ${name} at ${formatContext((m.get(id) ?? b.get(id) ?? h.get(id))!.context)}`);
  if (clashes.length) return undefined;
  const start = head ?? mine;
  const values = new Map(h);
  for (const id of myContexts) {
    const value = m.get(id);
    if (value) values.set(id, value);
    else values.delete(id);
  }
  const fields = Object.fromEntries(FIELDS.map((field) => [field, myFields.has(field) ? mine[field] : start[field]]));
  const merged: KeyRecord = {
    ...start,
    ...fields,
    values: [...values.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, value]) => value),
  };
  if (merged.securityGroup === undefined) delete (merged as { securityGroup?: string }).securityGroup;
  return merged;
}

const sameFile = (a: FileRecord | null | undefined, b: FileRecord | null | undefined) =>
  JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The change request's changes (base to `mine`) merged onto `head`. */
export function* mergeChangeSteps(base: Snapshot, mine: Snapshot, head: Snapshot): Steps<Merge> {
  const requested = snapshotChanges(base, mine);
  const conflicts: string[] = [];
  const keys = new Map<string, KeyRecord | null>();
  let weighed = 0;
  for (const id of requested.keys.keys()) {
    const merged = mergeKey(base.key(id), mine.key(id), head.key(id), conflicts);
    if (merged !== undefined) keys.set(id, merged);
    if (++weighed % KEYS_PER_STEP === 0) yield;
  }
  const files = new Map<string, FileRecord | null>();
  for (const [id, file] of requested.files) {
    const before = base.file(id);
    const now = head.file(id);
    if (!sameFile(before, now) && !sameFile(file, now)) {
      const record = (file ?? before ?? now)!;
      conflicts.push(`file ${record.path} at ${formatContext(record.context)}`);
      continue;
    }
    files.set(id, file);
    if (++weighed % KEYS_PER_STEP === 0) yield;
  }
  const documents = mergeDocuments(base, mine, head, conflicts);
  if (conflicts.length) return { ok: false, conflicts };
  return { ok: true, changes: { keys, files, ...documents } };
}

/**
 * The repository's documents a change request may change besides keys and files: the schemas (a
 * push body's `schemas`), and the context groups and access rules a revert or restore brings
 * back. Each is whole: taken from the change request when only it changed the document, a
 * conflict when the branch changed it differently since.
 */
function mergeDocuments(
  base: Snapshot,
  mine: Snapshot,
  head: Snapshot,
  conflicts: string[],
): Pick<PushChanges, 'schemas' | 'contextGroups' | 'ruleSets'> {
  const taken = (file: string, blob: (s: Snapshot) => string | undefined): boolean => {
    if (blob(mine) === blob(base) || blob(mine) === blob(head)) return false;
    if (blob(head) !== blob(base)) {
      conflicts.push(`${file}: changed on the branch since the change request was made`);
      return false;
    }
    return true;
  };
  return {
    ...(taken(SCHEMAS_FILE, (s) => s.schemasBlobId) ? { schemas: mine.schemas } : {}),
    ...(taken(CONTEXT_GROUPS_FILE, (s) => s.contextGroupsBlobId) ? { contextGroups: mine.contextGroups } : {}),
    ...(taken(ACCESS_RULES_FILE, (s) => s.ruleSetsBlobId) ? { ruleSets: mine.ruleSets } : {}),
  };
}

/** The refusal naming the conflicts (the first MAX_NAMED_CONFLICTS, the others counted). */
export function conflictReason(id: number, conflicts: readonly string[]): string {
  const named = conflicts.slice(0, MAX_NAMED_CONFLICTS).join('; ');
  const more = conflicts.length > MAX_NAMED_CONFLICTS ? ` and ${conflicts.length - MAX_NAMED_CONFLICTS} more` : '';
  return `change request ${id} conflicts with what changed on the branch since it was made: ${named}${more}`;
}
