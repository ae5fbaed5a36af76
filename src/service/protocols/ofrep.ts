/**
 * OpenFeature's remote evaluation protocol (OFREP) over a cfghub repository: a flag is a key,
 * evaluated for the context the evaluation context names.
 *
 * - Evaluation context → context: each attribute named as a context level (without regard to
 *   case) gives that level's item; `targetingKey` gives the last level's item unless an attribute
 *   names that level itself; levels not given are `*`; other attributes are ignored. Numbers and
 *   booleans are taken as their text.
 * - value: the resolved value typed by its value type (Boolean → boolean; Integer, Long, Float,
 *   Double → number; JSON, Map, List → parsed JSON; the rest → string).
 * - variant: the stored context of the winning value (`Production;*;*`).
 * - reason: `TARGETING_MATCH` when a value stored for a specific context won, `DEFAULT` when the
 *   one for every level `*` did.
 * - metadata: the commit read.
 */
import { createHash } from 'node:crypto';
import { WILDCARD, parseRequestContext, type Context } from '../../domain/context.js';
import { keyId } from '../../domain/names.js';
import type { Steps } from '../../lib/steps.js';
import { KeyRing } from '../security/keyRing.js';
import type { ReadTarget } from '../read/read.js';
import { readerContext, resolveKey, resolvedKeys, typedValue, type ResolvedKey } from './resolvedKeys.js';

export type OfrepFailureCode =
  'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL' | 'FLAG_NOT_FOUND';

export interface OfrepSuccess {
  readonly key: string;
  readonly value: unknown;
  readonly reason: 'TARGETING_MATCH' | 'DEFAULT';
  readonly variant: string;
  readonly metadata: Record<string, string>;
}

export interface OfrepFailure {
  readonly key: string;
  readonly errorCode: OfrepFailureCode;
  readonly errorDetails: string;
}

/** A request's problem the protocol names by an error code (400 with `{errorCode, errorDetails}`). */
export class OfrepRequestError extends Error {
  constructor(
    readonly errorCode: OfrepFailureCode,
    message: string,
  ) {
    super(message);
  }
}

const TARGETING_KEY = 'targetingKey';
/** Most attributes an evaluation context may hold: bounded work for any input. */
export const MAX_CONTEXT_ATTRIBUTES = 256;

/** The context an evaluation context names (see the file's comment). */
export function contextOfEvaluation(evaluation: unknown, levels: readonly string[]): Context {
  if (evaluation === undefined || evaluation === null) evaluation = {};
  if (typeof evaluation !== 'object' || Array.isArray(evaluation))
    throw new OfrepRequestError('INVALID_CONTEXT', 'context must be a JSON object of attributes');
  const attributes = Object.entries(evaluation as Record<string, unknown>);
  if (attributes.length > MAX_CONTEXT_ATTRIBUTES)
    throw new OfrepRequestError(
      'INVALID_CONTEXT',
      `context has ${attributes.length} attributes, more than the ${MAX_CONTEXT_ATTRIBUTES} allowed`,
    );
  const items: string[] = levels.map(() => WILDCARD);
  const given = levels.map(() => false);
  const levelOf = new Map(levels.map((level, i) => [level.toLowerCase(), i]));
  let targetingKey: string | undefined;
  const text = (name: string, value: unknown): string => {
    if (typeof value === 'string') return value.trim();
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    throw new OfrepRequestError('INVALID_CONTEXT', `context attribute ${name} must be a string, number or boolean`);
  };
  for (const [name, value] of attributes) {
    if (name === TARGETING_KEY) {
      targetingKey = text(name, value);
      continue;
    }
    const level = levelOf.get(name.toLowerCase());
    if (level === undefined || value === undefined || value === null) continue;
    items[level] = text(name, value) || WILDCARD;
    given[level] = true;
  }
  const last = levels.length - 1;
  if (targetingKey && !given[last]) items[last] = targetingKey;
  const parsed = parseRequestContext(items.join(';'), levels);
  if (!parsed.ok)
    throw new OfrepRequestError('INVALID_CONTEXT', parsed.problem.replace(/^Context item/, 'context level'));
  return parsed.context;
}

function evaluation(key: ResolvedKey, commitId: string): OfrepSuccess | OfrepFailure {
  if (key.text === undefined) {
    return {
      key: key.key,
      errorCode: 'GENERAL',
      errorDetails: `flag ${key.key} is sealed in a security group: use a token bound to the group, or send its password in Security-Profile-Auth`,
    };
  }
  return {
    key: key.key,
    value: typedValue(key.vdt, key.text, 'parsed'),
    reason: key.weight > 0 ? 'TARGETING_MATCH' : 'DEFAULT',
    variant: key.context,
    metadata: { commit: commitId },
  };
}

/** One flag evaluated: its evaluation, or a failure (FLAG_NOT_FOUND when no value of it resolves). */
export function evaluateFlag(
  target: ReadTarget,
  commitId: string,
  flag: string,
  context: Context,
): OfrepSuccess | OfrepFailure {
  const key = target.snapshot.key(keyId(flag));
  const resolved = key && resolveKey(key, readerContext(target, context), target.ring ?? KeyRing.EMPTY);
  if (!resolved)
    return {
      key: flag,
      errorCode: 'FLAG_NOT_FOUND',
      errorDetails: `no value of ${flag} resolves for context ${context.join(';')}`,
    };
  return evaluation(resolved, commitId);
}

/** Every flag that resolves for the context, by key name, with the content ETag of the list. */
export function* evaluateAllFlags(
  target: ReadTarget,
  commitId: string,
  context: Context,
): Steps<{ flags: (OfrepSuccess | OfrepFailure)[]; etag: string }> {
  const flags = (yield* resolvedKeys(target, context)).map((key) => evaluation(key, commitId));
  // The ETag is of the content alone, without the commit: a commit that changes nothing this context reads keeps it.
  const content = flags.map((flag) =>
    'errorCode' in flag ? [flag.key, flag.errorCode] : [flag.key, flag.value, flag.variant, flag.reason],
  );
  const etag = `"${createHash('sha1').update(JSON.stringify(content)).digest('hex')}"`;
  return { flags, etag };
}
