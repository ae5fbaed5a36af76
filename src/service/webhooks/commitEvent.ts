/**
 * The body a webhook receives for a commit: the repository, the commit and its parent, the
 * comment, the label of the token that pushed it (never the token), the keys and files it changed,
 * and how many contexts' answers it changed. The contexts weighed are those the server has seen
 * read from the repository (the read record, service/read/readRecord.ts), at most
 * MAX_CONTEXTS_WEIGHED of them, each with the rule watches use (answers/changeReach.ts).
 */
import type { GitRepository } from '../../disk/repository.js';
import { commitInfo } from '../../layout/timeTravel.js';
import { pullMayDiffer } from '../answers/changeReach.js';
import { commitSummary } from '../history/commitSummary.js';

/** Keys and files named in a body at most; the counts are always whole. */
export const MAX_NAMES = 200;
/** Contexts weighed per commit at most. */
export const MAX_CONTEXTS_WEIGHED = 1_000;

export interface CommitEventBody {
  readonly event: 'commit';
  readonly repository: string;
  readonly commit: string;
  readonly parent: string | null;
  readonly date: string;
  readonly comment: string;
  readonly token: string | null;
  readonly application: string | null;
  readonly keysChanged: number;
  readonly keys: readonly string[];
  readonly filesChanged: number;
  readonly files: readonly { path: string; context: string }[];
  readonly settingsChanged: boolean;
  readonly contexts: { readonly changed: number; readonly weighed: number };
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function commitEventBody(
  repository: GitRepository,
  commit: string,
  contextsRead: readonly string[],
): Promise<CommitEventBody> {
  const [summary, info] = await Promise.all([commitSummary(repository, commit), commitInfo(repository, commit)]);
  const parent = info.parents[0] ?? null;
  let changed = 0;
  const weighed = contextsRead.slice(0, MAX_CONTEXTS_WEIGHED);
  for (const context of weighed) {
    if (parent === null || (await pullMayDiffer(repository, parent, commit, context))) changed++;
    await yieldToLoop(); // one context's weighing per turn of the event loop
  }
  return {
    event: 'commit',
    repository: repository.fullName,
    commit,
    parent,
    date: summary.date,
    comment: summary.comment,
    token: summary.token ?? null,
    application: summary.applicationName ?? null,
    keysChanged: summary.keys.length,
    keys: summary.keys.slice(0, MAX_NAMES).map((key) => key.key),
    filesChanged: summary.files.length,
    files: summary.files.slice(0, MAX_NAMES).map((file) => ({ path: file.path, context: file.context })),
    settingsChanged: summary.settings === true,
    contexts: { changed, weighed: weighed.length },
  };
}
