/**
 * The shape of a push body, checked strictly with zod (by the server, and by the client before it
 * sends one):
 * unknown fields are rejected, so a mistyped `opp` can never turn a delete into an update.
 * Booleans also accept the strings "true" and "false", as the ConfigHub Java client sends them.
 * Anything that has the right shape but the wrong content is left to the push itself (a 304).
 */
import * as z from 'zod';
import type { FileElement, KeyElement, PushElement, PushRequest, ValueElement } from '../domain/pushRequest.js';
import { runSteps, type Steps } from '../lib/steps.js';
import type { ErrorDetail } from './errorBody.js';
import { schemaDocumentShape } from '../domain/schemaDocumentShape.js';

const flag = z.union([z.boolean(), z.enum(['true', 'false']).transform((text) => text === 'true')]);
const optionalText = z.string().nullable().optional();
const opp = z.literal('delete', { error: 'opp may only be "delete"' }).optional();

/** Deepest nesting of arrays and objects in a value; deeper values could not even be stored as JSON text safely. */
export const MAX_VALUE_DEPTH = 64;

/** Whether a parsed JSON value nests no deeper than `limit`, checked without recursion. */
function nestsWithin(value: unknown, limit: number): boolean {
  return runSteps(nestsWithinSteps(value, limit));
}

/** Nodes visited between two pauses: a value may be a 16 MiB body's worth of numbers. */
const NODES_PER_STEP = 4096;

function* nestsWithinSteps(value: unknown, limit: number): Steps<boolean> {
  const stack: [unknown, number][] = [[value, 0]];
  let visited = 0;
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= limit) return false;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
    if (++visited % NODES_PER_STEP === 0) yield;
  }
  return true;
}

/**
 * Nesting of values already walked in steps (parseValues, before the schema check), so the
 * schema's refinement answers at once for them: the walk of a large value is not one piece.
 */
const nestingChecked = new WeakMap<object, boolean>();

const nestsWithinLimit = (value: unknown) =>
  (typeof value === 'object' && value !== null ? nestingChecked.get(value) : undefined) ??
  nestsWithin(value, MAX_VALUE_DEPTH);

export const valueSchema = z.strictObject({
  context: z.string().optional(),
  value: z.unknown().refine(nestsWithinLimit, `value nests deeper than ${MAX_VALUE_DEPTH} levels`).optional(),
  active: flag.optional(),
  opp,
});

export const keySchema = z.strictObject({
  key: z.string(),
  readme: optionalText,
  deprecated: flag.optional(),
  vdt: z.string().optional(),
  push: flag.optional(),
  securityGroup: optionalText,
  password: optionalText,
  values: z.unknown().optional(),
  opp,
});

export const fileSchema = z.strictObject({
  file: z.string(),
  context: z.string().optional(),
  content: z.string().optional(),
  active: flag.optional(),
  securityGroup: optionalText,
  password: optionalText,
  opp,
});

export const bodySchema = z.strictObject({
  changeComment: optionalText,
  enableKeyCreation: flag.optional(),
  data: z.array(z.unknown()),
  /** The repository's new schemas document, whole (docs/schemas.md); cfghub's own, not ConfigHub's. */
  schemas: schemaDocumentShape.optional(),
});

/** `data[1].values[0].context` from zod's path segments. */
export function jsonPath(segments: readonly PropertyKey[]): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else path += path ? `.${String(segment)}` : String(segment);
  }
  return path;
}

/** A push body as a client writes it (the TypeScript client's types come from here, so client and server agree). */
export type PushValueInput = z.input<typeof valueSchema>;
export type PushKeyInput = Omit<z.input<typeof keySchema>, 'values'> & { values?: PushValueInput[] };
export type PushFileInput = z.input<typeof fileSchema>;
export type PushBodyInput = Omit<z.input<typeof bodySchema>, 'data'> & { data: (PushKeyInput | PushFileInput)[] };

export type PushParse = { ok: true; request: PushRequest } | { ok: false; problems: ErrorDetail[] };

/** Checks the shape of a parsed JSON body; reports every problem with its JSON path. */
export function parsePushBody(body: unknown): PushParse {
  return runSteps(parsePushBodySteps(body));
}

