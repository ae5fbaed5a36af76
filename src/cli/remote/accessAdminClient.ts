/**
 * Rule sets, context groups and replication tokens through a server's admin API: the
 * remote side of AccessAdministration (src/service/admin/accessAdministration.ts), one admin API
 * call per operation (the operations' signatures are the interface's). Every name that becomes a
 * URL segment is checked here first, by the same checks the folder runs first, so a malformed one
 * is refused alike both ways (and `..` never reaches a URL).
 */
import { checkSwitches, checkTokenLabel, type AccessAdministration } from '../../service/admin/accessAdministration.js';
import { checkRuleSetName } from '../../service/access/accessRuleSetCommands.js';
import { checkGroupWords } from '../../service/access/contextGroupCommands.js';
import type { AdminApi } from './adminApi.js';

export function remoteAccessAdministration(api: AdminApi): AccessAdministration {
  return {
    listRuleSets: (fullName) => api.call((c) => c.listRuleSets(fullName)),
    createRuleSet: (fullName, set, switches) => {
      checkRuleSetName(set);
      return api.call((c) => c.createRuleSet(fullName, { name: set, ...switches }));
    },
    setRuleSetSwitches: (fullName, set, switches) => {
      checkRuleSetName(set);
      checkSwitches(switches);
      return api.call((c) => c.setRuleSetSwitches(fullName, set, switches));
    },
    deleteRuleSet: (fullName, set) => {
      checkRuleSetName(set);
      return api.call((c) => c.deleteRuleSet(fullName, set));
    },
    addRule: (fullName, set, { context, ...fields }, priority) => {
      checkRuleSetName(set);
      return api.call((c) =>
        c.addRule(fullName, set, {
          ...fields,
          ...(context === undefined ? {} : { context: [...context] }),
          ...(priority === undefined ? {} : { priority }),
        }),
      );
    },
    moveRule: (fullName, set, from, to) => {
      checkRuleSetName(set);
      return api.call((c) => c.moveRule(fullName, set, from, to));
    },
    deleteRule: (fullName, set, priority) => {
      checkRuleSetName(set);
      return api.call((c) => c.deleteRule(fullName, set, priority));
    },
    listContextGroups: (fullName) => api.call((c) => c.listContextGroups(fullName)),
    createContextGroup: (fullName, level, group, members) => {
      checkGroupWords(level, group);
      return api.call((c) => c.createContextGroup(fullName, { level, name: group, members: [...members] }));
    },
    addGroupMember: (fullName, level, group, member) => {
      checkGroupWords(level, group, member);
      return api.call((c) => c.addGroupMember(fullName, level, group, member));
    },
    removeGroupMember: (fullName, level, group, member) => {
      checkGroupWords(level, group, member);
      return api.call((c) => c.removeGroupMember(fullName, level, group, member));
    },
    deleteContextGroup: (fullName, level, group) => {
      checkGroupWords(level, group);
      return api.call((c) => c.deleteContextGroup(fullName, level, group));
    },
    createReplicationToken: (label) => api.call((c) => c.createReplicationToken(label === undefined ? {} : { label })),
    revokeReplicationToken: (label) => {
      checkTokenLabel(label);
      return api.call((c) => c.revokeReplicationToken(label));
    },
  };
}
