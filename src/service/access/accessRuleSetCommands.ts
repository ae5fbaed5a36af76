/**
 * Access rule set commands: create and delete a set, add, move and delete rules, set
 * its switches. Each change is one commit of `access-rules.yaml`, made like every write (write/commit.ts).
 */
import {
  isKeyMatch,
  isValueMatch,
  MAX_RULE_SETS,
  MAX_RULES,
  ruleProblem,
  type AccessRule,
  type RuleSet,
} from '../../domain/accessRules.js';
import { nameProblem } from '../../domain/names.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { commitChange } from '../write/commit.js';
import { ServiceError } from '../errors.js';

export function findRuleSet(base: Snapshot, name: string): RuleSet | undefined {
  return base.ruleSets.find((set) => set.name.toLowerCase() === name.toLowerCase());
}

function requireSet(base: Snapshot, repository: GitRepository, name: string): RuleSet {
  const set = findRuleSet(base, name);
  if (!set) throw new ServiceError('not_found', `repository ${repository.fullName} has no rule set ${name}`);
  return set;
}

/** One commit replacing the sets by `change(sets)`. */
async function changeSets(
  repository: GitRepository,
  message: string,
  change: (sets: readonly RuleSet[], base: Snapshot) => readonly RuleSet[],
): Promise<string> {
  const result = await commitChange(repository, (base) => ({
    ok: true,
    changes: { keys: new Map(), files: new Map(), ruleSets: change(base.ruleSets, base) },
    message: `${message}\n`,
  }));
  return result.commitId;
}

const replace = (sets: readonly RuleSet[], old: RuleSet, next: RuleSet) => sets.map((s) => (s === old ? next : s));

export async function createRuleSet(
  repository: GitRepository,
  name: string,
  options: { stopOnFirstMatch?: boolean; unmatchedEditable?: boolean } = {},
): Promise<{ ruleSet: RuleSet; commit: string }> {
  checkRuleSetName(name);
  const ruleSet: RuleSet = {
    name,
    stopOnFirstMatch: options.stopOnFirstMatch ?? true,
    unmatchedEditable: options.unmatchedEditable ?? false,
    rules: [],
  };
  const commit = await changeSets(repository, `Create rule set ${name}`, (sets) => {
    if (sets.some((s) => s.name.toLowerCase() === name.toLowerCase()))
      throw new ServiceError('conflict', `repository ${repository.fullName} already has a rule set ${name}`);
    if (sets.length >= MAX_RULE_SETS)
      throw new ServiceError('invalid_argument', `a repository has at most ${MAX_RULE_SETS} rule sets`);
    return [...sets, ruleSet];
  });
  return { ruleSet, commit };
}

export async function deleteRuleSet(
  repository: GitRepository,
  name: string,
  tokensUsing: readonly string[],
): Promise<{ commit: string }> {
  if (tokensUsing.length)
    throw new ServiceError(
      'conflict',
      `rule set ${name} is assigned to token ${tokensUsing[0]}${tokensUsing.length > 1 ? ` and ${tokensUsing.length - 1} more` : ''}: revoke them first`,
    );
  const commit = await changeSets(repository, `Delete rule set ${name}`, (sets, base) => {
    const set = requireSet(base, repository, name); // asked once, before filtering: an empty list must refuse too
    return sets.filter((s) => s !== set);
  });
  return { commit };
}

export async function setRuleSetSwitches(
  repository: GitRepository,
  name: string,
  switches: { stopOnFirstMatch?: boolean; unmatchedEditable?: boolean },
): Promise<{ ruleSet: RuleSet; commit: string }> {
  let updated: RuleSet | undefined;
  const commit = await changeSets(repository, `Change rule set ${name}`, (sets, base) => {
    const set = requireSet(base, repository, name);
    updated = { ...set, ...switches };
    return replace(sets, set, updated);
  });
  return { ruleSet: updated!, commit };
}

/**
 * A rule as fields, the admin API's form: `key` for a key rule, `context` for a value rule (one
 * item per level for Resolves/DoesNotResolve, `*` = any; a list of items for the Contains kinds).
 */
export interface RuleFields {
  readonly match: string;
  readonly key?: string;
  readonly context?: readonly string[];
  readonly canEdit: boolean;
}

