/**
 * The shapes of the server's answers as the client checks them (zod, loose: fields the server
 * adds later pass through). An answer that does not match is an error naming the field, rather
 * than an `undefined` found later in an application.
 */
import { z } from 'zod';

export const pulledPropertySchema = z.looseObject({
  /** Text; for List and Map keys the parsed JSON; for a key sealed for this caller, its ciphertext. */
  val: z.unknown(),
  type: z.string().optional(),
  deprecated: z.boolean().optional(),
  comment: z.string().optional(),
  /** True (with `cipher`) when the value is sealed in a security group the caller did not unlock. */
  encryption: z.union([z.boolean(), z.string()]).optional(),
  context: z.array(z.string()).optional(),
});

export const pulledFileSchema = z.looseObject({
  content: z.string(),
  'content-type': z.string().optional(),
  unresolved: z.array(z.string()).optional(),
  encrypted: z.array(z.string()).optional(),
  encryption: z.union([z.boolean(), z.string()]).optional(),
});

export const pullBodySchema = z.looseObject({
  account: z.string(),
  repo: z.string(),
  context: z.string(),
  generatedOn: z.string().optional(),
  repoDate: z.string().optional(),
  properties: z.record(z.string(), pulledPropertySchema).optional(),
  files: z.record(z.string(), pulledFileSchema).optional(),
});
export type PullBody = z.infer<typeof pullBodySchema>;

const changeSchema = z.enum(['added', 'modified', 'deleted']);

export const commitSchema = z.looseObject({
  id: z.string(),
  date: z.string(),
  comment: z.string(),
  applicationName: z.string().optional(),
  token: z.string().optional(),
  author: z.looseObject({ name: z.string(), email: z.string() }),
  keys: z.array(
    z.looseObject({
      key: z.string(),
      change: changeSchema,
      values: z.array(z.looseObject({ context: z.string(), change: changeSchema })).optional(),
    }),
  ),
  files: z.array(z.looseObject({ path: z.string(), context: z.string(), change: changeSchema })),
});
export type HistoryCommit = z.infer<typeof commitSchema>;

export const historySchema = z.looseObject({
  account: z.string(),
  repository: z.string(),
  head: z.string(),
  commits: z.array(commitSchema),
  nextBefore: z.string().optional(),
});
export type HistoryAnswer = z.infer<typeof historySchema>;

const changedSchema = z.looseObject({
  added: z.record(z.string(), z.unknown()),
  changed: z.record(z.string(), z.looseObject({ before: z.unknown(), after: z.unknown() })),
  removed: z.record(z.string(), z.unknown()),
});

export const diffSchema = z.looseObject({
  account: z.string(),
  repository: z.string(),
  from: z.string(),
  to: z.string(),
  keys: z.array(z.looseObject({ key: z.string(), change: changeSchema })),
  files: z.array(z.looseObject({ path: z.string(), context: z.string(), change: changeSchema })),
  resolved: z.looseObject({ context: z.string(), properties: changedSchema, files: changedSchema }).optional(),
});
export type DiffAnswer = z.infer<typeof diffSchema>;

export const exportSchema = z.looseObject({
  data: z.array(z.looseObject({ key: z.string().optional(), file: z.string().optional() })),
});

export const errorSchema = z.looseObject({ error: z.string(), message: z.string() });

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
