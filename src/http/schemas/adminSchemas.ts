/**
 * The shapes of the admin API's bodies and answers, in zod: the routes check request
 * bodies with them, and the OpenAPI description (openapi.ts) is generated from them.
 */
import { z } from 'zod';
import { schemaDocumentShape } from '../../layout/schemaLayout.js';

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
});

export const unreadableRecord = z.object({
  account: z.string(),
  name: z.string(),
  error: z.enum(['repository_content_invalid', 'repository_unreadable']),
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

/** Every error answer. */
export const errorBody = z.object({
  error: z.string().describe('a code: bad_request, unauthorized, forbidden, not_found, conflict, …'),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  file: z.string().optional(),
  commit: z.string().optional(),
});

export const schemasAnswer = z.object({ schemas: schemaDocumentShape });
export const schemasBody = z.strictObject({ schemas: schemaDocumentShape, comment: z.string().optional() });
export const schemasChange = z.object({ commit: z.string(), outcome: z.enum(['applied', 'unchanged']) });

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
