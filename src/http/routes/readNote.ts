/**
 * What a read served, for its log line: the repository, the label of the token it presented
 * (never the token), the context, the commit served and the caller's `Application-Name`. Filled
 * by the route once it knows them; read by the request log when the answer is sent.
 */
import type { IncomingMessage } from 'node:http';
import { formatContext, type Context } from '../../domain/context.js';
import type { AccessGrant } from '../../service/access/accessPolicy.js';
import { header } from '../answer/headers.js';

/** Longest Application-Name kept: a log line and a record entry stay small whatever is sent. */
export const MAX_APPLICATION_NAME = 120;

export interface ReadNote {
  repository?: string;
  tokenLabel?: string;
  context?: string;
  commit?: string;
  application?: string;
}

/** The caller's Application-Name header, cut to MAX_APPLICATION_NAME characters. */
export function applicationNameOf(req: IncomingMessage): string | undefined {
  return header(req, 'Application-Name')?.slice(0, MAX_APPLICATION_NAME);
}

export function noteRead(
  note: ReadNote,
  read: { readonly grant: AccessGrant; readonly commitId: string },
  context: Context | undefined,
  req?: IncomingMessage,
): void {
  note.repository = read.grant.repository.fullName;
  note.tokenLabel = read.grant.token?.label;
  note.context = context === undefined ? undefined : formatContext(context);
  note.commit = read.commitId;
  if (req) note.application = applicationNameOf(req);
}

/** The note as log fields (absent ones left out). */
export function readFields(note: ReadNote): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(note)) if (value !== undefined) fields[name] = value;
  return fields;
}
