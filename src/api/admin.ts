/**
 * The shapes of the admin API's bodies and answers, in zod: the routes check request bodies with
 * them, the admin client (src/client/admin.ts) checks answers with them, and the OpenAPI
 * description is generated from them.
 */
import * as z from 'zod';
import { KEY_MATCHES, VALUE_MATCHES } from '../domain/accessRules.js';
import { schemaDocumentShape } from '../domain/schemaDocumentShape.js';
import { dryRunSchema } from './answers.js';

const flag = z.boolean().optional();

export const newRepositoryBody = z.strictObject({
  account: z.string().describe('account name'),
  name: z.string().describe('repository name'),
  context: z.array(z.string()).describe('context level names, widest first'),
  description: z.string().optional(),
  isPrivate: flag,
  isPersonal: flag,
  accessControlsEnabled: flag,
  vdtEnabled: flag.describe('value data types (default true)'),
  securityEnabled: flag.describe('security groups (default true)'),
  contextGroupsEnabled: flag,
  tokenFreePush: flag,
  tokenFreePull: flag,
});

export const repositoryRecord = z.object({
  account: z.string(),
  name: z.string(),
  isPrivate: z.boolean(),
  isPersonal: z.boolean(),
  description: z.string().optional(),
  created: z.string(),
  accessControlsEnabled: z.boolean(),
  vdtEnabled: z.boolean(),
  securityEnabled: z.boolean(),
  contextGroupsEnabled: z.boolean(),
  keyCount: z.number().int(),
  valueCount: z.number().int(),
  userCount: z.number().int(),
  context: z.array(z.string()),
  requiredApprovals: z.array(z.object({ context: z.string(), approvals: z.number().int() })).optional(),
  alias: z.string().optional(),
});

export const unreadableRecord = z.object({
  account: z.string(),
  name: z.string(),
  error: z.enum(['repository_content_invalid', 'repository_name_conflict', 'repository_unreadable']),
  message: z.string(),
  file: z.string().optional(),
  commit: z.string().optional(),
});

export const listingRecord = z.union([repositoryRecord, unreadableRecord]);

export const listing = z.object({ records: z.array(repositoryRecord), unreadable: z.array(unreadableRecord) });

export const settingsChangeBody = z.strictObject({
  description: z.string().optional(),
  isPrivate: flag,
  isPersonal: flag,
  accessControlsEnabled: flag,
  vdtEnabled: flag,
  securityEnabled: flag,
  contextGroupsEnabled: flag,
  tokenFreePush: flag,
  tokenFreePull: flag,
  requiredApprovals: z
    .array(z.strictObject({ context: z.string(), approvals: z.number().int() }))
    .optional()
    .describe(
      'contexts whose changes need an approved change request (docs/changes.md): each a context pattern and the approvals it needs; [] removes them all',
    ),
  alias: z
    .string()
    .nullable()
    .optional()
    .describe(
      "another name of the repository, read as the Spring application (docs/spring-cloud-config.md): 1 to 100 letters and digits joined by single '-' or '_', unique on the server (409 naming the repository that has it); null removes it",
    ),
});

export const deletedRepository = z.object({ repository: z.string(), revokedTokens: z.number().int() });

export const newTokenBody = z.strictObject({
  label: z.string().optional().describe('label of the token (else token-N)'),
  expires: z.string().optional().describe('ISO 8601 instant when the token stops working'),
  forceKeyPush: flag.describe('the token may write keys whose push flag is false'),
  securityGroup: z.string().optional().describe('the security group the token unlocks on its own'),
  password: z.string().optional().describe("that group's password"),
  readOnly: flag.describe('the token may read but never push, revert or restore'),
  ruleSet: z
    .string()
    .optional()
    .describe('the access rule set the token is assigned to (applies with access controls on)'),
});

export const createdToken = z.object({
  token: z.string().describe('the client token, shown only this once'),
  label: z.string(),
  repository: z.string(),
});

export const tokenInfo = z.object({
  label: z.string(),
  created: z.string(),
  expires: z.string().nullable(),
  forceKeyPush: z.boolean(),
  securityGroups: z.array(z.string()),
  readOnly: z.boolean(),
  ruleSet: z.string().nullable(),
  revoked: z.string().nullable(),
  active: z.boolean(),
});