/** A rule from the CLI's words: `key StartsWith payments.`, `value ContainsAny Development,Test`, `value Resolves Production;*`. */
export function ruleWords(target: string, match: string, text: string, canEdit: boolean): RuleFields {
  if (target === 'key') return { match, key: text, canEdit };
  if (target === 'value') {
    const items = (match === 'Resolves' || match === 'DoesNotResolve' ? text.split(';') : text.split(',')).map(
      (item) => item.trim() || '*',
    );
    return { match, context: items, canEdit };
  }
  throw new ServiceError('invalid_argument', `a rule targets key or value, not ${target}`);
}

/** The rule the fields describe, checked against a repository of `levels` levels. */
export function ruleOf(fields: RuleFields, levels: number): AccessRule {
  const { match, key, context, canEdit } = fields;
  let rule: AccessRule;
  if (key !== undefined && context !== undefined)
    throw new ServiceError('invalid_argument', 'a rule targets a key or a context, not both');
  if (key !== undefined) {
    if (!isKeyMatch(match))
      throw new ServiceError(
        'invalid_argument',
        `a key rule matches by Is, StartsWith, EndsWith or Contains, not ${match}`,
      );
    rule = { match, key, canEdit };
  } else if (context !== undefined) {
    if (!isValueMatch(match))
      throw new ServiceError(
        'invalid_argument',
        `a value rule matches by Resolves, DoesNotResolve, ContainsAny, ContainsAll or DoesNotContain, not ${match}`,
      );
    rule = { match, context: [...context], canEdit };
  } else {
    throw new ServiceError('invalid_argument', 'a rule targets a key (key) or values (context)');
  }
  const problem = ruleProblem(rule, levels);
  if (problem) throw new ServiceError('invalid_argument', problem);
  return rule;
}

/** A rule set's name, checked before the repository is looked up (and before it becomes a URL segment). */
export function checkRuleSetName(name: string): void {
  const problem = nameProblem('rule set name', name);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

/** A priority as the CLI or a URL gives it. */
export function priorityOf(text: string, what = 'the priority'): number {
  if (!/^\d{1,6}$/.test(text))
    throw new ServiceError('invalid_argument', `${what} is a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Adds a rule at a priority (1 = first; default last). */
export async function addRule(
  repository: GitRepository,
  name: string,
  rule: AccessRule,
  priority?: number,
): Promise<{ ruleSet: RuleSet; commit: string }> {
  let updated: RuleSet | undefined;
  const commit = await changeSets(repository, `Add a rule to rule set ${name}`, (sets, base) => {
    const set = requireSet(base, repository, name);
    if (set.rules.length >= MAX_RULES)
      throw new ServiceError('invalid_argument', `a rule set holds at most ${MAX_RULES} rules`);
    const at = priority === undefined ? set.rules.length : checkPriority(priority, set.rules.length + 1) - 1;
    const rules = [...set.rules];
    rules.splice(at, 0, rule);
    updated = { ...set, rules };
    return replace(sets, set, updated);
  });
  return { ruleSet: updated!, commit };
}

function checkPriority(priority: number, count: number): number {
  if (!Number.isInteger(priority) || priority < 1 || priority > count) {
    throw new ServiceError('invalid_argument', `a priority is a whole number from 1 to ${count}, got ${priority}`);
  }
  return priority;
}

export async function moveRule(
  repository: GitRepository,
  name: string,
  from: number,
  to: number,
): Promise<{ ruleSet: RuleSet; commit: string }> {
  let updated: RuleSet | undefined;
  const commit = await changeSets(repository, `Move rule ${from} of rule set ${name} to ${to}`, (sets, base) => {
    const set = requireSet(base, repository, name);
    const rules = [...set.rules];
    const [rule] = rules.splice(checkPriority(from, rules.length) - 1, 1);
    rules.splice(checkPriority(to, set.rules.length) - 1, 0, rule);
    updated = { ...set, rules };
    return replace(sets, set, updated);
  });
  return { ruleSet: updated!, commit };
}

export async function deleteRule(
  repository: GitRepository,
  name: string,
  priority: number,
): Promise<{ ruleSet: RuleSet; commit: string }> {
  let updated: RuleSet | undefined;
  const commit = await changeSets(repository, `Delete rule ${priority} of rule set ${name}`, (sets, base) => {
    const set = requireSet(base, repository, name);
    const rules = [...set.rules];
    rules.splice(checkPriority(priority, rules.length) - 1, 1);
    updated = { ...set, rules };
    return replace(sets, set, updated);
  });
  return { ruleSet: updated!, commit };
}

export async function listRuleSets(repository: GitRepository): Promise<readonly RuleSet[]> {
  return (await repository.headSnapshot()).ruleSets;
}
