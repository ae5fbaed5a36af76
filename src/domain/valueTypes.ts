/**
 * Value data types (vdt) and their strict checks. Every value is stored as
 * text (or null); these functions decide whether a text fits a type.
 */

export const VALUE_TYPES = [
  'Text',
  'Code',
  'JSON',
  'Boolean',
  'Integer',
  'Long',
  'Float',
  'Double',
  'Map',
  'List',
  'FileRef',
  'FileEmbed',
] as const;

export type ValueType = (typeof VALUE_TYPES)[number];

export function isValueType(name: string): name is ValueType {
  return (VALUE_TYPES as readonly string[]).includes(name);
}

/** Types whose values may be sent as a JSON object or array (stored as its JSON text). */
export function acceptsStructuredValue(type: ValueType): boolean {
  return type === 'JSON' || type === 'Map' || type === 'List';
}

/** Types whose values name a file of the repository. */
export function isFileReferenceType(type: ValueType): boolean {
  return type === 'FileRef' || type === 'FileEmbed';
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function parsesAsJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function integerInRange(text: string, bits: 32 | 64): boolean {
  if (!INTEGER.test(text)) return false;
  const n = BigInt(text);
  const limit = 1n << BigInt(bits - 1);
  return n >= -limit && n < limit;
}

/**
 * Whether `text` fits `type`, ignoring file references (checked against the repository's files
 * by the caller). Null is "no value" and fits every type.
 */
export function fitsType(type: ValueType, text: string | null): boolean {
  if (text === null) return true;
  switch (type) {
    case 'Text':
    case 'Code':
    case 'FileRef':
    case 'FileEmbed':
      return true;
    case 'JSON':
      return parsesAsJson(text).ok;
    case 'Map': {
      const parsed = parsesAsJson(text);
      return parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value);
    }
    case 'List': {
      const parsed = parsesAsJson(text);
      return parsed.ok && Array.isArray(parsed.value);
    }
    case 'Boolean':
      return text === 'true' || text === 'false';
    case 'Integer':
      return integerInRange(text, 32);
    case 'Long':
      return integerInRange(text, 64);
    case 'Float':
      // Finite once rounded to 32 bits: Java's Float.MAX_VALUE prints as 3.4028235E38, just above the exact maximum.
      return DECIMAL.test(text) && Number.isFinite(Math.fround(Number(text)));
    case 'Double':
      return DECIMAL.test(text) && Number.isFinite(Number(text));
  }
}

/** The article-and-name phrase used in refusal reasons: "an Integer", "a Map". */
export function describeType(type: ValueType): string {
  return /^[AEIOU]/.test(type) ? `an ${type}` : `a ${type}`;
}

export type ValueConversion = { ok: true; text: string | null } | { ok: false; problem: string };

/**
 * Converts a pushed JSON value to its stored text. Strings are kept as they are; numbers and
 * booleans become their JSON text; objects and arrays are accepted only for JSON, Map and List keys.
 */
export function valueToText(value: unknown, type: ValueType): ValueConversion {
  if (value === null) return { ok: true, text: null };
  switch (typeof value) {
    case 'string':
      return { ok: true, text: value };
    case 'boolean':
      return { ok: true, text: String(value) };
    case 'number':
      if (!Number.isFinite(value))
        return { ok: false, problem: 'value is a number too large for a double; send it as a string' };
      // JSON numbers arrive as doubles: for a Double or Float key that is the value itself, but an
      // integer beyond 2^53 may already differ from the digits the client sent.
      if (type !== 'Double' && type !== 'Float' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
        return { ok: false, problem: 'value is a number too large to keep exactly; send it as a string' };
      }
      return { ok: true, text: JSON.stringify(value) };
    case 'object':
      if (!acceptsStructuredValue(type)) {
        return {
          ok: false,
          problem: `value is a JSON ${Array.isArray(value) ? 'array' : 'object'} but the key is ${describeType(type)}`,
        };
      }
      return { ok: true, text: JSON.stringify(value) };
    default:
      return { ok: false, problem: 'value is not a string, number, boolean, null, object or array' };
  }
}