export const revokedToken = z.object({ label: z.string(), repository: z.string() });

export const newTagBody = z.strictObject({ name: z.string(), comment: z.string().optional() });

export const tagRecord = z.object({ name: z.string(), commitId: z.string(), created: z.string(), message: z.string() });

export const deletedTag = z.object({ tag: z.string(), repository: z.string() });

export const newGroupBody = z.strictObject({ name: z.string(), password: z.string().describe('8 to 64 characters') });

export const groupCommit = z.object({ name: z.string(), commit: z.string() });

export const groupInfo = z.object({ name: z.string(), keys: z.number().int(), files: z.number().int() });

export const passwordChangeBody = z.strictObject({ current: z.string(), new: z.string() });

export const deletedGroup = z.object({ name: z.string(), commit: z.string(), repository: z.string() });

export const revertBody = z.strictObject({
  commit: z.string().describe('full id of the commit to undo'),
  comment: z.string().optional(),
});

export const restoreBody = z.strictObject({
  to: z.string().describe('commit id, tag or ISO 8601 date'),
  comment: z.string().optional(),
  securityGroup: z.string().optional().describe('a group whose secured keys and files the restore may change'),
  password: z.string().optional().describe("that group's password"),
});

export const rollbackResult = z.object({ commit: z.string(), outcome: z.enum(['applied', 'unchanged']) });
/** A revert's or restore's answer: the commit made, or with `Dry-Run: true` what it would do. */
export const rollbackOrPreview = z.union([rollbackResult, dryRunSchema]);

export const schemasAnswer = z.object({ schemas: schemaDocumentShape });
export const schemasBody = z.strictObject({ schemas: schemaDocumentShape, comment: z.string().optional() });
export const schemasChange = z.object({ commit: z.string(), outcome: z.enum(['applied', 'unchanged']) });
/** The schemas POST's answer: the change made, or with `Dry-Run: true` what it would do. */
export const schemasChangeOrPreview = z.union([schemasChange, dryRunSchema]);

/** The read record of one repository (GET /rest/clients/{account}/{repository}). */
export const readRecordAnswer = z.object({
  repository: z.string(),
  clients: z.array(
    z.object({
      application: z.string().describe('the Application-Name the reader sent, or - for none'),
      context: z.string(),
      commit: z.string().describe('the commit last served to this application and context'),
      lastRead: z.string().describe('ISO 8601 instant of the last read'),
      reads: z.number().int(),
    }),
  ),
});

// ---- access rule sets, context groups and replication tokens ----

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

/** A key rule (matched on the key's name) or a value rule (matched on the value's context). */
export const accessRule = z.union([
  z.object({ match: z.enum(KEY_MATCHES), key: z.string(), canEdit: z.boolean() }),
  z.object({ match: z.enum(VALUE_MATCHES), context: z.array(z.string()), canEdit: z.boolean() }),
]);

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

// ---- webhooks ----

export const webhookInfo = z.object({ id: z.string(), repository: z.string(), url: z.string(), created: z.string() });
export const newWebhookBody = z.strictObject({
  url: z.string().describe('http or https URL receiving a POST after each commit'),
  secret: z
    .string()
    .describe('16 to 256 characters; signs each body (X-Cfghub-Signature-256); stored sealed, never shown'),
});
export const deliveryRecord = z.object({
  id: z.string(),
  hook: z.string(),
  repository: z.string(),
  event: z.literal('commit'),
  commit: z.string(),
  status: z.enum(['queued', 'in-flight', 'retrying', 'delivered', 'failed', 'dropped']),
  attempts: z.number().int(),
  lastStatus: z.number().int().optional(),
  lastError: z.string().optional(),
  created: z.string(),
  lastAttempt: z.string().optional(),
  nextAttempt: z.string().optional(),
  redeliveryOf: z.string().optional(),
});

/** An answer taken as it is (AdminClient.request, for a route without its own method). */
export const anyAnswer = z.unknown();
