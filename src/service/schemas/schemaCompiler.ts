/**
 * A schemas document made ready to check with: each JSON Schema compiled by Ajv, each glob and
 * context pattern parsed. Compiled once per document (by its blob id, or its text's hash for one
 * not yet committed) and kept for the few documents in use; a document whose schema is too large,
 * too deep, names a regular expression that may backtrack without end, or does not compile is a
 * SchemaDocumentProblem naming the entry.
 */
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type SafeRegex from 'safe-regex2';
import { parseContext, type Context } from '../../domain/context.js';
import { compileGlob, type Glob } from '../../domain/glob.js';
import {
  SCHEMA_LIMITS,
  type ContextRule,
  type FileSchema,
  type JsonSchema,
  type KeySchema,
  type SchemaDocument,
} from '../../domain/schemas.js';
import type { Steps } from '../../lib/steps.js';
import { sha1Hex } from '../../git/sha1.js';
import { SCHEMAS_FILE, serializeSchemas } from '../../layout/schemaLayout.js';

/**
 * Ajv, its formats and safe-regex2 are loaded at their first use: together they take a few hundred
 * milliseconds to load, which every command of the CLI would pay otherwise.
 */
const require = createRequire(import.meta.url);
let safeRegex: typeof SafeRegex | undefined;
const isSafeRegex = (source: string) => (safeRegex ??= require('safe-regex2') as typeof SafeRegex)(source);

/**
 * One Ajv for the process: its first compile checks schemas against the meta-schema and warms
 * Ajv's code generator (about 250 ms once; 60 ms again for every new instance, then about 1 ms a
 * schema), so it is made once, by warmSchemaCompiler at the server's start. Each schema is removed
 * from it once compiled (its validate function stays usable): nothing accumulates, and two
 * documents may use the same `$id`.
 */
let shared: Ajv | undefined;

function sharedAjv(): Ajv {
  if (!shared) {
    const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
    // ajv-formats is CommonJS: require gives its function itself.
    const addFormats = require('ajv-formats') as (ajv: Ajv) => Ajv;
    shared = new AjvClass({
      strictSchema: true,
      strictNumbers: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      allErrors: false,
      unicodeRegExp: true,
    });
    addFormats(shared);
    const warm = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } };
    shared.compile(warm);
    shared.removeSchema(warm);
  }
  return shared;
}

/** Makes the shared Ajv before requests are served, so no request pays for it. */
export function warmSchemaCompiler(): void {
  sharedAjv();
}

/** A schemas document that cannot be used: the write that brings it is refused with this message. */
export class SchemaDocumentProblem extends Error {}

export interface CompiledKeySchema {
  readonly index: number;
  readonly entry: KeySchema;
  readonly glob: Glob;
  readonly validate: ValidateFunction;
}

export interface CompiledFileSchema {
  readonly index: number;
  readonly entry: FileSchema;
  readonly glob: Glob;
  readonly validate?: ValidateFunction;
}

export interface CompiledRule {
  readonly index: number;
  readonly entry: ContextRule;
  /** The pattern's items, lower case; `*` matches any item. */
  readonly pattern: Context;
}

export interface CompiledSchemas {
  readonly keys: readonly CompiledKeySchema[];
  readonly files: readonly CompiledFileSchema[];
  readonly rules: readonly CompiledRule[];
}

/** Compiled documents kept, by blob id and number of levels. */
const COMPILED = new LRUCache<string, CompiledSchemas>({ max: 32 });

/** The document's id: its blob id when committed, else the hash of the text it would have. */
export function schemasId(doc: SchemaDocument, blobId: string | undefined): string {
  return blobId ?? `text:${sha1Hex(serializeSchemas(doc))}`;
}

/** Compiled, from the cache when this document was compiled before; throws SchemaDocumentProblem. */
export function* compiledSchemasSteps(
  doc: SchemaDocument,
  blobId: string | undefined,
  levels: number,
): Steps<CompiledSchemas> {
  const id = `${schemasId(doc, blobId)}/${levels}`;
  const known = COMPILED.get(id);
  if (known) return known;
  const compiled = yield* compileSteps(doc, levels);
  COMPILED.set(id, compiled);
  return compiled;
}

