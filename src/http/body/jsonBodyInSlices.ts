/**
 * A large JSON body parsed in slices: a push body may be 16 MiB, and JSON.parse
 * of it in one call held every other request for up to 400 ms on a loaded machine. Bodies from
 * LARGE_BODY_BYTES on are parsed by src/lib/jsonParseSteps.ts, every few milliseconds giving
 * the event loop to other requests; smaller ones, and any text that is not JSON (for its error
 * report, naming line and column), go through parseJson as before.
 */
import { JsonTooDeep, MAX_JSON_DEPTH, parseJsonSteps } from '../../lib/jsonParseSteps.js';
import { decodeUtf8Strict } from '../../lib/utf8.js';
import type { TimeSlices } from '../../lib/timeSlices.js';
import { badRequest } from '../answer/errors.js';
import { parseJson } from './jsonBody.js';

/** From this size on, a body is parsed in slices: JSON.parse of less takes well under a millisecond. */
export const LARGE_BODY_BYTES = 64 * 1024;

export async function parseJsonInSlices(body: Buffer, slices: TimeSlices): Promise<unknown> {
  if (body.length < LARGE_BODY_BYTES) return parseJson(body);
  let text: string;
  try {
    text = decodeUtf8Strict(body);
  } catch {
    return parseJson(body); // answers the 400 that names the first bad byte
  }
  try {
    return await slices.run(parseJsonSteps(text));
  } catch (error) {
    if (error instanceof JsonTooDeep) {
      throw badRequest(
        `the body is not a push: it nests deeper than ${MAX_JSON_DEPTH} levels (at character ${error.offset + 1})`,
      );
    }
    // Not JSON: JSON.parse and the syntax scanner say where (a mistake stops them where it is).
    return parseJson(body);
  }
}
