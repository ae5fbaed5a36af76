/**
 * The answers of the read endpoints (pull, info, keyData, export) and of history and diff, as zod
 * schemas: the one definition of each shape. The service builds its answers with the types
 * inferred from them, the client and the console parse answers with them, and the OpenAPI
 * document describes the endpoints with them. Objects are loose: a field the server adds later
 * passes through an older client's check.
 */
import * as z from 'zod';

/**
 * How a value or file sealed in a security group is marked for a reader who did not unlock the
 * group: `encryption` is the group's name (as ConfigHub writes it), `cipher` the algorithm.
 */
const sealed = {
  encryption: z
    .union([z.boolean(), z.string()])
    .optional()
    .describe("the security group's name, when the value or file is sealed for this reader"),
  cipher: z.string().optional().describe('the cipher of a sealed value or file'),
};

// ---- pull ----------------------------------------------------------------------------------

export const pulledPropertySchema = z.looseObject({
  type: z.string().optional().describe('the value data type, when not Text'),
  deprecated: z.boolean().optional(),
  comment: z.string().optional().describe('the key readme (Include-Comments)'),
  ...sealed,
  /** Text; for List and Map keys the parsed JSON; for a key sealed for this reader, its ciphertext. */
  val: z.unknown(),
  context: z.array(z.string()).optional().describe("the value's context (Include-Value-Context)"),
});
export type PulledProperty = z.infer<typeof pulledPropertySchema>;

export const pulledFileSchema = z.looseObject({
  ...sealed,
  content: z.string(),
  'content-type': z.string().optional(),
  unresolved: z
    .array(z.string())
    .optional()
    .describe('template references to keys that do not resolve for the context'),
  encrypted: z.array(z.string()).optional().describe('template references to keys sealed for this reader'),
});
export type PulledFile = z.infer<typeof pulledFileSchema>;

export const pullAnswerSchema = z.looseObject({
  files: z.record(z.string(), pulledFileSchema).optional(),
  properties: z.record(z.string(), pulledPropertySchema).optional(),
  account: z.string(),
  repo: z.string(),
  context: z.string(),
  repoDate: z
    .string()
    .optional()
    .describe('the date of the commit read, for a read of the past (Tag, Repository-Date)'),
  generatedOn: z.string().optional(),
});
export type PullAnswerBody = z.infer<typeof pullAnswerSchema>;

// ---- info ----------------------------------------------------------------------------------

export const listedFileSchema = z.looseObject({
  name: z.string(),
  path: z.string(),
  context: z.string(),
  active: z.boolean(),
  secureGroup: z.string().optional(),
});
export type ListedFile = z.infer<typeof listedFileSchema>;

export const listedTagSchema = z.looseObject({
  name: z.string(),
  readme: z.string(),
  ts: z.number(),
  date: z.string(),
});
export type ListedTag = z.infer<typeof listedTagSchema>;

export const infoAnswerSchema = z.looseObject({
  account: z.string(),
  repository: z.string(),
  generatedOn: z.string().optional(),
  date: z.string().optional().describe('the date of the commit read, for a read of the past'),
  context: z.array(z.string()).describe('the context levels, widest first'),
  contextElements: z.record(z.string(), z.array(z.string())).optional(),
  contextGroups: z.record(z.string(), z.record(z.string(), z.array(z.string()))).optional(),
  files: z.array(listedFileSchema).optional(),
  tags: z.array(listedTagSchema).optional(),
});
export type InfoAnswer = z.infer<typeof infoAnswerSchema>;

// ---- keyData and export --------------------------------------------------------------------

export const keyFieldsSchema = z.looseObject({
  key: z.string(),
  readme: z.string(),
  deprecated: z.boolean(),
  vdt: z.string(),
  push: z.boolean(),
  securityGroup: z.string().optional(),
});
export type KeyFields = z.infer<typeof keyFieldsSchema>;

