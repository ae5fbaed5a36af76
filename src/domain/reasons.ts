/**
 * Refusal reasons travel in the ETag header: a quoted, single-line, printable-ASCII text with no
 * `"` inside. Anything a client sent is shown through `shown()`, which keeps it short and safe.
 */

const MAX_SHOWN = 80;
const MAX_REASON = 400;

/** A client-supplied name (path, key, group) made safe to put in a reason. */
export function shown(text: string): string {
  const safe = text.replace(/[^\x20-\x7e]|"/g, '?');
  return safe.length > MAX_SHOWN ? `${safe.slice(0, MAX_SHOWN)}...` : safe;
}

/** A whole reason made safe for the ETag header. */
export function headerSafeReason(reason: string): string {
  const safe = reason.replace(/[^\x20-\x7e]|"/g, '?');
  return safe.length > MAX_REASON ? `${safe.slice(0, MAX_REASON)}...` : safe;
}

/** Removes anything that looks like an absolute path from a text bound for a log or stderr. */
export function withoutPaths(text: string): string {
  return text
    .replace(/(['"])(?:[A-Za-z]:)?[\\/][^'"]*\1/g, '$1<path>$1')
    .replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"\\/:]+){2,}/g, '<path>');
}
