/**
 * Required approvals: a repository may demand that changes to some contexts go through a change
 * request approved by others. A rule names a context pattern (`Production;*;*`, one item per
 * level, `*` for any item) and how many approvals, by identities other than the author, a change
 * request touching it needs. A value or file touches a rule's contexts when it could be part of
 * the answer of one of them: at every level an item equal to the rule's, a wildcard on either side,
 * or a context group holding the other's item (or sharing a member with it). So a change of the
 * default value (`*;*;*`) touches `Production;*;*`: production may read it.
 */
import { parseContext, WILDCARD, type Context } from './context.js';
import type { GroupIndex } from './contextGroups.js';

export interface ApprovalRule {
  /** The context pattern, one item per level: `Production;*;*`. */
  readonly context: string;
  /** Approvals by identities other than the author a change request touching it needs. */
  readonly approvals: number;
}

export const MAX_APPROVAL_RULES = 50;
export const MAX_REQUIRED_APPROVALS = 10;

/** Why a list of rules cannot be stored for a repository of these levels, or undefined. */
export function approvalRulesProblem(rules: readonly ApprovalRule[], levels: number): string | undefined {
  if (rules.length > MAX_APPROVAL_RULES) return `at most ${MAX_APPROVAL_RULES} required-approval rules`;
  for (const rule of rules) {
    const parsed = parseContext(rule.context, levels);
    if (!parsed.ok) return `required approvals for ${rule.context}: ${parsed.problem}`;
    if (!Number.isInteger(rule.approvals) || rule.approvals < 1 || rule.approvals > MAX_REQUIRED_APPROVALS)
      return `required approvals for ${rule.context}: approvals must be a whole number from 1 to ${MAX_REQUIRED_APPROVALS}`;
  }
  return undefined;
}

/** The rule's pattern as a context (items as written, `*` for a wildcard). */
export function ruleContext(rule: ApprovalRule, levels: number): Context | undefined {
  const parsed = parseContext(rule.context, levels);
  return parsed.ok ? parsed.context : undefined;
}

function itemsMeet(level: number, a: string, b: string, groups: GroupIndex): boolean {
  if (a === WILDCARD || b === WILDCARD) return true;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return true;
  const xGroup = groups.isGroup(level, x);
  const yGroup = groups.isGroup(level, y);
  if (xGroup && yGroup) return groups.overlap(level, x, y);
  if (xGroup) return groups.membersOf(level, x).has(y);
  if (yGroup) return groups.membersOf(level, y).has(x);
  return false;
}

/** Whether a value or file stored at `context` can be part of the answer of a context the pattern matches. */
export function touchesPattern(context: Context, pattern: Context, groups: GroupIndex): boolean {
  if (context.length !== pattern.length) return false;
  return context.every((item, level) => itemsMeet(level, item, pattern[level], groups));
}

/** The rules a context touches. */
export function rulesTouched(
  context: Context,
  rules: readonly ApprovalRule[],
  levels: number,
  groups: GroupIndex,
): ApprovalRule[] {
  return rules.filter((rule) => {
    const pattern = ruleContext(rule, levels);
    return pattern !== undefined && touchesPattern(context, pattern, groups);
  });
}

export function describeRule(rule: ApprovalRule): string {
  return `${rule.context} (${rule.approvals} approval${rule.approvals === 1 ? '' : 's'})`;
}
