/**
 * The schema check every write passes (write/commit.ts), on the state the write
 * would make (`after`, staged but not written) against the state it starts from (`before`):
 * - each value a write sets is checked against the schemas of its key (valueAsData);
 * - each file a schema's glob matches is rendered for each context the write can reach (the
 *   contexts the repository names, and each variant's own context) and parsed in its format, then
 *   checked against its schema;
 * - each context rule: every named context matching its pattern resolves each of its keys.
 * Only what the write breaks refuses it: a value, a rendered file or a context already broken
 * before (by a commit made with plain git) and left as it was is not the writer's doing. A write
 * that brings a new schemas document (or new settings or context groups) is checked on everything.
 *
 * Not checked, as nothing here holds their group's key: values of secured keys and secured files;
 * a secured key's value renders in a file as its placeholder.
 */
import { contextId, formatContext, WILDCARD, type Context } from '../../domain/context.js';
import type { KeyRecord, PushChanges } from '../../domain/model.js';
import { keyId, referencedKeys } from '../../domain/names.js';
import { requestContext, resolveValue, type RequestContext } from '../../domain/resolve.js';
import { hasSchemas, valueAsData } from '../../domain/schemas.js';
import type { Steps } from '../../lib/steps.js';
import { CfghubError } from '../../domain/errors.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { KeyRing } from '../security/keyRing.js';
import { ContextView } from '../read/read.js';
import { ServiceError } from '../errors.js';
import { parseRendered } from './fileFormats.js';
import { namedContextsSteps, TooManyContexts, type NamedContexts } from './namedContexts.js';
import {
  compiledSchemasSteps,
  SchemaDocumentProblem,
  validationMessage,
  type CompiledFileSchema,
  type CompiledSchemas,
} from './schemaCompiler.js';

export interface SchemaViolation {
  readonly kind: 'key' | 'file' | 'rule';
  /** The key or the file path. */
  readonly name: string;
  readonly context: string;
  /** The entry of schemas.yaml broken: `keys[0] (db.port)`. */
  readonly rule: string;
  readonly problem: string;
}

export interface SchemaCheck {
  /** Up to MAX_LISTED_VIOLATIONS violations, in the order found. */
  readonly violations: readonly SchemaViolation[];
  /** All violations found. */
  readonly count: number;
  /** Set when the check could not be made: the document does not compile, too many contexts. */
  readonly problem?: string;
}

export const MAX_LISTED_VIOLATIONS = 20;

const NONE: SchemaCheck = { violations: [], count: 0 };

class Found {
  readonly listed: SchemaViolation[] = [];
  count = 0;
  add(violation: SchemaViolation): void {
    if (this.listed.length < MAX_LISTED_VIOLATIONS) this.listed.push(violation);
    this.count++;
  }
}

/** One line per violation, as a refusal gives it. */
export function describeViolation(v: SchemaViolation): string {
  const subject =
    v.kind === 'key'
      ? `key ${v.name} at ${v.context}`
      : v.kind === 'file'
        ? `file ${v.name} rendered for ${v.context}`
        : `context ${v.context}`;
  return `${subject} breaks schemas.yaml ${v.rule}: ${v.problem}`;
}

