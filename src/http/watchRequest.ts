/** The `Wait` of a watch: a header, or the `wait` query parameter, in whole seconds. */
import type { IncomingMessage } from 'node:http';
import { badRequest } from './answer/errors.js';
import { header } from './answer/headers.js';
import { queryParameter } from './answer/pullFormat.js';
import { MAX_WAIT_SECONDS } from '../service/answers/watchHub.js';

/** The wait asked for, in milliseconds, or undefined when the request asks for none. */
export function waitMsOf(req: IncomingMessage): number | undefined {
  const text = header(req, 'Wait') ?? queryParameter(req, 'wait');
  if (text === undefined) return undefined;
  const seconds = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 1 && seconds <= MAX_WAIT_SECONDS))
    throw badRequest(`Wait must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS}`);
  return seconds * 1000;
}
