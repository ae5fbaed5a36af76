/**
 * Rule sets, context groups and replication tokens through a server's admin API: the
 * remote side of AccessAdministration (src/service/accessAdministration.ts). Every name that
 * becomes a URL segment is checked here first, by the same checks the folder runs first, so a
 * malformed one is refused alike both ways (and `..` never reaches a URL).
 */
import type { RuleSet } from '../../domain/accessRules.js';
import type { ContextGroup } from '../../domain/contextGroups.js';
import {
  checkSwitches,
  checkTokenLabel,
  type AccessAdministration,
  type RuleSetChange,
  type RuleSetSwitches,
} from '../../service/admin/accessAdministration.js';
import { checkRuleSetName, type RuleFields } from '../../service/access/accessRuleSetCommands.js';
import { checkGroupWords } from '../../service/access/contextGroupCommands.js';
import { AdminApi } from './adminApi.js';

export class RemoteAccessAdministration extends AdminApi implements AccessAdministration {
  listRuleSets(fullName: string): Promise<readonly RuleSet[]> {
    return this.call((c) => c.listRuleSets(fullName));
  }

  createRuleSet(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call((c) => c.createRuleSet(fullName, { name: set, ...switches }));
  }

  setRuleSetSwitches(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    checkSwitches(switches);
    return this.call((c) => c.setRuleSetSwitches(fullName, set, switches));
  }

  deleteRuleSet(fullName: string, set: string): Promise<{ commit: string }> {
    checkRuleSetName(set);
    return this.call((c) => c.deleteRuleSet(fullName, set));
  }

  addRule(fullName: string, set: string, rule: RuleFields, priority?: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    const { context, ...fields } = rule;
    return this.call((c) =>
      c.addRule(fullName, set, {
        ...fields,
        ...(context === undefined ? {} : { context: [...context] }),
        ...(priority === undefined ? {} : { priority }),
      }),
    );
  }

  moveRule(fullName: string, set: string, from: number, to: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call((c) => c.moveRule(fullName, set, from, to));
  }

  deleteRule(fullName: string, set: string, priority: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call((c) => c.deleteRule(fullName, set, priority));
  }

  listContextGroups(fullName: string): Promise<readonly ContextGroup[]> {
    return this.call((c) => c.listContextGroups(fullName));
  }

  createContextGroup(
    fullName: string,
    level: string,
    group: string,
    members: readonly string[],
  ): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return this.call((c) => c.createContextGroup(fullName, { level, name: group, members: [...members] }));
  }

  addGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return this.call((c) => c.addGroupMember(fullName, level, group, member));
  }

  removeGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return this.call((c) => c.removeGroupMember(fullName, level, group, member));
  }

  deleteContextGroup(fullName: string, level: string, group: string): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return this.call((c) => c.deleteContextGroup(fullName, level, group));
  }

  createReplicationToken(label?: string): Promise<{ token: string; label: string }> {
    return this.call((c) => c.createReplicationToken(label === undefined ? {} : { label }));
  }

  revokeReplicationToken(label: string): Promise<{ label: string }> {
    checkTokenLabel(label);
    return this.call((c) => c.revokeReplicationToken(label));
  }
}
