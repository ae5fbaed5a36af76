/**
 * JSON text of an answer in pieces: the same text as `JSON.stringify(value)` or
 * `JSON.stringify(value, null, 2)`, produced by walking the value with an explicit stack (no
 * recursion on its depth) and yielding (steps.ts) between pieces, so the largest allowed answer
 * (8 Mi characters of rendered files, or every key of a large repository) is serialized in slices
 * rather than in one call that holds the event loop for hundreds of milliseconds.
 *
 * A long string is cut into runs of STRING_RUN characters, never between the two halves of a
 * surrogate pair, so each run escapes exactly as it does inside the whole string.
 */
import type { Steps } from './steps.js';

/** Characters of a string escaped per piece: a fraction of a millisecond's work. */
export const STRING_RUN = 64 * 1024;

type Frame =
  | {
      readonly kind: 'object';
      readonly value: Record<string, unknown>;
      readonly keys: string[];
      at: number;
      written: number;
      readonly depth: number;
    }
  | { readonly kind: 'array'; readonly value: readonly unknown[]; at: number; readonly depth: number };

/** Whether `JSON.stringify` leaves this member out of an object (and writes `null` for it in an array). */
const omitted = (value: unknown) => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/** What JSON.stringify writes for a value: its `toJSON(key)` when it has one (a Date). */
function resolved(item: unknown, key: string): unknown {
  if (item !== null && typeof item === 'object' && typeof (item as { toJSON?: unknown }).toJSON === 'function') {
    return (item as { toJSON(key: string): unknown }).toJSON(key);
  }
  return item;
}

/**
 * Pieces of the JSON text of `value`, in order; their concatenation is the text. `emit` receives
 * each piece; a pause is safe (the generator yields) after every member and every string run.
 */
export function* jsonSteps(value: unknown, pretty: boolean, emit: (piece: string) => void): Steps<void> {
  const newline = (depth: number) => (pretty ? `\n${'  '.repeat(depth)}` : '');
  const stack: Frame[] = [];

  /** Writes a leaf, or opens a container (pushed on the stack); `item` has passed through `resolved`. */
  function* open(item: unknown, depth: number): Steps<void> {
    if (typeof item === 'string' && item.length > STRING_RUN) {
      yield* longString(item, emit);
      return;
    }
    if (
      item === null ||
      typeof item !== 'object' ||
      item instanceof Number ||
      item instanceof String ||
      item instanceof Boolean
    ) {
      emit(JSON.stringify(item) ?? 'null');
      return;
    }
    if (Array.isArray(item)) {
      if (item.length === 0) emit('[]');
      else {
        emit('[');
        stack.push({ kind: 'array', value: item, at: 0, depth });
      }
      return;
    }
    const record = item as Record<string, unknown>;
    stack.push({ kind: 'object', value: record, keys: Object.keys(record), at: 0, written: 0, depth });
    emit('{');
  }

  const top = resolved(value, '');
  if (omitted(top)) return; // JSON.stringify answers undefined: no text
  yield* open(top, 0);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1];
    if (frame.kind === 'array') {
      if (frame.at === frame.value.length) {
        stack.pop();
        emit(`${newline(frame.depth)}]`);
        continue;
      }
      const index = frame.at++;
      emit(`${index > 0 ? ',' : ''}${newline(frame.depth + 1)}`);
      const item = resolved(frame.value[index], String(index));
      if (omitted(item)) emit('null');
      else yield* open(item, frame.depth + 1);
      yield;
      continue;
    }
    if (frame.at === frame.keys.length) {
      stack.pop();
      emit(frame.written === 0 ? '}' : `${newline(frame.depth)}}`);
      continue;
    }
    const key = frame.keys[frame.at++];
    const member = resolved(frame.value[key], key);
    if (omitted(member)) continue;
    emit(`${frame.written++ > 0 ? ',' : ''}${newline(frame.depth + 1)}${JSON.stringify(key)}${pretty ? ': ' : ':'}`);
    yield* open(member, frame.depth + 1);
    yield;
  }
}

function* longString(text: string, emit: (piece: string) => void): Steps<void> {
  emit('"');
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + STRING_RUN);
    // Not between a high and a low surrogate: a pair split in two would escape as two lone halves.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    const run = JSON.stringify(text.slice(start, end));
    emit(run.slice(1, -1));
    start = end;
    yield;
  }
  emit('"');
}
