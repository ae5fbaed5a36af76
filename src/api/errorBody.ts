/**
 * The body of every error answer: `{"error": CODE, "message": TEXT}`, with `details` naming each
 * problem of a malformed body by its JSON path, and `file` and `commit` where the repository's
 * content is at fault. Never a stack trace or a filesystem path.
 */
import * as z from 'zod';

export const errorDetailSchema = z.object({ path: z.string(), message: z.string() });
export type ErrorDetail = z.infer<typeof errorDetailSchema>;

export const errorBodySchema = z.looseObject({
  error: z.string().describe('a code: bad_request, unauthorized, forbidden, not_found, conflict, …'),
  message: z.string(),
  details: z.array(errorDetailSchema).optional(),
  file: z.string().optional(),
  commit: z.string().optional(),
});
export type ErrorBody = z.infer<typeof errorBodySchema>;
