/**
 * JSON.parse of a large text in steps: a push body may be 16 MiB, and
 * JSON.parse of one that dense (numbers in arrays) holds the event loop for 100 to 400 ms. Here
 * the text is parsed with the value JSON.parse gives, in pieces, with a pause (steps.ts) safe
 * between them:
 *
 * 1. one pass over the text (strings skipped by indexOf) notes where each container longer than
 *    SMALL_CONTAINER characters ends; nesting deeper than MAX_JSON_DEPTH stops it (JsonTooDeep);
 * 2. the value is built from the outside in, on an explicit stack: a large container member by
 *    member, and everything small (a container of at most SMALL_CONTAINER characters, a string, a
 *    number, a literal) by JSON.parse itself, so escapes, numbers and duplicate names come out
 *    exactly as JSON.parse makes them.
 *
 * A text that is not JSON throws JsonSyntaxError; the caller then lets JSON.parse (and its own
 * error report) say what is wrong. Each character is scanned at most twice besides JSON.parse.
 */
import type { Steps } from './steps.js';

/** Containers up to this many characters are handed to JSON.parse whole: some microseconds each. */
export const SMALL_CONTAINER = 16 * 1024;
/** Characters scanned between two pauses of the first pass. */
const SCAN_RUN = 64 * 1024;
/**
 * Nesting beyond any push body's (the body, data, an element, values, a value object, then a
 * value's own 64 levels): deeper text is refused before it is built.
 */
export const MAX_JSON_DEPTH = 128;

export class JsonSyntaxError extends Error {}

export class JsonTooDeep extends Error {
  constructor(readonly offset: number) {
    super(`the JSON nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const syntax = () => new JsonSyntaxError('not JSON');
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The index after the string that opens at `at` (a quote). */
function stringEnd(text: string, at: number): number {
  for (let from = at + 1; ;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw syntax();
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index after a number or literal that starts at `at`. */
function tokenEnd(text: string, at: number): number {
  let end = at;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c === COMMA || c === CLOSE_ARRAY || c === CLOSE_OBJECT || isSpace(c)) break;
    end++;
  }
  if (end === at) throw syntax();
  return end;
}

/** The index after the (small) container that opens at `at`. */
function containerEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return i + 1;
    i++;
  }
  throw syntax();
}

/** Pass 1: where each container longer than SMALL_CONTAINER ends, by where it opens. */
function* largeContainers(text: string, small: number): Steps<Map<number, number>> {
  const ends = new Map<number, number>();
  const open: number[] = [];
  let pauseAt = SCAN_RUN;
  for (let i = 0; i < text.length;) {
    if (i >= pauseAt) {
      pauseAt = i + SCAN_RUN;
      yield;
    }
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (open.length === MAX_JSON_DEPTH) throw new JsonTooDeep(i);
      open.push(i);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      const start = open.pop();
      if (start === undefined) throw syntax();
      if (i + 1 - start > small) ends.set(start, i + 1);
    }
    i++;
  }
  if (open.length > 0) throw syntax();
  return ends;
}

/** The index after the value (small, or not a container) that starts at `at`. */
function valueEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  return c === OPEN_OBJECT || c === OPEN_ARRAY
    ? containerEnd(text, at)
    : c === QUOTE
      ? stringEnd(text, at)
      : tokenEnd(text, at);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw syntax();
  }
}

type Frame = { readonly array: unknown[] } | { readonly object: Record<string, unknown>; key: string };

/** As JSON.parse does it: `__proto__` becomes an own member, not the object's prototype. */
function setMember(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

/** The value of `text`, as JSON.parse(text) gives it, built in steps; `small`: for tests. */
export function* parseJsonSteps(text: string, small = SMALL_CONTAINER): Steps<unknown> {
  const large = yield* largeContainers(text, small);
  const stack: Frame[] = [];
  let at = skipSpace(text, 0);

  /** Reads a member's name and its colon; `at` is then on its value. */
  const readKey = (frame: { key: string }) => {
    if (text.charCodeAt(at) !== QUOTE) throw syntax();
    const end = stringEnd(text, at);
    frame.key = parse(text.slice(at, end)) as string;
    at = skipSpace(text, end);
    if (text.charCodeAt(at) !== COLON) throw syntax();
    at = skipSpace(text, at + 1);
  };

  for (;;) {
    // A value starts at `at`: a large container is opened, anything else is parsed whole.
    let value: unknown;
    let complete = true;
    const c = text.charCodeAt(at);
    if ((c === OPEN_OBJECT || c === OPEN_ARRAY) && large.has(at)) {
      const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      const frame: Frame = c === OPEN_OBJECT ? { object: {}, key: '' } : { array: [] };
      at = skipSpace(text, at + 1);
      if (text.charCodeAt(at) === close) {
        at++;
        value = 'array' in frame ? frame.array : frame.object;
      } else {
        stack.push(frame);
        if ('object' in frame) readKey(frame);
        complete = false;
      }
    } else {
      let end = valueEnd(text, at);
      const top = stack[stack.length - 1];
      if (top && 'array' in top) {
        // A run of small members of a large array, parsed in one call (dense arrays of numbers
        // would otherwise cost a call each): all but the last go in here, the last below.
        for (;;) {
          const comma = skipSpace(text, end);
          if (end - at >= small || text.charCodeAt(comma) !== COMMA) break;
          const next = skipSpace(text, comma + 1);
          const n = text.charCodeAt(next);
          if ((n === OPEN_OBJECT || n === OPEN_ARRAY) && large.has(next)) break;
          end = valueEnd(text, next);
        }
        const run = parse(`[${text.slice(at, end)}]`) as unknown[];
        value = run.pop();
        for (const item of run) top.array.push(item);
      } else {
        value = parse(text.slice(at, end));
      }
      at = end;
    }
    // A complete value goes into its container; each container that ends here is complete too.
    while (complete) {
      const frame = stack[stack.length - 1];
      at = skipSpace(text, at);
      if (!frame) {
        if (at !== text.length) throw syntax();
        return value;
      }
      if ('array' in frame) frame.array.push(value);
      else setMember(frame.object, frame.key, value);
      const next = text.charCodeAt(at);
      if (next === COMMA) {
        at = skipSpace(text, at + 1);
        if ('object' in frame) readKey(frame);
        complete = false;
      } else if (next === ('array' in frame ? CLOSE_ARRAY : CLOSE_OBJECT)) {
        stack.pop();
        at++;
        value = 'array' in frame ? frame.array : frame.object;
      } else {
        throw syntax();
      }
    }
    yield;
  }
}
