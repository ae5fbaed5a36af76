/**
 * The subject line of a push sent without a `changeComment`: `Push: ` and the names of
 * the first keys and files it sends, so `git log --oneline` and the history never show an empty
 * title (a message of the trailers alone, which git then showed
 * as the title).
 */
import type { PushElement } from './pushRequest.js';

/** Names listed before `and N more`, and the longest name shown whole. */
const NAMES = 3;
const NAME_LENGTH = 60;

export function defaultPushSubject(data: readonly PushElement[]): string {
  const names: string[] = [];
  const seen = new Set<string>();
  let others = 0;
  for (const element of data) {
    const name = element.kind === 'key' ? element.key : element.file;
    if (seen.has(name)) continue;
    seen.add(name);
    if (names.length < NAMES) names.push(name.length > NAME_LENGTH ? `${name.slice(0, NAME_LENGTH)}…` : name);
    else others++;
  }
  if (names.length === 0) return 'Push';
  return `Push: ${names.join(', ')}${others ? ` and ${others} more` : ''}`;
}
