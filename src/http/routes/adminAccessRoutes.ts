/**
 * The admin API's routes for rule sets and context groups (`cfghub rules …` and
 * `cfghub context-group …`) and replication tokens (`token create|revoke --replication`): admin
 * rows the route table takes beside ADMIN_ROUTES (adminRoutes.ts runs them all alike), so they
 * get the same admin token check, body checks, errors, log line and OpenAPI description. Each
 * change is a commit made by the same operation as on the folder.
 */
import type { z } from 'zod';
import { priorityOf } from '../../service/access/accessRuleSetCommands.js';
import * as s from '../../api/admin.js';
import { fullName, REPO, type AdminRoute } from './adminRoutes.js';

const SET = `${REPO}/rule-sets/:set`;
const GROUP = `${REPO}/context-groups/:level/:group`;

export const ACCESS_ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: 'get',
    path: `${REPO}/rule-sets`,
    summary: 'the access rule sets and their rules, in priority order (cfghub rules list)',
    status: 200,
    answer: s.ruleSet.array(),
    errors: [404, 409],
    run: (admin, p) => admin.listRuleSets(fullName(p)),
  },
  {
    method: 'post',
    path: `${REPO}/rule-sets`,
    summary: 'create an empty rule set, as a commit (cfghub rules create)',
    body: s.newRuleSetBody,
    status: 201,
    answer: s.ruleSetChange,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newRuleSetBody>) => {
      const { name, ...switches } = b;
      return admin.createRuleSet(fullName(p), name, switches);
    },
  },
  {
    method: 'patch',
    path: SET,
    summary: "change a rule set's switches, as a commit (cfghub rules set)",
    body: s.ruleSetSwitchesBody,
    status: 200,
    answer: s.ruleSetChange,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.ruleSetSwitchesBody>) => admin.setRuleSetSwitches(fullName(p), p.set, b),
  },
  {
    method: 'delete',
    path: SET,
    summary: 'delete a rule set no token is assigned to, as a commit (cfghub rules delete)',
    status: 200,
    answer: s.commitOnly,
    errors: [404, 409],
    run: (admin, p) => admin.deleteRuleSet(fullName(p), p.set),
  },
  {
    method: 'post',
    path: `${SET}/rules`,
    summary: 'add a rule at a priority (else last), as a commit (cfghub rules add)',
    body: s.newRuleBody,
    status: 201,
    answer: s.ruleSetChange,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newRuleBody>) => {
      const { priority, ...rule } = b;
      return admin.addRule(fullName(p), p.set, rule, priority);
    },
  },
  {
    method: 'post',
    path: `${SET}/rules/:priority/move`,
    summary: 'move the rule at one priority to another, as a commit (cfghub rules move)',
    body: s.moveRuleBody,
    status: 200,
    answer: s.ruleSetChange,
    errors: [404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.moveRuleBody>) =>
      admin.moveRule(fullName(p), p.set, priorityOf(p.priority), b.to),
  },
  {
    method: 'delete',
    path: `${SET}/rules/:priority`,
    summary: 'delete the rule at a priority, as a commit (cfghub rules delete SET PRIORITY)',
    status: 200,
    answer: s.ruleSetChange,
    errors: [404, 409],
    run: (admin, p) => admin.deleteRule(fullName(p), p.set, priorityOf(p.priority)),
  },
  {
    method: 'get',
    path: `${REPO}/context-groups`,
    summary: 'the context groups with their members (cfghub context-group list)',
    status: 200,
    answer: s.contextGroup.array(),
    errors: [404, 409],
    run: (admin, p) => admin.listContextGroups(fullName(p)),
  },
  {
    method: 'post',
    path: `${REPO}/context-groups`,
    summary: 'create a context group of a level, as a commit (cfghub context-group create)',
    body: s.newContextGroupBody,
    status: 201,
    answer: s.commitOnly,
    errors: [403, 404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.newContextGroupBody>) =>
      admin.createContextGroup(fullName(p), b.level, b.name, b.members ?? []),
  },
  {
    method: 'post',
    path: `${GROUP}/members`,
    summary: 'add an item of the level to a group, as a commit (cfghub context-group add)',
    body: s.groupMemberBody,
    status: 200,
    answer: s.commitOnly,
    errors: [403, 404, 409, 415],
    run: (admin, p, b: z.infer<typeof s.groupMemberBody>) =>
      admin.addGroupMember(fullName(p), p.level, p.group, b.member),
  },
  {
    method: 'delete',
    path: `${GROUP}/members/:member`,
    summary: 'take an item out of a group, as a commit (cfghub context-group remove)',
    status: 200,
    answer: s.commitOnly,
    errors: [403, 404, 409],
    run: (admin, p) => admin.removeGroupMember(fullName(p), p.level, p.group, p.member),
  },
  {
    method: 'delete',
    path: GROUP,
    summary: 'delete a group no value or file names, as a commit (cfghub context-group delete)',
    status: 200,
    answer: s.commitOnly,
    errors: [403, 404, 409],
    run: (admin, p) => admin.deleteContextGroup(fullName(p), p.level, p.group),
  },
  {
    method: 'post',
    path: '/rest/admin/replication-tokens',
    summary: "a read replica's token, for every repository, shown once (cfghub token create --replication)",
    body: s.newReplicationTokenBody,
    status: 201,
    answer: s.createdReplicationToken,
    errors: [409, 415],
    run: (admin, _p, b: z.infer<typeof s.newReplicationTokenBody>) => admin.createReplicationToken(b.label),
  },
  {
    method: 'delete',
    path: '/rest/admin/replication-tokens/:label',
    summary: 'revoke a replication token at once (cfghub token revoke --replication)',
    status: 200,
    answer: s.revokedReplicationToken,
    errors: [404],
    run: (admin, p) => admin.revokeReplicationToken(p.label),
  },
];