/** The refusal reason of a check, or undefined when the write breaks nothing. */
export function schemaRefusal(check: SchemaCheck): string | undefined {
  if (check.problem) return check.problem;
  if (check.count === 0) return undefined;
  const more = check.count - check.violations.length;
  return `the change breaks the repository's schemas (${check.count} ${check.count === 1 ? 'break' : 'breaks'}): ${check.violations.map(describeViolation).join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** schemaRefusal of the check of a write from `before` (undefined: check everything) to `after`. */
export function* schemaRefusalSteps(
  before: Snapshot | undefined,
  after: Snapshot,
  changes: PushChanges,
): Steps<string | undefined> {
  return schemaRefusal(yield* schemaCheckSteps(before, after, changes));
}

/** Whether the check must weigh everything: no known start, or what every check depends on changed. */
function checksEverything(before: Snapshot | undefined, after: Snapshot): boolean {
  return (
    before === undefined ||
    before.schemasBlobId !== after.schemasBlobId ||
    before.settingsBlobId !== after.settingsBlobId ||
    before.contextGroupsBlobId !== after.contextGroupsBlobId
  );
}

export function* schemaCheckSteps(
  before: Snapshot | undefined,
  after: Snapshot,
  changes: PushChanges | undefined,
): Steps<SchemaCheck> {
  if (!hasSchemas(after.schemas)) return NONE;
  let compiled: CompiledSchemas;
  try {
    compiled = yield* compiledSchemasSteps(after.schemas, after.schemasBlobId, after.settings.levels.length);
  } catch (error) {
    if (error instanceof SchemaDocumentProblem) return { ...NONE, problem: error.message };
    throw error;
  }
  const everything = checksEverything(before, after) || changes === undefined;
  const write: CheckedWrite = {
    compiled,
    before: everything ? undefined : before,
    after,
    changes: everything ? undefined : changes,
    found: new Found(),
  };
  const { found } = write;
  try {
    yield* checkKeys(write);
    if (compiled.files.length > 0 || compiled.rules.length > 0) {
      const contexts = yield* namedContextsSteps(after);
      yield* checkFiles(write, contexts);
      yield* checkRules(write, contexts);
    }
  } catch (error) {
    if (error instanceof TooManyContexts)
      return { ...NONE, problem: `the schema check cannot be made: ${error.message}` };
    throw error;
  }
  return { violations: found.listed, count: found.count };
}

/**
 * What each part of the check works on: the compiled schemas, the write's start and its result,
 * what it changes, and where the breaks found go. No start and no changes: everything is checked.
 */
interface CheckedWrite {
  readonly compiled: CompiledSchemas;
  readonly before: Snapshot | undefined;
  readonly after: Snapshot;
  readonly changes: PushChanges | undefined;
  readonly found: Found;
}

const sameValue = (
  a: { value: string | null; active: boolean } | undefined,
  b: { value: string | null; active: boolean },
) => a !== undefined && a.value === b.value && a.active === b.active;

function* checkKeys({ compiled, before, after, changes, found }: CheckedWrite): Steps<void> {
  if (compiled.keys.length === 0) return;
  const keys: Iterable<KeyRecord | null> = changes ? changes.keys.values() : after.keys();
  for (const key of keys) {
    yield;
    if (!key || key.securityGroup !== undefined) continue;
    const id = keyId(key.key);
    const schemas = compiled.keys.filter((schema) => schema.glob.test(id));
    if (schemas.length === 0) continue;
    const was = before?.key(id);
    const old = new Map((was && was.vdt === key.vdt ? was.values : []).map((v) => [contextId(v.context), v]));
    for (const value of key.values) {
      if (value.value === null || sameValue(old.get(contextId(value.context)), value)) continue;
      const data = valueAsData(key.vdt, value.value);
      for (const schema of schemas) {
        if (schema.validate(data)) continue;
        found.add({
          kind: 'key',
          name: key.key,
          context: formatContext(value.context),
          rule: `keys[${schema.index}] (${schema.entry.key})`,
          problem: validationMessage(schema.validate),
        });
      }
    }
  }
}

/**
 * Whether a write can change what a file renders anywhere: a file it changes (`pathMatters` says
 * which paths count), or a key some template names, or a key that names a file (FileEmbed, FileRef).
 */
export function reachesFiles(
  before: Snapshot,
  after: Snapshot,
  changes: PushChanges,
  pathMatters: (path: string) => boolean = () => true,
): boolean {
  for (const file of changes.files.values()) if (file === null || pathMatters(file.path)) return true;
  if (changes.keys.size === 0) return false;
  const named = new Set<string>();
  for (const snapshot of [before, after])
    for (const file of snapshot.files())
      for (const name of file.references ?? referencedKeys(file.content)) named.add(keyId(name));
  for (const [id, key] of changes.keys) {
    if (named.has(id)) return true;
    const was = before.key(id);
    if (
      (key && (key.vdt === 'FileEmbed' || key.vdt === 'FileRef')) ||
      (was && (was.vdt === 'FileEmbed' || was.vdt === 'FileRef'))
    )
      return true;
  }
  return false;
}

type Rendering =
  { readonly ok: true; readonly content: string } | { readonly ok: false; readonly problem: string } | undefined;

/** A path rendered for a context in a view; undefined when no variant resolves, or it is sealed. */
function renderIn(view: ContextView, path: string): Rendering {
  const file = view.file(path);
  if (!file) return undefined;
  const opened = view.open(file);
  if (!opened) return undefined;
  try {
    return { ok: true, content: view.render(opened).content };
  } catch (error) {
    if (error instanceof CfghubError || error instanceof ServiceError)
      return { ok: false, problem: `does not render: ${error.message}` };
    throw error;
  }
}

function* checkFiles({ compiled, before, after, changes, found }: CheckedWrite, named: NamedContexts): Steps<void> {
  if (compiled.files.length === 0) return;
  if (
    before &&
    changes &&
    !reachesFiles(before, after, changes, (path) => compiled.files.some((schema) => schema.glob.test(path)))
  )
    return;
  const paths = new Map<string, CompiledFileSchema[]>();
  const contexts = new Map(named);
  for (const file of after.files()) {
    const schemas = compiled.files.filter((schema) => schema.glob.test(file.path));
    if (schemas.length === 0) continue;
    paths.set(file.path, schemas);
    // A variant's own context too (its wildcards asking for values without an item there).
    if (file.active && !contexts.has(contextId(file.context))) contexts.set(contextId(file.context), file.context);
  }
  if (paths.size === 0) return;
  const groupsAfter = after.groups();
  const groupsBefore = before?.groups();
  for (const context of contexts.values()) {
    const afterView = new ContextView(after, requestContext(context, groupsAfter), KeyRing.EMPTY);
    const beforeView = before && new ContextView(before, requestContext(context, groupsBefore), KeyRing.EMPTY);
    for (const [path, schemas] of paths) {
      const rendered = renderIn(afterView, path);
      if (!rendered) continue;
      if (beforeView) {
        const was = renderIn(beforeView, path);
        if (
          was &&
          was.ok === rendered.ok &&
          (was.ok ? was.content === (rendered as { content: string }).content : true)
        )
          continue;
      }
      for (const schema of schemas) {
        const problem = fileProblem(schema, rendered);
        if (problem)
          found.add({
            kind: 'file',
            name: path,
            context: formatContext(context),
            rule: `files[${schema.index}] (${schema.entry.path}, ${schema.entry.format})`,
            problem,
          });
      }
    }
    yield;
  }
}

function fileProblem(schema: CompiledFileSchema, rendered: NonNullable<Rendering>): string | undefined {
  if (!rendered.ok) return rendered.problem;
  const parsed = parseRendered(schema.entry.format, rendered.content);
  if (!parsed.ok) return parsed.problem;
  if (!schema.validate || schema.validate(parsed.data)) return undefined;
  return validationMessage(schema.validate);
}

function matches(pattern: readonly string[], context: Context): boolean {
  return pattern.every((item, i) => item === WILDCARD || item === context[i].toLowerCase());
}

function resolvesAt(snapshot: Snapshot, name: string, request: RequestContext): boolean {
  const key = snapshot.key(keyId(name));
  const value = key && resolveValue(key, request);
  return value !== undefined && value.value !== null;
}

function* checkRules({ compiled, before, after, changes, found }: CheckedWrite, named: NamedContexts): Steps<void> {
  if (compiled.rules.length === 0) return;
  // Unless everything is checked: the keys a write changes are checked everywhere, the others only at contexts it names anew.
  let known: NamedContexts | undefined;
  if (before && changes) known = yield* namedContextsSteps(before);
  const groupsAfter = after.groups();
  const groupsBefore = before?.groups();
  for (const rule of compiled.rules) {
    for (const context of named.values()) {
      if (!matches(rule.pattern, context)) continue;
      const isNew = known !== undefined && !known.has(contextId(context));
      const request = requestContext(context, groupsAfter);
      for (const name of rule.entry.resolves) {
        if (known && !isNew && !changes!.keys.has(keyId(name))) continue;
        if (resolvesAt(after, name, request)) continue;
        if (before && !isNew && known && !resolvesAt(before, name, requestContext(context, groupsBefore))) continue; // broken before
        found.add({
          kind: 'rule',
          name,
          context: formatContext(context),
          rule: `rules[${rule.index}] (${rule.entry.context})`,
          problem: `does not resolve ${name}`,
        });
      }
      yield;
    }
  }
}
