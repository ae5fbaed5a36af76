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
import { formatContext, type Context } from '../../domain/context.js';
import { GroupIndex, type ContextGroup } from '../../domain/contextGroups.js';
import type { PushChanges } from '../../domain/model.js';
import { runSteps, type Steps } from '../../lib/steps.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { changedElements, snapshotChanges } from '../write/writeGuard.js';
import type { CommitPlan } from '../write/commit.js';
import type { GitRepository } from '../../disk/repository.js';
import { LayoutError } from '../../layout/errors.js';
import { TimeSlices } from '../../lib/timeSlices.js';

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
  if (changes.contextGroups && touched.size < rules.length)
    yield* groupChangeTouchesSteps(base, changes.contextGroups, touched);
  return [...touched].map(([rule, element]) => ({ rule, element }));
}

/** `level\nname` (lower case) of each context group whose members differ between the two lists. */
function changedGroups(levels: readonly string[], before: readonly ContextGroup[], after: readonly ContextGroup[]) {
  const index = new Map(levels.map((level, i) => [level.toLowerCase(), i]));
  const members = (groups: readonly ContextGroup[]) =>
    new Map(
      groups.map((group) => [
        `${index.get(group.level.toLowerCase())}\n${group.name.toLowerCase()}`,
        [...new Set(group.members.map((m) => m.toLowerCase()))].sort().join('\n'),
      ]),
    );
  const [was, is] = [members(before), members(after)];
  return new Set([...new Set([...was.keys(), ...is.keys()])].filter((id) => was.get(id) !== is.get(id)));
}

/**
 * A change of context groups changes the answers of the contexts a value stored at a changed
 * group's name reaches: such a value touches the rules its context meets under the old groups or
 * the new ones.
 */
function* groupChangeTouchesSteps(
  base: Snapshot,
  after: readonly ContextGroup[],
  touched: Map<ApprovalRule, string>,
): Steps<void> {
  const rules = base.settings.requiredApprovals ?? [];
  const levels = base.settings.levels;
  const changed = changedGroups(levels, base.contextGroups, after);
  if (changed.size === 0) return;
  const indexes = [base.groups(), new GroupIndex(levels, after)];
  const atChangedGroup = (context: Context) =>
    context.some((item, level) => changed.has(`${level}\n${item.toLowerCase()}`));
  const weigh = (context: Context, element: string) => {
    for (const groups of indexes)
      for (const rule of rulesTouched(context, rules, levels.length, groups))
        if (!touched.has(rule)) touched.set(rule, `${element} (its context group changes)`);
  };
  let weighed = 0;
  for (const key of base.keys()) {
    for (const value of key.values)
      if (atChangedGroup(value.context)) weigh(value.context, `key ${key.key} at ${formatContext(value.context)}`);
    if (touched.size === rules.length) return;
    if (++weighed % ELEMENTS_PER_STEP === 0) yield;
  }
  for (const file of base.files()) {
    if (atChangedGroup(file.context)) weigh(file.context, `file ${file.path} at ${formatContext(file.context)}`);
    if (++weighed % ELEMENTS_PER_STEP === 0) yield;
  }
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
  instead = pushInstead(repositoryName),
): Steps<string | undefined> {
  const touched = yield* touchedRulesSteps(base, changes);
  if (touched.length === 0) return undefined;
  if (!approvals) {
    const first = touched[0];
    return (
      `${first.element} is in contexts that need an approved change request: required approvals ${describeRule(first.rule)}` +
      `; ${instead}`
    );
  }
  const count = approverCount(approvals);
  const short = touched.find((one) => one.rule.approvals > count);
  if (!short) return undefined;
  return `the change request needs ${short.rule.approvals} approval${short.rule.approvals === 1 ? '' : 's'} by others than its author ${approvals.author} (required approvals ${describeRule(short.rule)}, touched by ${short.element}); it has ${count}`;
}

/** How a refused push gets through: the same body as a change request. */
export function pushInstead(repositoryName: string): string {
  return `open a change request with the same body instead (POST /rest/changes/${repositoryName}, or cfghub change create ${repositoryName})`;
}

/** How a refused revert or restore gets through: a change request of it, which the apply commits once approved. */
export function rollbackInstead(repositoryName: string, kind: 'revert' | 'restore', target: string): string {
  return (
    `open a change request of the ${kind} instead (POST /rest/changes/${repositoryName} with {"title": "…", "${kind}": "${target}"}` +
    `, or cfghub change create ${repositoryName} --title … --${kind} ${target})`
  );
}

/** How a refused change of context groups gets through: a change request cannot carry one, an administrator lifts the rule. */
export function groupsInstead(repositoryName: string): string {
  return `a change request cannot carry context groups: an administrator lifts the rule (cfghub repo settings ${repositoryName} --require-approvals …), changes the group and sets the rule again`;
}

/**
 * A revert or restore planned on `base`, held to the required approvals as a push is: refused
 * when what it changes on the head touches a protected context. A restore stages on its own base
 * (the point's keys and files over the head's settings): what it changes is then the difference
 * between the head and that base. A head that cannot be read (a restore repairing a plain-git
 * commit) has no answers to protect: the restore is not held then.
 */
export async function heldToRequiredApprovals(
  repository: GitRepository,
  base: Snapshot,
  planned: CommitPlan,
  instead: string,
  ownBase = false,
): Promise<CommitPlan> {
  if (!planned.ok || !(base.settings.requiredApprovals?.length ?? 0)) return planned;
  let head = base;
  let changes = planned.changes;
  if (ownBase) {
    try {
      head = await repository.snapshot(base.commitId);
    } catch (error) {
      if (error instanceof LayoutError) return planned;
      throw error;
    }
    const restored = snapshotChanges(head, base);
    changes = {
      ...restored,
      keys: new Map([...restored.keys, ...planned.changes.keys]),
      files: new Map([...restored.files, ...planned.changes.files]),
    };
  }
  const slices = new TimeSlices();
  const refusal = await slices.run(
    requiredApprovalRefusalSteps(head, changes, repository.fullName, undefined, instead),
  );
  return refusal ? { ok: false, reason: refusal } : planned;
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
