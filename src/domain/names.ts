/**
 * Naming rules for accounts, repositories, token labels and keys.
 * Pure functions: no I/O.
 */

/** Account and repository names and token labels: 1–120 letters and digits joined by single `-`, `.` or `_`. */
const NAME = /^[A-Za-z0-9]+(?:[-._][A-Za-z0-9]+)*$/;

export function isValidName(name: string): boolean {
  return name.length >= 1 && name.length <= 120 && NAME.test(name);
}

/** Why a name is not valid, or undefined when it is. `what` names the thing in the message. */
export function nameProblem(what: string, name: string): string | undefined {
  if (name.length === 0) return `${what} is empty`;
  if (name.length > 120) return `${what} is longer than 120 characters`;
  if (!NAME.test(name)) return `${what} must be letters and digits joined by single '-', '.' or '_'`;
  return undefined;
}

/** Key names: 1–120 characters of letters, digits and `. _ - + [ ] ( ) *`. */
const KEY = /^[A-Za-z0-9._+\-[\]()*]{1,120}$/;

export function isValidKeyName(key: string): boolean {
  return KEY.test(key);
}

/** The identity of a key: keys are matched without regard to case. */
export function keyId(key: string): string {
  return key.toLowerCase();
}

/**
 * Matches `${ key }` references in a file template (spaces optional). Only text that could be a
 * key name counts as a reference; anything else between `${` and `}` is left as literal text.
 */
export const KEY_REFERENCE = /\$\{\s*([A-Za-z0-9._+\-[\]()*]{1,120})\s*\}/g;

/** The key names a template references, in order of first appearance, without duplicates (by key id). */
export function referencedKeys(content: string): string[] {
  const seen = new Map<string, string>();
  for (const match of content.matchAll(KEY_REFERENCE)) {
    const name = match[1];
    if (!seen.has(keyId(name))) seen.set(keyId(name), name);
  }
  return [...seen.values()];
}

/**
 * A repository's alias (its `alias` setting): another name for it where a protocol names a
 * repository with one word (Spring Cloud Config's application). 1–100 letters and digits joined by
 * single `-` or `_`: no dot, so an alias never reads as `account.repository`, which always holds
 * one. Unique on a server without regard to case.
 */
const ALIAS = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;
export const MAX_ALIAS = 100;

/** Why an alias is not valid, or undefined when it is. */
export function aliasProblem(alias: string): string | undefined {
  if (alias.length === 0 || alias.length > MAX_ALIAS || !ALIAS.test(alias))
    return `an alias is 1 to ${MAX_ALIAS} letters and digits joined by single '-' or '_' (no '.'), got ${JSON.stringify(alias.slice(0, MAX_ALIAS + 20))}`;
  return undefined;
}
