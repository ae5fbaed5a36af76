/**
 * A repository's schemas: what its values, its rendered files and its contexts must satisfy for a
 * write to be accepted. Three kinds, all in one document (layout: schemaLayout.ts):
 * - key schemas: a JSON Schema that every value of the keys a name or glob matches must satisfy,
 *   checked on the value with its type applied (valueAsData);
 * - file schemas: files whose path a glob matches must parse in a format (JSON, YAML, properties,
 *   dotenv, TOML) once rendered for a context, and, when a schema is given, satisfy it;
 * - context rules: every context matching a pattern (`Production;*;*`) resolves each listed key.
 */
import type { ValueType } from './valueTypes.js';

export const FILE_FORMATS = ['json', 'yaml', 'properties', 'env', 'toml'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** A JSON Schema as parsed data: an object, or `true`/`false`. */
export type JsonSchema = { readonly [name: string]: unknown } | boolean;

export interface KeySchema {
  /** A key name or a glob over key names (`db.*`), matched without regard to case. */
  readonly key: string;
  readonly schema: JsonSchema;
}

export interface FileSchema {
  /** A glob over file paths (`config/*.yaml`). */
  readonly path: string;
  readonly format: FileFormat;
  readonly schema?: JsonSchema;
}

export interface ContextRule {
  /** A context pattern, one item per level; `*` matches any item. */
  readonly context: string;
  /** Keys every matching context must resolve to a value (not null). */
  readonly resolves: readonly string[];
}

export interface SchemaDocument {
  readonly keys: readonly KeySchema[];
  readonly files: readonly FileSchema[];
  readonly rules: readonly ContextRule[];
}

export const NO_SCHEMAS: SchemaDocument = Object.freeze({ keys: [], files: [], rules: [] });

export function hasSchemas(doc: SchemaDocument): boolean {
  return doc.keys.length > 0 || doc.files.length > 0 || doc.rules.length > 0;
}

/**
 * Bounds of a schemas document, so that compiling and checking it is bounded work: entries of
 * each kind, the document's size, and each JSON Schema's size and depth (schemaCompiler.ts).
 */
export const SCHEMA_LIMITS = {
  documentBytes: 256 * 1024,
  keySchemas: 1000,
  fileSchemas: 100,
  rules: 100,
  keysPerRule: 100,
  /** Objects, arrays and scalars in one JSON Schema. */
  schemaNodes: 2000,
  schemaDepth: 32,
  /** Characters of one `pattern` or `patternProperties` regular expression. */
  patternChars: 256,
} as const;

/**
 * A stored value as a schema sees it: its type applied. Integer, Long, Float and Double are
 * numbers, Boolean a boolean, JSON, Map and List the parsed JSON, everything else the text; null
 * (no value) stays null. A value whose text does not fit its type (only plain git can store one)
 * is given as its text.
 */
export function valueAsData(type: ValueType, text: string | null): unknown {
  if (text === null) return null;
  switch (type) {
    case 'Integer':
    case 'Long':
    case 'Float':
    case 'Double': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? n : text;
    }
    case 'Boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'JSON':
    case 'Map':
    case 'List':
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    default:
      return text;
  }
}
