/**
 * A push request after its shape has been checked . Values of fields are
 * not yet checked against the repository: that is applyPush's work.
 */
import { jsonSteps } from '../lib/jsonSteps.js';
import { runSteps, type Steps } from '../lib/steps.js';
import type { SchemaDocument } from './schemas.js';

export interface ValueElement {
  readonly context?: string;
  /** Any JSON value; converted to text by the key's type. Absent means "keep the stored value". */
  readonly value?: unknown;
  readonly hasValue: boolean;
  readonly active?: boolean;
  readonly opp?: 'delete';
}

export interface KeyElement {
  readonly kind: 'key';
  readonly key: string;
  readonly readme?: string;
  readonly deprecated?: boolean;
  readonly vdt?: string;
  readonly push?: boolean;
  readonly securityGroup?: string;
  readonly password?: string;
  readonly values?: readonly ValueElement[];
  readonly opp?: 'delete';
}

export interface FileElement {
  readonly kind: 'file';
  readonly file: string;
  readonly context?: string;
  readonly content?: string;
  readonly active?: boolean;
  readonly securityGroup?: string;
  readonly password?: string;
  readonly opp?: 'delete';
}

export type PushElement = KeyElement | FileElement;

export interface PushRequest {
  readonly changeComment?: string;
  readonly enableKeyCreation?: boolean;
  readonly data: readonly PushElement[];
  /** The repository's new schemas document, when the push replaces it. */
  readonly schemas?: SchemaDocument;
}

/** Limits of a push. */
export const MAX_ELEMENTS = 10_000;
export const MAX_VALUE_BYTES = 1024 * 1024;
/**
 * Values (contexts) one key may hold, and values one push may carry: the work and the
 * memory of a push, and of every later read of the key, grow with them, not with elements.
 */
export const MAX_VALUES_PER_KEY = 1000;
export const MAX_VALUES_PER_PUSH = 50_000;

export interface LimitProblem {
  readonly path: string;
  readonly message: string;
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The UTF-8 length of a value's JSON text, measured in steps and only until it passes `limit`:
 * a value may be a whole body's worth of JSON, and the answer needed is only "too large".
 */
function* jsonBytesUpTo(value: unknown, limit: number): Steps<number> {
  let bytes = 0;
  const steps = jsonSteps(value, false, (piece) => (bytes += utf8Length(piece)));
  while (bytes <= limit && !steps.next().done) yield;
  return bytes;
}

/** The first place a well-formed push goes over the limits (answered 413), if any. */
export function findLimitProblem(request: PushRequest): LimitProblem | undefined {
  return runSteps(findLimitProblemSteps(request));
}

/** findLimitProblem as steps (steps.ts): a value may be up to 1 MiB of JSON to measure. */
export function* findLimitProblemSteps(request: PushRequest): Steps<LimitProblem | undefined> {
  if (request.data.length > MAX_ELEMENTS) {
    return {
      path: 'data',
      message: `a push holds at most ${MAX_ELEMENTS} elements, this one has ${request.data.length}`,
    };
  }
  const tooLarge = `larger than ${MAX_VALUE_BYTES} bytes`;
  let values = 0;
  for (let i = 0; i < request.data.length; i++) {
    const element = request.data[i];
    if (element.kind !== 'key' || !element.values) continue;
    if (element.values.length > MAX_VALUES_PER_KEY) {
      return {
        path: `data[${i}].values`,
        message: `a key holds at most ${MAX_VALUES_PER_KEY} values, this element has ${element.values.length}`,
      };
    }
    values += element.values.length;
    if (values > MAX_VALUES_PER_PUSH)
      return {
        path: `data[${i}].values`,
        message: `a push holds at most ${MAX_VALUES_PER_PUSH} values, this one has more by this element`,
      };
  }
  for (let i = 0; i < request.data.length; i++) {
    const element = request.data[i];
    yield;
    if (element.kind === 'file') {
      if (element.content !== undefined && utf8Length(element.content) > MAX_VALUE_BYTES) {
        return { path: `data[${i}].content`, message: `file content is ${tooLarge}` };
      }
      continue;
    }
    for (let j = 0; j < (element.values?.length ?? 0); j++) {
      const value = element.values![j].value;
      if (value === undefined || value === null) continue;
      const bytes = typeof value === 'string' ? utf8Length(value) : yield* jsonBytesUpTo(value, MAX_VALUE_BYTES);
      if (bytes > MAX_VALUE_BYTES) return { path: `data[${i}].values[${j}].value`, message: `value is ${tooLarge}` };
    }
  }
  return undefined;
}
