/**
 * Rule sets, context groups and replication tokens through a server's admin API: the
 * remote side of AccessAdministration (src/service/admin/accessAdministration.ts). Every name that
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
import { AdminApi, repoPath } from './adminApi.js';

const setPath = (fullName: string, set: string) => `${repoPath(fullName)}/rule-sets/${encodeURIComponent(set)}`;
const groupPath = (fullName: string, level: string, group: string) =>
  `${repoPath(fullName)}/context-groups/${encodeURIComponent(level)}/${encodeURIComponent(group)}`;

export class RemoteAccessAdministration extends AdminApi implements AccessAdministration {
  listRuleSets(fullName: string): Promise<readonly RuleSet[]> {
    return this.call('GET', `${repoPath(fullName)}/rule-sets`);
  }

  createRuleSet(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call('POST', `${repoPath(fullName)}/rule-sets`, { name: set, ...switches });
  }

  setRuleSetSwitches(fullName: string, set: string, switches: RuleSetSwitches): Promise<RuleSetChange> {
    checkRuleSetName(set);
    checkSwitches(switches);
    return this.call('PATCH', setPath(fullName, set), switches);
  }

  deleteRuleSet(fullName: string, set: string): Promise<{ commit: string }> {
    checkRuleSetName(set);
    return this.call('DELETE', setPath(fullName, set));
  }

  addRule(fullName: string, set: string, rule: RuleFields, priority?: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call('POST', `${setPath(fullName, set)}/rules`, {
      ...rule,
      ...(priority === undefined ? {} : { priority }),
    });
  }

  moveRule(fullName: string, set: string, from: number, to: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call('POST', `${setPath(fullName, set)}/rules/${from}/move`, { to });
  }

  deleteRule(fullName: string, set: string, priority: number): Promise<RuleSetChange> {
    checkRuleSetName(set);
    return this.call('DELETE', `${setPath(fullName, set)}/rules/${priority}`);
  }

  listContextGroups(fullName: string): Promise<readonly ContextGroup[]> {
    return this.call('GET', `${repoPath(fullName)}/context-groups`);
  }

  createContextGroup(
    fullName: string,
    level: string,
    group: string,
    members: readonly string[],
  ): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return this.call('POST', `${repoPath(fullName)}/context-groups`, { level, name: group, members });
  }

  addGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return this.call('POST', `${groupPath(fullName, level, group)}/members`, { member });
  }

  removeGroupMember(fullName: string, level: string, group: string, member: string): Promise<{ commit: string }> {
    checkGroupWords(level, group, member);
    return this.call('DELETE', `${groupPath(fullName, level, group)}/members/${encodeURIComponent(member)}`);
  }

  deleteContextGroup(fullName: string, level: string, group: string): Promise<{ commit: string }> {
    checkGroupWords(level, group);
    return this.call('DELETE', groupPath(fullName, level, group));
  }

  createReplicationToken(label?: string): Promise<{ token: string; label: string }> {
    return this.call('POST', '/rest/admin/replication-tokens', label === undefined ? {} : { label });
  }

  revokeReplicationToken(label: string): Promise<{ label: string }> {
    checkTokenLabel(label);
    return this.call('DELETE', `/rest/admin/replication-tokens/${encodeURIComponent(label)}`);
  }
}
