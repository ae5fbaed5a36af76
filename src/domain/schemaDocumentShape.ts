/**
 * The shape of a schemas document in zod: what the layout reads from schemas.yaml, and what a
 * push's and the admin API's `schemas` field carries (src/api), so both take the same document.
 */
import * as z from 'zod';
import { FILE_FORMATS, SCHEMA_LIMITS } from './schemas.js';

const jsonSchema = z.union([z.boolean(), z.record(z.string(), z.unknown())]);

export const schemaDocumentShape = z.strictObject({
  keys: z
    .array(z.strictObject({ key: z.string().min(1), schema: jsonSchema }))
    .max(SCHEMA_LIMITS.keySchemas)
    .default([]),
  files: z
    .array(z.strictObject({ path: z.string().min(1), format: z.enum(FILE_FORMATS), schema: jsonSchema.optional() }))
    .max(SCHEMA_LIMITS.fileSchemas)
    .default([]),
  rules: z
    .array(
      z.strictObject({
        context: z.string().min(1),
        resolves: z.array(z.string().min(1)).min(1).max(SCHEMA_LIMITS.keysPerRule),
      }),
    )
    .max(SCHEMA_LIMITS.rules)
    .default([]),
});
