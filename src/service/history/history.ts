/**
 * The history of a repository: its commits newest first, following first
 * parents from the head as `git log --first-parent` does, each with what it changed. Commits made
 * with plain git are listed like any other. A page walks only as far back as it needs: the first
 * page of 50 reads 50 commits, whatever the length of the history.
 */
import { keyId } from '../../domain/names.js';
import { commitInfo } from '../../layout/timeTravel.js';
import type { GitRepository } from '../../disk/repository.js';
import { commitSummary, type CommitSummary } from './commitSummary.js';
import { resolveCommitId } from '../read/historyPoints.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { outsideCommitFlag, type SchemaBreaks } from '../schemas/outsideCommits.js';

export const DEFAULT_HISTORY_LIMIT = 50;
export const MAX_HISTORY_LIMIT = 1000;
/** Commits summarized together while looking for those a filter matches. */
const FILTERED_BATCH = 32;

export interface HistoryQuery {
  readonly limit: number;
  /** List the commits older than this one. */
  readonly before?: string;
  /** Only commits that changed this key (any case). */
  readonly key?: string;
  /** Only commits that changed a variant of this file (any context). */
  readonly file?: string;
}

/** A commit of the history; one made outside cfghub that broke the schemas says what (outsideCommits.ts). */
export type HistoryCommit = CommitSummary & { readonly schemaBreaks?: SchemaBreaks };

export interface HistoryPage {
  readonly commits: readonly HistoryCommit[];
  /** The `Before` that gives the next page; absent when the history ends here. */
  readonly nextBefore?: string;
}

function matcher(query: HistoryQuery): (summary: CommitSummary) => boolean {
  const id = query.key === undefined ? undefined : keyId(query.key);
  const file = query.file?.replace(/^\//, '');
  return (summary) =>
    (id === undefined || summary.keys.some((key) => keyId(key.key) === id)) &&
    (file === undefined || summary.files.some((f) => f.path === file));
}

/** `head` is the head as the caller read it, so one request reads the ref once. */
export async function history(repository: GitRepository, head: string, query: HistoryQuery): Promise<HistoryPage> {
  let next: string | undefined = head;
  if (query.before !== undefined) {
    const before = await resolveCommitId(repository, query.before, 'Before');
    next = (await commitInfo(repository, before)).parents[0];
  }
  const matches = matcher(query);
  const commits: HistoryCommit[] = [];
  const slices = new TimeSlices();
  while (next !== undefined) {
    // The next commits along first parents, then their summaries, one at a time with a turn of the
    // event loop every time slice (timeSlices.ts), so that other requests wait no more than that.
    const batch: string[] = [];
    const size = query.key === undefined && query.file === undefined ? query.limit - commits.length : FILTERED_BATCH;
    for (; next !== undefined && batch.length < size; next = (await commitInfo(repository, next)).parents[0])
      batch.push(next);
    const summaries: HistoryCommit[] = [];
    for (const id of batch) {
      const summary = await commitSummary(repository, id, slices);
      const schemaBreaks = await outsideCommitFlag(repository, id, slices);
      summaries.push(schemaBreaks ? { ...summary, schemaBreaks } : summary);
      await slices.pause(); // a page of commits never summarized is tens of milliseconds of work
    }
    for (const summary of summaries) {
      if (!matches(summary)) continue;
      commits.push(summary);
      if (commits.length === query.limit) {
        const more = (await commitInfo(repository, summary.id)).parents.length > 0;
        return { commits, ...(more ? { nextBefore: summary.id } : {}) };
      }
    }
  }
  return { commits };
}
