/**
 * The class of a push's refusal reason, for the metrics' `reason` label: a handful of
 * fixed values, never the reason itself, whose text names keys and values a client sent.
 * Matched by fixed substrings of the reasons applyPush and push write, first match wins.
 */
export type RefusalClass =
  'security' | 'missing' | 'push_disabled' | 'value_type' | 'reference' | 'context' | 'invalid';

const CLASSES: readonly (readonly [string, RefusalClass])[] = [
  ['security group', 'security'],
  ['password', 'security'],
  ['sealed', 'security'],
  ['push is disabled', 'push_disabled'],
  ['does not exist', 'missing'],
  ['names no file', 'missing'],
  ['vdt', 'value_type'],
  ['value data types', 'value_type'],
  ['value is not', 'value_type'],
  ['refers to', 'reference'],
  ['references', 'reference'],
  ['context', 'context'],
];

export const REFUSAL_CLASSES: readonly RefusalClass[] = [
  'security',
  'missing',
  'push_disabled',
  'value_type',
  'reference',
  'context',
  'invalid',
];

export function refusalClass(reason: string): RefusalClass {
  for (const [text, refusal] of CLASSES) if (reason.includes(text)) return refusal;
  return 'invalid';
}
