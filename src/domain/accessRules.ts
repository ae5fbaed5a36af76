/**
 * Access rules, ConfigHub's model: a named rule set that tokens are assigned to holds
 * rules in priority order (the first is the highest). A rule targets keys by name (`Is`,
 * `StartsWith`, `EndsWith`, `Contains`, without regard to case) or values by context
 * (`Resolves`, `DoesNotResolve`, `ContainsAny`, `ContainsAll`, `DoesNotContain`) and says whether
 * what it matches may be changed (`canEdit`).
 *
 * Deciding an element (a key's value at a context, a key's own fields, a file variant):
 * - stopOnFirstMatch (default true): the first matching rule decides;
 * - otherwise every matching rule is weighed and any denying one decides (a deny is never
 *   overridden by a later allow); the element is editable when all matching rules allow it;
 * - no rule matches: `unmatchedEditable` (default false) decides.
 * Key rules never match a file variant (its path is not a key name); value rules match a key's
 * own fields (no context) only through unmatchedEditable.
 */
import { WILDCARD, type Context } from './context.js';
import type { GroupIndex } from './contextGroups.js';

export const KEY_MATCHES = ['Is', 'StartsWith', 'EndsWith', 'Contains'] as const;
export const VALUE_MATCHES = ['Resolves', 'DoesNotResolve', 'ContainsAny', 'ContainsAll', 'DoesNotContain'] as const;
export type KeyMatch = (typeof KEY_MATCHES)[number];
export type ValueMatch = (typeof VALUE_MATCHES)[number];
export type RuleMatch = KeyMatch | ValueMatch;

export type AccessRule =
  | { readonly match: KeyMatch; readonly key: string; readonly canEdit: boolean }
  /** `context`: for Resolves/DoesNotResolve, one item per level (`*` = any); for the Contains kinds, a list of items. */
  | { readonly match: ValueMatch; readonly context: readonly string[]; readonly canEdit: boolean };

export interface RuleSet {
  readonly name: string;
  readonly stopOnFirstMatch: boolean;
  readonly unmatchedEditable: boolean;
  readonly rules: readonly AccessRule[];
}

export const MAX_RULE_SETS = 100;
export const MAX_RULES = 200;

export function isKeyMatch(match: string): match is KeyMatch {
  return (KEY_MATCHES as readonly string[]).includes(match);
}

export function isValueMatch(match: string): match is ValueMatch {
  return (VALUE_MATCHES as readonly string[]).includes(match);
}

/** What a write changes, one element at a time. */
export type Element =
  | { readonly kind: 'value'; readonly key: string; readonly context: Context }
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'file'; readonly path: string; readonly context: Context };

export function describeElement(element: Element): string {
  switch (element.kind) {
    case 'value':
      return `key ${element.key} at ${element.context.join(';')}`;
    case 'key':
      return `key ${element.key}`;
    case 'file':
      return `file ${element.path} at ${element.context.join(';')}`;
  }
}

export function describeRule(rule: AccessRule): string {
  const target =
    'key' in rule
      ? `key ${rule.match} ${rule.key}`
      : `value ${rule.match} ${rule.context.join(rule.match === 'Resolves' || rule.match === 'DoesNotResolve' ? ';' : ',')}`;
  return `${target}, canEdit ${rule.canEdit}`;
}

/** Whether a rule matches an element. */
export function ruleMatches(rule: AccessRule, element: Element, groups: GroupIndex): boolean {
  if ('key' in rule) {
    if (element.kind === 'file') return false;
    const name = element.key.toLowerCase();
    const target = rule.key.toLowerCase();
    switch (rule.match) {
      case 'Is':
        return name === target;
      case 'StartsWith':
        return name.startsWith(target);
      case 'EndsWith':
        return name.endsWith(target);
      case 'Contains':
        return name.includes(target);
    }
  }
  if (element.kind === 'key') return false;
  const items = element.context.filter((item) => item !== WILDCARD).map((item) => item.toLowerCase());
  const wanted = rule.context.map((item) => item.toLowerCase());
  switch (rule.match) {
    case 'Resolves':
      return resolvesFor(element.context, wanted, groups);
    case 'DoesNotResolve':
      return !resolvesFor(element.context, wanted, groups);
    case 'ContainsAny':
      return wanted.some((item) => items.includes(item));
    case 'ContainsAll':
      return wanted.every((item) => items.includes(item));
    case 'DoesNotContain':
      return !wanted.some((item) => items.includes(item));
  }
}

/**
 * A value's context resolves for a rule's context when, at every level, the value has a wildcard,
 * the rule has a wildcard (any item), the items are equal, or the value's item is a group holding
 * the rule's item.
 */
function resolvesFor(context: Context, rule: readonly string[], groups: GroupIndex): boolean {
  if (rule.length !== context.length) return false;
  return context.every((item, i) => {
    if (item === WILDCARD || rule[i] === WILDCARD) return true;
    const lower = item.toLowerCase();
    return lower === rule[i] || groups.groupsOf(i, rule[i]).has(lower);
  });
}

export interface RuleDecision {
  readonly editable: boolean;
  /** 1-based priority of the deciding rule; undefined when no rule matched. */
  readonly rule?: number;
  readonly why: string;
}

export function decide(set: RuleSet, element: Element, groups: GroupIndex): RuleDecision {
  let lastAllow: number | undefined;
  for (let i = 0; i < set.rules.length; i++) {
    const rule = set.rules[i];
    if (!ruleMatches(rule, element, groups)) continue;
    if (set.stopOnFirstMatch || !rule.canEdit) {
      return {
        editable: rule.canEdit,
        rule: i + 1,
        why: `rule ${i + 1} (${describeRule(rule)}) of rule set ${set.name}`,
      };
    }
    lastAllow ??= i;
  }
  if (lastAllow !== undefined) {
    return {
      editable: true,
      rule: lastAllow + 1,
      why: `rule ${lastAllow + 1} (${describeRule(set.rules[lastAllow])}) of rule set ${set.name}, no matching rule denies`,
    };
  }
  return {
    editable: set.unmatchedEditable,
    why: `no rule of rule set ${set.name} matches, and its unmatchedEditable is ${set.unmatchedEditable}`,
  };
}

/** ConfigHub's refusal text, then the element, the rule and the set. */
export const NO_WRITE_ACCESS = 'You do not have write access for specified context';

export function refusal(element: Element, decision: RuleDecision): string {
  return `${NO_WRITE_ACCESS}: ${describeElement(element)} is refused by ${decision.why}`;
}

/** Why a rule is not well formed, or undefined. */
export function ruleProblem(rule: AccessRule, levels: number): string | undefined {
  if ('key' in rule) {
    if (rule.key.length === 0 || rule.key.length > 120) return 'a key rule needs a key text of 1 to 120 characters';
    return undefined;
  }
  if (rule.context.length === 0 || rule.context.length > 100) return 'a value rule needs 1 to 100 context items';
  if (rule.context.some((item) => item.length === 0 || item.length > 120))
    return 'a context item of a rule is empty or longer than 120 characters';
  if ((rule.match === 'Resolves' || rule.match === 'DoesNotResolve') && rule.context.length !== levels) {
    return `${rule.match} needs a context of ${levels} item${levels === 1 ? '' : 's'}, one per level (* for any)`;
  }
  return undefined;
}
