/**
 * Whether a change of one key can change what a context reads of it: its entry in a pull (the
 * resolved value, with the key's type, comment, deprecation and security group) and what a
 * template naming it renders. The watch and the read cache use it to know, without making the
 * answer, that a push left a context's answer as it was (service/answers/changeReach.ts).
 */
import type { KeyRecord, StoredValue } from './model.js';
import { resolveValue, type RequestContext } from './resolve.js';

const sameValue = (a: StoredValue, b: StoredValue) =>
  a.value === b.value &&
  a.active === b.active &&
  a.context.length === b.context.length &&
  a.context.every((item, i) => item === b.context[i]);

const sameFields = (a: KeyRecord, b: KeyRecord) =>
  a.readme === b.readme &&
  a.deprecated === b.deprecated &&
  a.vdt === b.vdt &&
  a.push === b.push &&
  a.securityGroup === b.securityGroup;

/**
 * True when the key reads the same for the request before and after (null: the key does not
 * exist), false when it may not. What a context reads of a key is its resolved value with the
 * key's fields, or, where nothing resolves, nothing: the key is not in the pull, and a template
 * naming it lists it as unresolved, by its name as stored. Where the key appears or goes (or its
 * name's case changes), that listed name changes (a missing key is listed as the template
 * writes it): false, whatever its values.
 */
export function readsTheSame(before: KeyRecord | null, after: KeyRecord | null, request: RequestContext): boolean {
  if (before === null || after === null || before.key !== after.key) return false;
  const was = resolveValue(before, request);
  const is = resolveValue(after, request);
  if (was === undefined || is === undefined) return was === is;
  return sameFields(before, after) && sameValue(was, is);
}
