/**
 * The schemas document, in the layout's style (see layout.ts, accessLayout.ts): YAML at the root of
 * the tree, written only when not empty, read strictly.
 *
 *   schemas.yaml    keys: [{key, schema}], files: [{path, format, schema?}], rules: [{context, resolves}]
 *
 * JSON Schemas are kept as YAML data (a mapping, or true/false). What the entries mean, and what a
 * write must satisfy, is domain/schemas.ts's and service/schemas/'s business.
 */
import { SCHEMA_LIMITS, type SchemaDocument } from '../domain/schemas.js';
import { schemaDocumentShape } from '../domain/schemaDocumentShape.js';
import { parseYaml, stringify } from './layout.js';
import { LayoutError } from './errors.js';

export const SCHEMAS_FILE = 'schemas.yaml';

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
