/**
 * What a command reads from a file it is given, `-` meaning standard input. A file it cannot read,
 * or a body that is not what it must be, is a usage error naming it.
 */
import { readFileSync } from 'node:fs';
import type { PushBodyInput } from '../client/index.js';
import { ServiceError } from '../service/errors.js';

/** The text of the file (`-`: standard input). */
export function inputText(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch {
    throw new ServiceError('invalid_argument', `cannot read ${path === '-' ? 'standard input' : path}`);
  }
}

/** A push body, as `/rest/push` takes it, from a file (`-`: standard input). */
export function pushBodyInput(path: string): PushBodyInput {
  const text = inputText(path);
  try {
    return JSON.parse(text) as PushBodyInput;
  } catch (error) {
    throw new ServiceError('invalid_argument', `the push body is not JSON: ${(error as Error).message}`);
  }
}