export const exportedValueSchema = z.looseObject({
  context: z.string(),
  value: z.string().nullable(),
  active: z.boolean(),
});
export type ExportedValue = z.infer<typeof exportedValueSchema>;

export const exportedKeySchema = keyFieldsSchema.extend({ values: z.array(exportedValueSchema).optional() });
export type ExportedKey = z.infer<typeof exportedKeySchema>;

export const exportedFileSchema = z.looseObject({
  file: z.string(),
  context: z.string(),
  content: z.string(),
  active: z.boolean(),
  securityGroup: z.string().optional(),
});
export type ExportedFile = z.infer<typeof exportedFileSchema>;

export const exportAnswerSchema = z.looseObject({ data: z.array(z.union([exportedKeySchema, exportedFileSchema])) });
export type ExportAnswer = z.infer<typeof exportAnswerSchema>;

// ---- history and diff ----------------------------------------------------------------------

export const changeSchema = z.enum(['added', 'modified', 'deleted']);

const valueStateSchema = z.looseObject({ value: z.string().nullable(), active: z.boolean() });

export const valueChangeSchema = z.looseObject({
  context: z.string(),
  change: changeSchema,
  before: valueStateSchema.optional(),
  after: valueStateSchema.optional(),
});

export const keyChangeSchema = z.looseObject({
  key: z.string(),
  change: changeSchema,
  fields: z.record(z.string(), z.looseObject({ before: z.unknown(), after: z.unknown() })).optional(),
  values: z.array(valueChangeSchema).optional(),
});
export type KeyChangeAnswer = z.infer<typeof keyChangeSchema>;

export const fileChangeSchema = z.looseObject({
  path: z.string(),
  context: z.string(),
  change: changeSchema,
  active: z.boolean().optional(),
});
export type FileChangeAnswer = z.infer<typeof fileChangeSchema>;

const changesShape = {
  keys: z.array(keyChangeSchema),
  files: z.array(fileChangeSchema),
  settings: z.boolean().optional().describe('true when the repository settings changed'),
  other: z.array(z.string()).optional().describe("root entries besides cfghub's own that changed"),
  problems: z.array(z.string()).optional().describe('content that breaks the layout rules'),
};

export const commitSchema = z.looseObject({
  id: z.string(),
  date: z.string(),
  comment: z.string(),
  applicationName: z.string().optional(),
  token: z.string().optional(),
  author: z.looseObject({ name: z.string(), email: z.string() }),
  ...changesShape,
});
export type HistoryCommit = z.infer<typeof commitSchema>;

export const historySchema = z.looseObject({
  account: z.string(),
  repository: z.string(),
  head: z.string(),
  commits: z.array(commitSchema),
  nextBefore: z.string().optional().describe('the Before of the next page; absent on the last'),
});
export type HistoryAnswer = z.infer<typeof historySchema>;

/** What a context's readers see change: the entries of two pull answers, added, changed (before and after) and removed. */
const changedSchema = <T extends z.ZodType>(entry: T) =>
  z.looseObject({
    added: z.record(z.string(), entry),
    changed: z.record(z.string(), z.looseObject({ before: entry, after: entry })),
    removed: z.record(z.string(), entry),
  });

export const resolvedDiffSchema = z.looseObject({
  context: z.string(),
  properties: changedSchema(pulledPropertySchema),
  files: changedSchema(pulledFileSchema),
});
export type ResolvedDiffAnswer = z.infer<typeof resolvedDiffSchema>;

export const diffSchema = z.looseObject({
  account: z.string(),
  repository: z.string(),
  from: z.string(),
  to: z.string(),
  ...changesShape,
  resolved: resolvedDiffSchema.optional(),
});
export type DiffAnswer = z.infer<typeof diffSchema>;

// ---- explain -------------------------------------------------------------------------------

