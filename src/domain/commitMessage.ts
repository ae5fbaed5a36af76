/**
 * The commit message of a push: its change comment, then git trailers recording who pushed
 * (`git log --format='%(trailers)'` reads them back). Without a change comment the message holds
 * only the trailer lines (contract section 6); git then shows the first of them as the title.
 */

export interface PushProvenance {
  readonly applicationName?: string;
  readonly tokenLabel?: string;
  readonly clientVersion?: string;
}

const MAX_TRAILER = 200;

/** A trailer value: one line of printable characters, trimmed. */
function trailerValue(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > MAX_TRAILER ? line.slice(0, MAX_TRAILER) : line;
}

export function commitMessage(comment: string | undefined, provenance: PushProvenance): string {
  const trailers: string[] = [];
  const add = (name: string, value: string | undefined) => {
    const text = value === undefined ? '' : trailerValue(value);
    if (text) trailers.push(`${name}: ${text}`);
  };
  add('Application-Name', provenance.applicationName);
  add('Token', provenance.tokenLabel);
  add('Client-Version', provenance.clientVersion);
  const parts: string[] = [];
  if (comment) parts.push(comment.endsWith('\n') ? comment.slice(0, -1) : comment);
  if (trailers.length) parts.push(trailers.join('\n'));
  return parts.length ? `${parts.join('\n\n')}\n` : '';
}