/** parsePushBody as steps (src/lib/steps.ts): a pause is safe after each element. */
export function* parsePushBodySteps(body: unknown): Steps<PushParse> {
  const problems: ErrorDetail[] = [];
  const check = <T>(schema: z.ZodType<T>, input: unknown, at: PropertyKey[]): T | undefined => {
    const parsed = schema.safeParse(input);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys)
          problems.push({ path: jsonPath([...at, ...issue.path, key]), message: 'unknown field' });
      } else {
        problems.push({ path: jsonPath([...at, ...issue.path]) || '(body)', message: issue.message });
      }
    }
    return undefined;
  };
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, problems: [{ path: '(body)', message: 'the body must be a JSON object' }] };
  }
  const top = check(bodySchema, body, []);
  if (!top) return { ok: false, problems };
  const data: PushElement[] = [];
  for (let i = 0; i < top.data.length; i++) {
    const element = yield* parseElement(top.data[i], i, check, problems);
    if (element) data.push(element);
    yield;
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    request: {
      data,
      ...(top.changeComment != null ? { changeComment: top.changeComment } : {}),
      ...(top.enableKeyCreation !== undefined ? { enableKeyCreation: top.enableKeyCreation } : {}),
      ...(top.schemas !== undefined ? { schemas: top.schemas } : {}),
    },
  };
}

type Check = <T>(schema: z.ZodType<T>, input: unknown, at: PropertyKey[]) => T | undefined;

function* parseElement(raw: unknown, i: number, check: Check, problems: ErrorDetail[]): Steps<PushElement | undefined> {
  const at = `data[${i}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push({ path: at, message: 'an element must be a JSON object' });
    return undefined;
  }
  const hasKey = 'key' in raw;
  const hasFile = 'file' in raw;
  if (hasKey === hasFile) {
    problems.push({
      path: at,
      message: hasKey ? 'an element carries key or file, not both' : 'an element must carry key or file',
    });
    return undefined;
  }
  if (hasFile) {
    const file = check(fileSchema, raw, ['data', i]);
    return file && ({ kind: 'file', ...withoutNulls(file) } as FileElement);
  }
  const key = check(keySchema, raw, ['data', i]);
  if (!key) return undefined;
  const values = yield* parseValues(key.values, i, check, problems);
  if (values === null) return undefined;
  const { values: _raw, ...fields } = key;
  return { kind: 'key', ...withoutNulls(fields), ...(values ? { values } : {}) } as KeyElement;
}

/** `values` is an array, or, in the delete form, one object with `opp: "delete"`. Null: a problem was reported. */
function* parseValues(
  raw: unknown,
  i: number,
  check: Check,
  problems: ErrorDetail[],
): Steps<ValueElement[] | undefined | null> {
  if (raw === undefined) return undefined;
  const at = `data[${i}].values`;
  let items: unknown[];
  let single = false;
  if (Array.isArray(raw)) items = raw;
  else if (typeof raw === 'object' && raw !== null) {
    items = [raw];
    single = true;
  } else {
    problems.push({ path: at, message: 'values must be an array of value objects' });
    return null;
  }
  const values: ValueElement[] = [];
  let failed = false;
  for (let j = 0; j < items.length; j++) {
    const item = items[j];
    const value = typeof item === 'object' && item !== null ? (item as { value?: unknown }).value : undefined;
    if (typeof value === 'object' && value !== null && !nestingChecked.has(value))
      nestingChecked.set(value, yield* nestsWithinSteps(value, MAX_VALUE_DEPTH));
    const parsed = check(valueSchema, item, ['data', i, 'values', ...(single ? [] : [j])]);
    if (!parsed) {
      failed = true;
      continue;
    }
    if (single && parsed.opp !== 'delete') {
      problems.push({
        path: at,
        message: 'a single value object is only accepted in the delete form (opp: "delete"); use an array',
      });
      failed = true;
      continue;
    }
    values.push({ ...parsed, hasValue: typeof item === 'object' && item !== null && 'value' in item });
    yield;
  }
  return failed ? null : values;
}

/** Null in an optional text field means the same as leaving it out. */
function withoutNulls<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined)) as T;
}

/** The whole body as one schema, for the OpenAPI description (parsePushBody checks it in steps). */
export const pushBodyDescription = bodySchema.extend({
  data: z.array(z.union([keySchema.extend({ values: z.array(valueSchema).optional() }), fileSchema])),
});
