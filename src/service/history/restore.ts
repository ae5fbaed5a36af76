/**
 * `restore`: a new commit whose keys and files equal those of an earlier point
 * (a commit, a tag or a date), through the same commit path as a push. History is never rewritten:
 * the commits since stay, and the restore is one more. The repository's settings
 * (`repository.yaml`) are left as they are. Restoring the current state makes no commit.
 *
 * The commit is staged on the point's own snapshot, re-parented on the head: nothing of the head
 * but its settings is read, so a head whose content breaks the layout rules (a bad commit made
 * with plain git) can be restored away.
 */
import { commitMessage } from '../../domain/commitMessage.js';
import { commitInfo } from '../../layout/timeTravel.js';
import { parseTree } from '../../git/gitObjects.js';
import { SECURITY_GROUPS_FILE } from '../../layout/layout.js';
import { readSettings } from '../../layout/readSettings.js';
import type { GitRepository } from '../../disk/repository.js';
import { Snapshot } from '../../layout/snapshot.js';
import { commitChange, requireHead, type BaseOf, type CommitPlan } from '../write/commit.js';
import { dryRun, type DryRunResult } from '../write/dryRun.js';
import { heldToRequiredApprovals, rollbackInstead } from '../changes/requiredApproval.js';
import { KeyRing } from '../security/keyRing.js';
import { checkSecuredRestore } from './restoreGroups.js';
import { ServiceError } from '../errors.js';
import { guardProblem, snapshotChanges, type Writer } from '../write/writeGuard.js';
import { resolvePoint } from '../read/historyPoints.js';
import type { RollbackCaller, RollbackPlan, RollbackResult } from './revert.js';
import { rollbackComment } from './rollbackChanges.js';
import { LayoutError } from '../../layout/errors.js';
import { NO_SCHEMAS } from '../../domain/schemas.js';

/**
 * The point's state, as if it were the head: the head's commit, tree, settings and security groups
 * (a restore never brings back an old password or wrapped key), the point's keys
 * and files. Secured keys and files that differ need their group's key (restoreGroups.ts).
 */
async function pointOnHead(repository: GitRepository, head: string, point: Snapshot, ring: KeyRing): Promise<Snapshot> {
  const { tree } = await commitInfo(repository, head);
  let stored = { settings: point.settings, blobId: point.settingsBlobId };
  try {
    stored = await readSettings(repository, head);
  } catch (error) {
    if (!(error instanceof LayoutError)) throw error; // unreadable settings at the head: the point's repair them
  }
  // The head's access rules and schemas stay, like its settings: a restore cannot bring back rules that were loosened.
  const rules = await headRules(repository, head);
  let groups: Pick<Snapshot, 'securityGroups' | 'securityGroupsBlobId'> = {
    securityGroups: [],
    securityGroupsBlobId: undefined,
  };
  try {
    const now = await repository.snapshot(head);
    checkSecuredRestore(now, point, ring, point.commitId.slice(0, 12));
    groups = now;
  } catch (error) {
    if (!(error instanceof LayoutError)) throw error;
    // A head that breaks the layout can be restored away only where no security group is involved.
    const headGroups = parseTree((await repository.objects.read(tree)).content).some(
      (entry) => entry.name === SECURITY_GROUPS_FILE,
    );
    if (headGroups || point.securityGroupsBlobId !== undefined) {
      throw error.within(
        `the head cannot be read, so restoring commit ${point.commitId.slice(0, 12)} cannot check its security groups; mend the head with git`,
      );
    }
  }
  return new Snapshot({
    ...point,
    commitId: head,
    treeId: tree,
    settings: stored.settings,
    settingsBlobId: stored.blobId,
    securityGroups: groups.securityGroups,
    securityGroupsBlobId: groups.securityGroupsBlobId,
    ...rules,
  });
}

