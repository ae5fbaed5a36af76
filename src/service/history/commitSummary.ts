/**
 * What one commit changed, against its first parent, as history and diff report it: keys (with
 * their values by context), files by path and context, settings, and the layout problems met.
 * Summaries are kept per repository by commit id, as a commit never changes; the cache is bounded.
 */
import { isoSeconds } from '../../lib/dates.js';
import { isRepositoryDamage } from '../../domain/errors.js';
import { parseCommitMessage } from '../../domain/commitMessage.js';
import { formatContext } from '../../domain/context.js';
import { changeOf, summarizeKeyChange, type Change, type KeyChangeSummary } from '../../domain/keyChanges.js';
import { commitInfo } from '../../layout/timeTravel.js';
import type { GitRepository } from '../../disk/repository.js';
import { CacheSlot } from '../../layout/repositoryCaches.js';
import { diffTrees, type DiffSides, type TreeChanges } from '../../layout/treeDiff.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Steps } from '../../lib/steps.js';

export interface FileChangeSummary {
  readonly path: string;
  readonly context: string;
  readonly change: Change;
  /** The file's active flag, after the change (before it, for a deletion). */
  readonly active: boolean;
}

export interface ChangeSummary {
  readonly keys: readonly KeyChangeSummary[];
  readonly files: readonly FileChangeSummary[];
  /** Present and true when `repository.yaml` changed. */
  readonly settings?: true;
  /** Root entries besides cfghub's own that changed (commits made with plain git). */
  readonly other?: readonly string[];
  /** Content that breaks the layout rules, each naming the file and the commit. */
  readonly problems?: readonly string[];
}

export interface CommitSummary extends ChangeSummary {
  readonly id: string;
  readonly date: string;
  readonly comment: string;
  readonly applicationName?: string;
  readonly token?: string;
  readonly author: { readonly name: string; readonly email: string };
}

/** As steps (src/lib/steps.ts): a pause is safe after each key, as a commit may change tens of thousands. */
export function* summarizeChangesSteps(changes: TreeChanges): Steps<ChangeSummary> {
  const keys: KeyChangeSummary[] = [];
  for (const key of changes.keys) {
    keys.push(summarizeKeyChange(key.before, key.after));
    yield;
  }
  return {
    keys,
    files: changes.files.map((file) => ({
      path: file.path,
      context: formatContext(file.context),
      change: changeOf(file.before, file.after),
      active: (file.after ?? file.before)!.active,
    })),
    ...(changes.settingsChanged ? { settings: true as const } : {}),
    ...(changes.otherPaths.length ? { other: changes.otherPaths } : {}),
    ...(changes.problems.length ? { problems: changes.problems } : {}),
  };
}

/** The changes between two commits, never thrown for bad content (an unparsable tree is a problem too); damage of the store is thrown. */
export async function changesBetween(
  repository: GitRepository,
  before: string | undefined,
  after: string,
  slices = new TimeSlices(),
): Promise<TreeChanges> {
  try {
    const side = async (commitId: string) => ({
      commitId,
      treeId: (await commitInfo(repository, commitId)).tree,
      snapshot: repository.builtSnapshot(commitId),
    });
    const sides: DiffSides = {
      before: before === undefined ? undefined : await side(before),
      after: await side(after),
    };
    return await diffTrees(repository, sides, slices);
  } catch (error) {
    if (isRepositoryDamage(error)) throw error;
    const problem = `commit ${after.slice(0, 12)} cannot be read: ${(error as Error).message}`;
    return { keys: [], files: [], settingsChanged: false, otherPaths: [], problems: [problem] };
  }
}

/** Change summaries kept per repository (the repository's caches own them). */
const SUMMARIES = new CacheSlot<CommitSummary>('commit summaries', 20_000);

/** A commit with what it changed against its first parent; made once per commit, in `slices`. */
export async function commitSummary(
  repository: GitRepository,
  commitId: string,
  slices = new TimeSlices(),
): Promise<CommitSummary> {
  const cache = repository.caches.slot(SUMMARIES);
  const known = cache.get(commitId);
  if (known) return known;
  const info = await commitInfo(repository, commitId);
  const message = parseCommitMessage(info.message);
  const summary: CommitSummary = {
    id: commitId,
    date: isoSeconds(new Date(info.committedAt * 1000)),
    comment: message.comment,
    ...(message.applicationName !== undefined ? { applicationName: message.applicationName } : {}),
    ...(message.tokenLabel !== undefined ? { token: message.tokenLabel } : {}),
    author: info.author,
    ...(await slices.run(summarizeChangesSteps(await changesBetween(repository, info.parents[0], commitId, slices)))),
  };
  cache.set(commitId, summary);
  return summary;
}
