/**
 * The schemas document, in the layout's style (see layout.ts, accessLayout.ts): YAML at the root of
 * the tree, written only when not empty, read strictly.
 *
 *   schemas.yaml    keys: [{key, schema}], files: [{path, format, schema?}], rules: [{context, resolves}]
 *
 * JSON Schemas are kept as YAML data (a mapping, or true/false). What the entries mean, and what a
 * write must satisfy, is domain/schemas.ts's and service/schemas/'s business.
 */
import { z } from 'zod';
import { FILE_FORMATS, SCHEMA_LIMITS, type SchemaDocument } from '../domain/schemas.js';
import { parseYaml, stringify } from './layout.js';
import { LayoutError } from './errors.js';

export const SCHEMAS_FILE = 'schemas.yaml';

const jsonSchema = z.union([z.boolean(), z.record(z.string(), z.unknown())]);

/** The document's shape, also the shape of a push's or the admin API's `schemas` field. */
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

export function serializeSchemas(doc: SchemaDocument): string {
  const body: Record<string, unknown> = {};
  if (doc.keys.length) body.keys = doc.keys;
  if (doc.files.length) body.files = doc.files;
  if (doc.rules.length) body.rules = doc.rules;
  return `# Schemas: what values, rendered files and contexts must satisfy for a write to be accepted.\n# See docs/schemas.md.\n${stringify(body)}`;
}

export function parseSchemas(text: string): SchemaDocument {
  if (Buffer.byteLength(text) > SCHEMA_LIMITS.documentBytes)
    throw new LayoutError(`${SCHEMAS_FILE} is larger than ${SCHEMA_LIMITS.documentBytes} bytes`);
  return parseYaml(text, schemaDocumentShape, SCHEMAS_FILE);
}
