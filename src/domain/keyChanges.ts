/**
 * How a key changed between two versions, and how to undo that change on a later version.
 *
 * A key is seen as independent facets: each of its fields (`key` spelling, `readme`, `deprecated`,
 * `vdt`, `push`) and each of its values, identified by context. A change touches some facets;
 * undoing it on a later version (a three-way revert) puts back the old content of exactly those
 * facets, and is refused for a facet that changed again since, so nothing anyone did later is lost.
 */
import { contextId, formatContext } from './context.js';
import type { KeyRecord, StoredValue } from './model.js';
import type { ValueType } from './valueTypes.js';

const FIELDS = ['key', 'readme', 'deprecated', 'vdt', 'push'] as const;
type Field = (typeof FIELDS)[number];

export interface ValueState {
  readonly value: string | null;
  readonly active: boolean;
}

export interface ValueChange {
  readonly context: string;
  readonly change: Change;
  readonly before?: ValueState;
  readonly after?: ValueState;
}

export type Change = 'added' | 'modified' | 'deleted';

export interface KeyChangeSummary {
  readonly key: string;
  readonly change: Change;
  /** Fields whose content changed on a key that exists on both sides. */
  readonly fields?: Partial<Record<Field, { before: unknown; after: unknown }>>;
  readonly values: readonly ValueChange[];
}

function valuesByContext(record: KeyRecord | null): Map<string, StoredValue> {
  return new Map((record?.values ?? []).map((value) => [contextId(value.context), value]));
}

const sameValue = (a: StoredValue, b: StoredValue) =>
  a.value === b.value && a.active === b.active && formatContext(a.context) === formatContext(b.context);
const state = (value: StoredValue): ValueState => ({ value: value.value, active: value.active });

export function changeOf<T>(before: T | null | undefined, after: T | null | undefined): Change {
  return before == null ? 'added' : after == null ? 'deleted' : 'modified';
}

/** What changed in one key; `before` and `after` are not both null. */
export function summarizeKeyChange(before: KeyRecord | null, after: KeyRecord | null): KeyChangeSummary {
  const values: ValueChange[] = [];
  const [b, a] = [valuesByContext(before), valuesByContext(after)];
  for (const id of [...new Set([...b.keys(), ...a.keys()])].sort()) {
    const [bv, av] = [b.get(id), a.get(id)];
    if (bv && av && sameValue(bv, av)) continue;
    values.push({
      context: formatContext((av ?? bv)!.context),
      change: changeOf(bv, av),
      ...(bv ? { before: state(bv) } : {}),
      ...(av ? { after: state(av) } : {}),
    });
  }
  const summary: KeyChangeSummary = { key: (after ?? before)!.key, change: changeOf(before, after), values };
  if (!before || !after) return summary;
  const fields: Partial<Record<Field, { before: unknown; after: unknown }>> = {};
  for (const field of FIELDS)
    if (before[field] !== after[field]) fields[field] = { before: before[field], after: after[field] };
  return Object.keys(fields).length ? { ...summary, fields } : summary;
}

// --- undoing a change ---------------------------------------------------------------------------

/** Facet name → its content as comparable text; an absent facet is absent from the map. */
function facets(record: KeyRecord | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!record) return out;
  for (const field of FIELDS) out.set(`field ${field}`, JSON.stringify(record[field]));
  for (const value of record.values) {
    out.set(
      `value ${contextId(value.context)}`,
      JSON.stringify([formatContext(value.context), value.value, value.active]),
    );
  }
  return out;
}

function describeFacet(name: string, records: (KeyRecord | null)[]): string {
  if (name.startsWith('field ')) return `its ${name.slice(6)}`;
  const id = name.slice(6);
  for (const record of records) {
    const value = record?.values.find((v) => contextId(v.context) === id);
    if (value) return `its value for context ${formatContext(value.context)}`;
  }
  return 'a value';
}

export type KeyRevert =
  { readonly ok: true; readonly record: KeyRecord | null } | { readonly ok: false; readonly reason: string };

/**
 * Undoes the change `before` → `after` on `head`: every facet the change touched gets its content
 * from `before` again, provided `head` still has it as in `after` (already as in `before` counts
 * as undone). Refused, naming the key and the facet, when a later change touched it.
 */
export function revertKey(before: KeyRecord | null, after: KeyRecord | null, head: KeyRecord | null): KeyRevert {
  const [b, a, h] = [facets(before), facets(after), facets(head)];
  const name = (after ?? before ?? head)!.key;
  const result = new Map(h);
  for (const facet of new Set([...b.keys(), ...a.keys()])) {
    if (b.get(facet) === a.get(facet)) continue;
    if (h.get(facet) === b.get(facet)) continue;
    if (h.get(facet) !== a.get(facet)) {
      return {
        ok: false,
        reason: `key ${name}: ${describeFacet(facet, [head, after, before])} was changed again by a later commit`,
      };
    }
    const restored = b.get(facet);
    if (restored === undefined) result.delete(facet);
    else result.set(facet, restored);
  }
  const present = FIELDS.filter((field) => result.has(`field ${field}`));
  const values = [...result].filter(([facet]) => facet.startsWith('value '));
  if (present.length === 0) {
    if (values.length > 0) return { ok: false, reason: `key ${name}: values were added to it by a later commit` };
    return { ok: true, record: null };
  }
  if (present.length !== FIELDS.length)
    return { ok: false, reason: `key ${name}: was changed again by a later commit` };
  const field = (f: Field) => JSON.parse(result.get(`field ${f}`)!);
  return {
    ok: true,
    record: {
      key: field('key') as string,
      readme: field('readme') as string,
      deprecated: field('deprecated') as boolean,
      vdt: field('vdt') as ValueType,
      push: field('push') as boolean,
      values: values.map(([, text]) => {
        const [context, value, active] = JSON.parse(text) as [string, string | null, boolean];
        return { context: context.split(';'), value, active };
      }),
    },
  };
}
