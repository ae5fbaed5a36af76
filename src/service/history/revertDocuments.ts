/**
 * Revert of the access rules and context groups documents: a commit that changed
 * `access-rules.yaml` or `context-groups.yaml` is undone like a key, putting back the document of
 * its parent, when no later commit changed the document since. A writer of a rule set may not
 * revert a change of the rules themselves (it could loosen its own rules); a change of the groups
 * it may revert where its rules allow every context whose answer that changes (the write guard).
 */
import type { RuleSet } from '../../domain/accessRules.js';
import type { ContextGroup } from '../../domain/contextGroups.js';
import { ACCESS_RULES_FILE, CONTEXT_GROUPS_FILE } from '../../layout/accessLayout.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import type { CommitPlan } from '../write/commit.js';
import { ServiceError } from '../errors.js';
import type { Writer } from '../write/writeGuard.js';

export function isRevertableDocument(path: string): boolean {
  return path === ACCESS_RULES_FILE || path === CONTEXT_GROUPS_FILE;
}

export interface DocumentSides {
  readonly before: Snapshot;
  readonly after: Snapshot;
}

export async function documentSides(
  repository: GitRepository,
  parent: string,
  commitId: string,
): Promise<DocumentSides> {
  return { before: await repository.snapshot(parent), after: await repository.snapshot(commitId) };
}

export function withDocuments(
  planned: CommitPlan & { ok: true },
  base: Snapshot,
  sides: DocumentSides,
  commitId: string,
  writer: Writer,
): CommitPlan {
  const short = commitId.slice(0, 12);
  let ruleSets: readonly RuleSet[] | undefined;
  let contextGroups: readonly ContextGroup[] | undefined;
  const rulesChanged = sides.before.ruleSetsBlobId !== sides.after.ruleSetsBlobId;
  const groupsChanged = sides.before.contextGroupsBlobId !== sides.after.contextGroupsBlobId;
  // A change of the groups is judged, like every commit's, by the contexts whose answers it changes (the write guard).
  if (rulesChanged && writer.ruleSet !== undefined) {
    throw new ServiceError(
      'forbidden',
      `You do not have write access for specified context: commit ${short} changed the access rules, which a token of rule set ${writer.ruleSet} cannot revert`,
    );
  }
  if (rulesChanged) {
    if (base.ruleSetsBlobId !== sides.before.ruleSetsBlobId) {
      if (base.ruleSetsBlobId !== sides.after.ruleSetsBlobId)
        return {
          ok: false,
          reason: `cannot revert commit ${short}: ${ACCESS_RULES_FILE} was changed again by a later commit`,
        };
      ruleSets = sides.before.ruleSets;
    }
  }
  if (groupsChanged && base.contextGroupsBlobId !== sides.before.contextGroupsBlobId) {
    if (base.contextGroupsBlobId !== sides.after.contextGroupsBlobId)
      return {
        ok: false,
        reason: `cannot revert commit ${short}: ${CONTEXT_GROUPS_FILE} was changed again by a later commit`,
      };
    contextGroups = sides.before.contextGroups;
  }
  return {
    ...planned,
    changes: { ...planned.changes, ...(ruleSets ? { ruleSets } : {}), ...(contextGroups ? { contextGroups } : {}) },
  };
}
