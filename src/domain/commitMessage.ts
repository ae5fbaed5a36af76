/**
 * The commit message of a push: its change comment, then git trailers recording who pushed
 * (`git log --format='%(trailers)'` reads them back). Without a change comment the message holds
 * only the trailer lines; git then shows the first of them as the title.
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

/**
 * Written when the server has no provenance to record but the comment's end could read as a
 * trailer block: the server's own block then always comes last, so the comment's lines (a forged
 * `Token: release-admin`) stay in the comment for cfghub and for git alike (both read trailers
 * from the last paragraph only).
 */
const ANONYMOUS_TRAILER = 'Pushed-By: anonymous';

/**
 * Whether a comment's last paragraph holds a line git or parseCommitMessage could take for a
 * trailer cfghub writes (`Token: x`, `token:x`, ` Token : x`; generous on purpose). Other
 * `Name: value` lines (a default subject `Push: db.host`) record no provenance and are left alone.
 */
const OWN_TRAILER_LINE = /^\s*(?:application-name|token|client-version|pushed-by|approved-by|change-request)\s*:/i;

function endsLikeTrailers(comment: string): boolean {
  const paragraphs = comment.trimEnd().split(/\n[ \t]*\n/);
  return paragraphs[paragraphs.length - 1].split('\n').some((line) => OWN_TRAILER_LINE.test(line));
}

/**
 * `extra`: further trailers after the provenance, in order (a change request's `Change-Request`
 * and `Approved-By` lines).
 */
export function commitMessage(
  comment: string | undefined,
  provenance: PushProvenance,
  extra: readonly (readonly [string, string])[] = [],
): string {
  const trailers: string[] = [];
  const add = (name: string, value: string | undefined) => {
    const text = value === undefined ? '' : trailerValue(value);
    if (text) trailers.push(`${name}: ${text}`);
  };
  add('Application-Name', provenance.applicationName);
  add('Token', provenance.tokenLabel);
  add('Client-Version', provenance.clientVersion);
  for (const [name, value] of extra) add(name, value);
  if (trailers.length === 0 && comment && endsLikeTrailers(comment)) trailers.push(ANONYMOUS_TRAILER);
  const parts: string[] = [];
  if (comment) parts.push(comment.endsWith('\n') ? comment.slice(0, -1) : comment);
  if (trailers.length) parts.push(trailers.join('\n'));
  return parts.length ? `${parts.join('\n\n')}\n` : '';
}

export interface ParsedCommitMessage extends PushProvenance {
  /** The message without the trailer block cfghub writes: the change comment. */
  readonly comment: string;
}

const TRAILERS: Record<string, keyof PushProvenance> = {
  'application-name': 'applicationName',
  token: 'tokenLabel',
  'client-version': 'clientVersion',
};

/** Trailers cfghub writes that record nothing but mark its block as its own. */
const MARKERS = new Set(['pushed-by', 'approved-by', 'change-request']);

/**
 * Reads a commit message back: the last paragraph is the trailer block when each of its lines is
 * `Name: value` and at least one names a trailer cfghub writes (as `git interpret-trailers` sees a
 * block); everything before it is the comment. A message written with plain git is all comment,
 * unless it ends in such a block. commitMessage makes the last paragraph always the server's own
 * block when the comment ends like trailers, so comment text never reads as provenance.
 */
export function parseCommitMessage(message: string): ParsedCommitMessage {
  let end = message.length;
  while (end > 0 && message[end - 1] === '\n') end--; // a loop: /\n+$/ backtracks on a long run of newlines
  const text = message.slice(0, end);
  const cut = text.lastIndexOf('\n\n');
  const block = cut < 0 ? text : text.slice(cut + 2);
  const lines = block.split('\n');
  const provenance: { -readonly [K in keyof PushProvenance]: string } = {};
  let known = false;
  for (const line of lines) {
    const match = /^([A-Za-z0-9-]+): (.*)$/.exec(line);
    if (!match) return { comment: text };
    const name = match[1].toLowerCase();
    if (MARKERS.has(name)) known = true;
    const field = Object.hasOwn(TRAILERS, name) ? TRAILERS[name] : undefined;
    if (field) {
      provenance[field] = match[2];
      known = true;
    }
  }
  if (!known) return { comment: text };
  return { comment: cut < 0 ? '' : text.slice(0, cut), ...provenance };
}
