/**
 * Which pull answers a change can reach, told from what changed between two commits (the tree
 * diff, treeDiff.ts) without making the answers: a push that changes one context's values wakes
 * the watchers of that context only, and the answers of the others are not made again
 * (watchHub.ts); a pull after it of a context it did not reach is served the answer before
 * it (answers.ts, the carry rule). Without it, a push made an answer for every watched context (1,000 of
 * them to find the one that changed), and every context polled after a push had its answer made.
 *
 * Only key changes are weighed, key by key (domain/keyReach.ts): a key that keeps its name, and
 * whose resolved value for the context (resolve.ts's rule, wildcards and context groups included)
 * is the same before and after, with the same fields where it resolves, reads the same there, in
 * the pull and in any template naming it. Every other change (a file, the settings, the security
 * groups, the access rules, the context groups, any other root entry, a document that does not
 * parse) may reach any context: the answer is made.
 */
import { parseRequestContext } from '../../domain/context.js';
import { readsTheSame } from '../../domain/keyReach.js';
import { requestContext } from '../../domain/resolve.js';
import type { GitRepository } from '../../disk/repository.js';
import { CacheSlot } from '../../layout/repositoryCaches.js';
import type { TreeChanges } from '../../layout/treeDiff.js';
import { changesBetween } from '../history/commitSummary.js';

/**
 * The changes between two commits, kept by the pair: a wake weighs every group of watchers, and
 * the pulls after a push every context, against the same pair (a push's parent and the push), so
 * the diff is made once. A few pairs only: a change may be a push of tens of thousands of keys.
 */
const CHANGES_BETWEEN_HEADS = new CacheSlot<Promise<TreeChanges>>('changes between answered commits', 4);

function changesOf(repository: GitRepository, from: string, to: string): Promise<TreeChanges> {
  const cache = repository.caches.slot(CHANGES_BETWEEN_HEADS);
  const key = `${from}..${to}`;
  let changes = cache.get(key);
  if (!changes) {
    const made = changesBetween(repository, from, to);
    cache.set(key, (changes = made));
    made.catch(() => {
      if (cache.peek(key) === made) cache.delete(key);
    });
  }
  return changes;
}

/**
 * The most values (before and after, over the changed keys) weighed for one context, in one piece
 * of work: 2.5 to 5 ms on the 2-core bench machine (16 ms the first time, before it is compiled).
 * A larger change (commits far apart, or one push of thousands of keys) may differ: its answer is
 * made, in slices.
 */
export const VALUES_WEIGHED = 20_000;

const onlyKeys = (changes: TreeChanges) =>
  changes.files.length === 0 &&
  !changes.settingsChanged &&
  changes.otherPaths.length === 0 &&
  changes.problems.length === 0;

/**
 * Whether the pull answer for `contextText` (the request's Context header) may differ at `to` from
 * the one at `from`: false only when it is known to be the same. Damage of the store is thrown.
 */
export async function pullMayDiffer(
  repository: GitRepository,
  from: string,
  to: string,
  contextText: string,
): Promise<boolean> {
  const changes = await changesOf(repository, from, to);
  if (!onlyKeys(changes)) return true;
  if (changes.keys.length === 0) return false;
  // The settings and context groups are the same at both commits (else not only keys changed).
  const snapshot = await repository.snapshot(to);
  const parsed = parseRequestContext(contextText, snapshot.settings.levels);
  if (!parsed.ok) return true; // the answer's making says what is wrong with it
  const request = requestContext(parsed.context, snapshot.groups());
  let values = 0;
  for (const key of changes.keys) {
    values += (key.before?.values.length ?? 0) + (key.after?.values.length ?? 0);
    if (values > VALUES_WEIGHED || !readsTheSame(key.before, key.after, request)) return true;
  }
  return false;
}
