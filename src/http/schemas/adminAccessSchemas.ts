/**
 * Bodies and answers of the admin API's rule set, context group and replication token routes
 *, in zod: the routes check request bodies with them and the OpenAPI
 * description is generated from them.
 */
import { z } from 'zod';
import { KEY_MATCHES, VALUE_MATCHES } from '../../domain/accessRules.js';

const switchesShape = {
  stopOnFirstMatch: z
    .boolean()
    .optional()
    .describe('true (default): the first matching rule decides; false: any matching rule that denies decides'),
  unmatchedEditable: z
    .boolean()
    .optional()
    .describe('whether an element no rule matches may be changed (default false)'),
};

export const newRuleSetBody = z.strictObject({ name: z.string().describe('the rule set name'), ...switchesShape });

export const ruleSetSwitchesBody = z.strictObject(switchesShape);

export const accessRule = z.object({
  match: z.enum([...KEY_MATCHES, ...VALUE_MATCHES]),
  key: z.string().optional(),
  context: z.array(z.string()).optional(),
  canEdit: z.boolean(),
});

export const ruleSet = z.object({
  name: z.string(),
  stopOnFirstMatch: z.boolean(),
  unmatchedEditable: z.boolean(),
  rules: z.array(accessRule),
});

export const ruleSetChange = z.object({ ruleSet, commit: z.string() });

/** The match is checked by the operation (as on the folder), so its message names the kinds a key or a value rule takes. */
export const newRuleBody = z.strictObject({
  match: z.string().describe(`a key rule: ${KEY_MATCHES.join(', ')}; a value rule: ${VALUE_MATCHES.join(', ')}`),
  key: z.string().optional().describe('a key rule: the text the key name is matched with'),
  context: z
    .array(z.string())
    .optional()
    .describe('a value rule: for Resolves/DoesNotResolve one item per level ("*" = any), else the context items'),
  canEdit: z.boolean().describe('whether what the rule matches may be changed'),
  priority: z.number().int().optional().describe('where to insert it, 1 = first (else last)'),
});

export const moveRuleBody = z.strictObject({ to: z.number().int().describe('the new priority, 1 = first') });

export const commitOnly = z.object({ commit: z.string() });

export const contextGroup = z.object({ level: z.string(), name: z.string(), members: z.array(z.string()) });

export const newContextGroupBody = z.strictObject({
  level: z.string().describe('the context level the group belongs to'),
  name: z.string().describe('the group, an item of that level'),
  members: z.array(z.string()).optional().describe('items of the level'),
});

export const groupMemberBody = z.strictObject({ member: z.string().describe('an item of the level') });

export const newReplicationTokenBody = z.strictObject({
  label: z.string().optional().describe('label of the token (else replica-N)'),
});

export const createdReplicationToken = z.object({
  token: z.string().describe('the replication token, shown only this once'),
  label: z.string(),
});

export const revokedReplicationToken = z.object({ label: z.string() });
