/**
 * The one decision on required approvals (domain/approvalRules.ts), for every way a change can
 * reach a repository: does this change touch a context a rule protects, and if so, is it approved
 * by enough identities other than its author? A REST push, a `git push` through the server and
 * any other direct write are never approved (they carry no approvals), so a change touching a
 * protected context is refused and the reason names the rule and how to open a change request;
 * a change request's apply passes its author and approvers.
 */
import { describeRule, rulesTouched, type ApprovalRule } from '../../domain/approvalRules.js';
import { describeElement, type Element } from '../../domain/accessRules.js';
import type { Context } from '../../domain/context.js';
import type { PushChanges } from '../../domain/model.js';
import { runSteps, type Steps } from '../../lib/steps.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { changedElements } from '../write/writeGuard.js';

/** Who made a change request and who approved it (token labels; admin tokens count as their label). */
export interface Approvals {
  readonly author: string;
  readonly approvedBy: readonly string[];
}

/** A rule a change touches, and the first element that touches it. */
export interface TouchedRule {
  readonly rule: ApprovalRule;
  readonly element: string;
}

/** Elements decided between two pauses. */
const ELEMENTS_PER_STEP = 256;

/** The contexts an element stands for: a key's own fields (its type, its group) reach every context it has a value in. */
function contextsOf(element: Element, base: Snapshot, changes: PushChanges): Context[] {
  if (element.kind !== 'key') return [element.context];
  const id = element.key.toLowerCase();
  const before = base.key(id)?.values ?? [];
  const after = changes.keys.get(id)?.values ?? [];
  return [...before, ...after].map((value) => value.context);
}

/** The rules of the base's settings the change touches, each with the first element touching it. */
export function* touchedRulesSteps(base: Snapshot, changes: PushChanges): Steps<TouchedRule[]> {
  const rules = base.settings.requiredApprovals ?? [];
  if (rules.length === 0) return [];
  const levels = base.settings.levels.length;
  const groups = base.groups();
  const touched = new Map<ApprovalRule, string>();
  let weighed = 0;
  for (const element of changedElements(base, changes)) {
    for (const context of contextsOf(element, base, changes))
      for (const rule of rulesTouched(context, rules, levels, groups))
        if (!touched.has(rule)) touched.set(rule, describeElement(element));
    if (touched.size === rules.length) break;
    if (++weighed % ELEMENTS_PER_STEP === 0) yield;
  }
  return [...touched].map(([rule, element]) => ({ rule, element }));
}

/** Distinct approvers other than the author, compared without regard to case. */
export function approverCount(approvals: Approvals): number {
  const author = approvals.author.toLowerCase();
  return new Set(approvals.approvedBy.map((by) => by.toLowerCase()).filter((by) => by !== author)).size;
}

/**
 * Why the change may not be committed under the repository's required approvals, or undefined.
 * Without `approvals` (a direct write: a push, a `git push`) any touched rule refuses it, naming
 * the rule, the element and how to open a change request; with them (a change request's apply),
 * each touched rule needs its number of approvals by others than the author.
 */
export function* requiredApprovalRefusalSteps(
  base: Snapshot,
  changes: PushChanges,
  repositoryName: string,
  approvals?: Approvals,
): Steps<string | undefined> {
  const touched = yield* touchedRulesSteps(base, changes);
  if (touched.length === 0) return undefined;
  if (!approvals) {
    const first = touched[0];
    return (
      `${first.element} is in contexts that need an approved change request: required approvals ${describeRule(first.rule)}` +
      `; open a change request with the same body instead (POST /rest/changes/${repositoryName}, or cfghub change create ${repositoryName})`
    );
  }
  const count = approverCount(approvals);
  const short = touched.find((one) => one.rule.approvals > count);
  if (!short) return undefined;
  return `the change request needs ${short.rule.approvals} approval${short.rule.approvals === 1 ? '' : 's'} by others than its author ${approvals.author} (required approvals ${describeRule(short.rule)}, touched by ${short.element}); it has ${count}`;
}

/** requiredApprovalRefusalSteps at once: for callers off the request path or with small changes. */
export function requiredApprovalRefusal(
  base: Snapshot,
  changes: PushChanges,
  repositoryName: string,
  approvals?: Approvals,
): string | undefined {
  return runSteps(requiredApprovalRefusalSteps(base, changes, repositoryName, approvals));
}