async function headRules(
  repository: GitRepository,
  head: string,
): Promise<Pick<Snapshot, 'ruleSets' | 'ruleSetsBlobId' | 'schemas' | 'schemasBlobId'>> {
  try {
    const snapshot = await repository.snapshot(head);
    return {
      ruleSets: snapshot.ruleSets,
      ruleSetsBlobId: snapshot.ruleSetsBlobId,
      schemas: snapshot.schemas,
      schemasBlobId: snapshot.schemasBlobId,
    };
  } catch (error) {
    if (error instanceof LayoutError)
      return { ruleSets: [], ruleSetsBlobId: undefined, schemas: NO_SCHEMAS, schemasBlobId: undefined };
    throw error;
  }
}

/** A writer of a rule set may restore only when its rules allow every element the restore changes. */
async function rulesAllow(
  repository: GitRepository,
  base: Snapshot,
  writer: Writer | undefined,
): Promise<string | undefined> {
  if (writer?.ruleSet === undefined || !base.settings.accessControlsEnabled) return undefined;
  let head: Snapshot;
  try {
    head = await repository.snapshot(base.commitId);
  } catch (error) {
    if (error instanceof LayoutError)
      return `You do not have write access for specified context: the head cannot be read to check the rules of rule set ${writer.ruleSet}`;
    throw error;
  }
  const changes = snapshotChanges(head, base);
  return guardProblem(head, changes, writer)?.reason;
}

/**
 * The restore of `pointText` as a plan on a head, staged on the point's own state over the head's
 * settings. `direct` (a restore committed at once) is held to the repository's required
 * approvals; a change request of it (service/changes/) is not, it gathers them.
 */
export async function restorePlan(
  repository: GitRepository,
  pointText: string,
  caller: RollbackCaller & Writer,
  direct: boolean,
): Promise<RollbackPlan & { baseOf: BaseOf }> {
  if (caller.comment?.includes('\u0000'))
    throw new ServiceError('invalid_argument', 'the comment contains a NUL character');
  const target = await resolvePoint(repository, repository.head(), pointText);
  let point: Snapshot;
  try {
    point = await repository.snapshot(target);
  } catch (error) {
    if (error instanceof LayoutError) throw error.within(`commit ${target.slice(0, 12)} cannot be restored`);
    throw error;
  }
  const fallback = pointText.toLowerCase() === target ? `Restore ${target.slice(0, 12)}` : `Restore ${pointText}`;
  const message = commitMessage(
    rollbackComment(caller.comment, fallback, `This restores the keys and files of commit ${target}.`),
    caller,
  );
  const nothing = { keys: new Map(), files: new Map() };
  const plan = async (base: Snapshot): Promise<CommitPlan> => {
    requireHead(base, caller.ifMatch);
    const denied = await rulesAllow(repository, base, caller);
    if (denied) return { ok: false, reason: denied, kind: 'context', denied: true };
    const planned: CommitPlan = { ok: true, changes: nothing, message };
    if (!direct) return planned;
    return heldToRequiredApprovals(
      repository,
      base,
      planned,
      rollbackInstead(repository.fullName, 'restore', pointText),
      true,
    );
  };
  const baseOf = (head: string) => pointOnHead(repository, head, point, caller.ring ?? KeyRing.EMPTY);
  return { plan, baseOf, target };
}

export async function restore(
  repository: GitRepository,
  pointText: string,
  caller: RollbackCaller & Writer,
): Promise<RollbackResult> {
  const { plan, baseOf } = await restorePlan(repository, pointText, caller, true);
  return commitChange(repository, plan, { baseOf });
}

/**
 * The restore run dry (write/dryRun.ts): staged on the point's state as the restore is, checked as
 * it is (the access rules, the security groups, the required approvals, the schemas), nothing
 * written, and what each context would read after it compared with the head; secured values shown
 * opened only for the groups the caller opened.
 */
export async function dryRunRestore(
  repository: GitRepository,
  pointText: string,
  caller: RollbackCaller & Writer,
  contexts: readonly string[] = [],
): Promise<DryRunResult> {
  const { plan, baseOf } = await restorePlan(repository, pointText, caller, true);
  return dryRun(repository, plan, undefined, { contexts, baseOf, ring: () => caller.ring ?? KeyRing.EMPTY });
}