function* compileSteps(doc: SchemaDocument, levels: number): Steps<CompiledSchemas> {
  const ajv = sharedAjv();
  const compile = (schema: JsonSchema, where: string): ValidateFunction => {
    checkBounds(schema, where);
    try {
      return ajv.compile(schema);
    } catch (error) {
      throw new SchemaDocumentProblem(
        `${SCHEMAS_FILE} ${where}: the schema does not compile: ${(error as Error).message.split('\n')[0]}`,
      );
    } finally {
      if (typeof schema === 'object') ajv.removeSchema(schema);
    }
  };
  const glob = (pattern: string, where: string): Glob => {
    try {
      return compileGlob(pattern);
    } catch (error) {
      throw new SchemaDocumentProblem(`${SCHEMAS_FILE} ${where}: ${(error as Error).message}`);
    }
  };
  const keys: CompiledKeySchema[] = [];
  for (const [index, entry] of doc.keys.entries()) {
    const where = `keys[${index}] (${entry.key})`;
    keys.push({ index, entry, glob: glob(entry.key.toLowerCase(), where), validate: compile(entry.schema, where) });
    yield;
  }
  const files: CompiledFileSchema[] = [];
  for (const [index, entry] of doc.files.entries()) {
    const where = `files[${index}] (${entry.path})`;
    files.push({
      index,
      entry,
      glob: glob(entry.path.startsWith('/') ? entry.path.slice(1) : entry.path, where),
      ...(entry.schema !== undefined ? { validate: compile(entry.schema, where) } : {}),
    });
    yield;
  }
  const rules: CompiledRule[] = [];
  for (const [index, entry] of doc.rules.entries()) {
    const parsed = parseContext(entry.context, levels);
    if (!parsed.ok)
      throw new SchemaDocumentProblem(`${SCHEMAS_FILE} rules[${index}] (${entry.context}): ${parsed.problem}`);
    rules.push({ index, entry, pattern: parsed.context.map((item) => item.toLowerCase()) });
  }
  return { keys, files, rules };
}

/**
 * A schema's size and depth within SCHEMA_LIMITS, and each regular expression it holds (`pattern`,
 * `patternProperties`) short and free of nested repetition (safe-regex2): JavaScript's engine
 * backtracks, and `(a+)+$` against a long value would hold the event loop for seconds. Walked
 * without recursion; conservative (a `pattern` field of data under `const` is checked too).
 */
function checkBounds(schema: JsonSchema, where: string): void {
  const stack: [unknown, number][] = [[schema, 0]];
  let nodes = 0;
  const checkRegex = (source: string) => {
    if (source.length > SCHEMA_LIMITS.patternChars)
      throw new SchemaDocumentProblem(
        `${SCHEMAS_FILE} ${where}: a pattern is longer than ${SCHEMA_LIMITS.patternChars} characters`,
      );
    if (!isSafeRegex(source))
      throw new SchemaDocumentProblem(
        `${SCHEMAS_FILE} ${where}: the pattern ${JSON.stringify(source)} may take exponential time (nested repetition); write it without`,
      );
  };
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (++nodes > SCHEMA_LIMITS.schemaNodes)
      throw new SchemaDocumentProblem(
        `${SCHEMAS_FILE} ${where}: the schema has more than ${SCHEMA_LIMITS.schemaNodes} parts`,
      );
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= SCHEMA_LIMITS.schemaDepth)
      throw new SchemaDocumentProblem(
        `${SCHEMAS_FILE} ${where}: the schema nests deeper than ${SCHEMA_LIMITS.schemaDepth} levels`,
      );
    if (!Array.isArray(node)) {
      const record = node as Record<string, unknown>;
      if (typeof record.pattern === 'string') checkRegex(record.pattern);
      const patterns = record.patternProperties;
      if (typeof patterns === 'object' && patterns !== null)
        for (const source of Object.keys(patterns)) checkRegex(source);
    }
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

/** The first problem Ajv found, as one short phrase: `/port: must be >= 1`. */
export function validationMessage(validate: ValidateFunction): string {
  const error = validate.errors?.[0];
  if (!error) return 'does not match';
  return `${error.instancePath || '(value)'}: ${error.message ?? 'does not match'}`;
}