export const levelMatchSchema = z.looseObject({
  level: z.string(),
  item: z.string(),
  matches: z.enum(['item', 'group', 'wildcard', 'none']),
  group: z.looseObject({ members: z.array(z.string()) }).optional(),
  weight: z.number(),
});
export type LevelMatch = z.infer<typeof levelMatchSchema>;

export const candidateSchema = z.looseObject({
  context: z.string(),
  value: z.string().nullable().optional(),
  encryption: z.string().optional(),
  active: z.boolean(),
  qualifies: z.boolean(),
  weight: z.number().nullable(),
  why: z.string(),
  levels: z.array(levelMatchSchema),
});
export type Candidate = z.infer<typeof candidateSchema>;

export const writeAnswerSchema = z.looseObject({
  token: z.string(),
  ruleSet: z.string().optional(),
  canChange: z.boolean(),
  rule: z.unknown().optional(),
  decidedBy: z.string(),
});
export type WriteAnswer = z.infer<typeof writeAnswerSchema>;

export const explainAnswerSchema = z.looseObject({
  account: z.string().optional(),
  repository: z.string().optional(),
  head: z.string().optional(),
  key: z.string(),
  context: z.string(),
  contextGroupsEnabled: z.boolean(),
  exists: z.boolean(),
  resolved: z.looseObject({ context: z.string(), weight: z.number(), why: z.string() }).nullable(),
  values: z.array(candidateSchema).optional(),
  write: writeAnswerSchema.optional(),
});
export type ExplainAnswer = z.infer<typeof explainAnswerSchema>;

const shownValueSchema = z.looseObject({
  val: z.unknown().optional(),
  type: z.string().optional(),
  encryption: z.string().optional(),
  truncated: z.literal(true).optional(),
});
const shownFileSchema = z.looseObject({
  content: z.string().optional(),
  encryption: z.string().optional(),
  truncated: z.literal(true).optional(),
});

/** What a push would do (`Dry-Run: true`), context by context; docs/schemas.md. */
export const dryRunSchema = z.looseObject({
  wouldCommit: z.boolean(),
  outcome: z.enum(['applied', 'unchanged', 'refused']),
  refusal: z.string().optional(),
  denied: z.boolean().optional(),
  head: z.string(),
  changed: z.looseObject({
    keys: z.array(z.string()),
    files: z.array(z.looseObject({ path: z.string(), context: z.string() })),
    schemas: z.literal(true).optional(),
  }),
  contexts: z.looseObject({
    considered: z.number(),
    changed: z.number(),
    listed: z.array(
      z.looseObject({
        context: z.string(),
        keys: z.array(
          z.looseObject({ key: z.string(), before: shownValueSchema.optional(), after: shownValueSchema.optional() }),
        ),
        files: z.array(
          z.looseObject({ path: z.string(), before: shownFileSchema.optional(), after: shownFileSchema.optional() }),
        ),
      }),
    ),
    more: z.number(),
  }),
});
export type DryRunAnswer = z.infer<typeof dryRunSchema>;

const reviewEvent = z.looseObject({ by: z.string(), at: z.string() });
export const changeRequestSchema = z.looseObject({
  id: z.number(),
  title: z.string(),
  author: z.string(),
  created: z.string(),
  status: z.enum(['open', 'applied', 'closed']),
  approvals: z.array(reviewEvent),
  comment: z.string().optional(),
  commit: z.string().optional(),
  base: z.string().optional(),
  applied: reviewEvent.extend({ commit: z.string() }).optional(),
  closed: reviewEvent.optional(),
  requiredApprovals: z
    .looseObject({ rules: z.array(z.string()), needed: z.number(), approved: z.boolean() })
    .optional(),
  preview: dryRunSchema.optional(),
});
export type ChangeRequestAnswer = z.infer<typeof changeRequestSchema>;
export const changeListSchema = z.looseObject({ changes: z.array(changeRequestSchema) });
export const appliedChangeSchema = z.looseObject({ change: changeRequestSchema, commit: z.string() });
