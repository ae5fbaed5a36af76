/**
 * The administration of access rule sets and context groups and of
 * replication tokens (every administrative command works on a folder and through a
 * server). Part of the one Administration (administration.ts): the CLI runs it on a folder, the
 * admin API runs it on the server's folder, and src/cli/remote/accessAdminClient.ts sends it to a server.
 * Names that become URL segments are checked first, before the repository is looked up, so a
 * malformed one is refused alike both ways.
 */
import type { RuleSet } from '../../domain/accessRules.js';
import type { ContextGroup } from '../../domain/contextGroups.js';
import { nameProblem } from '../../domain/names.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import {
  addRule,
  checkRuleSetName,
  createRuleSet,
  deleteRule,
  deleteRuleSet,
  listRuleSets,
  moveRule,
  ruleOf,
  setRuleSetSwitches,
  type RuleFields,
} from '../access/accessRuleSetCommands.js';
import {
  addGroupMember,
  checkGroupWords,
  createContextGroup,
  deleteContextGroup,
  listContextGroups,
  removeGroupMember,
} from '../access/contextGroupCommands.js';
import { ServiceError } from '../errors.js';
import { parseFullName, requireRepository } from './repositories.js';
import type { TokenService } from './tokens.js';

export interface RuleSetSwitches {
  readonly stopOnFirstMatch?: boolean;
  readonly unmatchedEditable?: boolean;
}

export type RuleSetChange = { ruleSet: RuleSet; commit: string };

export interface AccessAdministration {
  listRuleSets(fullName: string): Promise<readonly RuleSet[]>;
  createRuleSet(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange>;
  /** At least one switch. */
  setRuleSetSwitches(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange>;
  /** Refused while a token is assigned to the set. */
  deleteRuleSet(fullName: string, set: string): Promise<{ commit: string }>;
  /** At `priority` (1 = first), else last. */
  addRule(fullName: string, set: string, rule: RuleFields, priority?: number): Promise<RuleSetChange>;
  moveRule(fullName: string, set: string, from: number, to: number): Promise<RuleSetChange>;
  deleteRule(fullName: string, set: string, priority: number): Promise<RuleSetChange>;
  listContextGroups(fullName: string): Promise<readonly ContextGroup[]>;
  createContextGroup(
    fullName: string,
    level: string,
    group: string,
    members: readonly string[],
  ): Promise<{ commit: string }>;
  addGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }>;
  removeGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }>;
  deleteContextGroup(fullName: string, level: string, group: string): Promise<{ commit: string }>;
  /** A replica's token: for every repository, so named by no repository. */
  createReplicationToken(label?: string): Promise<{ token: string; label: string }>;
  revokeReplicationToken(label: string): Promise<{ label: string }>;
}

export function checkSwitches(switches: RuleSetSwitches): void {
  if (switches.stopOnFirstMatch === undefined && switches.unmatchedEditable === undefined) {
    throw new ServiceError('invalid_argument', 'a rule set change needs stopOnFirstMatch or unmatchedEditable');
  }
}

/** A token label, checked before it is looked up (and before it becomes a URL segment). */
export function checkTokenLabel(label: string): void {
  const problem = nameProblem('token label', label);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

/** The access part of LocalAdministration, which extends it. */
export class LocalAccessAdministration implements AccessAdministration {
  constructor(
    protected readonly registry: RepositoryRegistry,
    protected readonly tokens: TokenService,
  ) {}

  protected repository(fullName: string): GitRepository {
    const { account, name } = parseFullName(fullName);
    return requireRepository(this.registry, account, name);
  }

  listRuleSets(fullName: string): Promise<readonly RuleSet[]> {
    return listRuleSets(this.repository(fullName));
  }

  createRuleSet(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return createRuleSet(this.repository(fullName), set, switches);
  }

  setRuleSetSwitches(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    checkSwitches(switches);
    return setRuleSetSwitches(this.repository(fullName), set, switches);
  }

  deleteRuleSet(fullName: string, set: string): Promise<{ commit: string }> {
    checkRuleSetName(set);
    const repository = this.repository(fullName);
    return deleteRuleSet(repository, set, this.tokens.assignedTo(repository, set));
  }

  async addRule(fullName: string, set: string, fields: RuleFields, priority?: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    const repository = this.repository(fullName);
    const rule = ruleOf(fields, (await repository.headSnapshot()).settings.levels.length);
    return addRule(repository, set, rule, priority);
  }

  moveRule(fullName: string, set: string, from: number, to: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return moveRule(this.repository(fullName), set, from, to);
  }

  deleteRule(fullName: string, set: string, priority: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return deleteRule(this.repository(fullName), set, priority);
  }

  listContextGroups(fullName: string): Promise<readonly ContextGroup[]> {
    return listContextGroups(this.repository(fullName));
  }

  createContextGroup(
    fullName: string,
    level: string,
    group: string,
    members: readonly string[],
  ): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return createContextGroup(this.repository(fullName), level, group, members);
  }

  addGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return addGroupMember(this.repository(fullName), level, group, member);
  }

  removeGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return removeGroupMember(this.repository(fullName), level, group, member);
  }

  deleteContextGroup(fullName: string, level: string, group: string): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return deleteContextGroup(this.repository(fullName), level, group);
  }

  createReplicationToken(label?: string): Promise<{ token: string; label: string }> {
    return this.tokens.createReplication(label);
  }

  async revokeReplicationToken(label: string): Promise<{ label: string }> {
    checkTokenLabel(label);
    await this.tokens.revokeReplication(label);
    return { label };
  }
}
