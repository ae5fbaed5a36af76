/**
 * `revert`: a new commit that undoes one commit of the history, as `git revert`
 * does, through the same commit path as a push. Each key facet (field, value by context) and each
 * file variant the commit changed gets its content from before the commit again; when a later
 * commit changed it since, the revert is refused naming it, and nothing changes.
 */
import { brokenReference } from '../../domain/brokenReference.js';
import { commitMessage, parseCommitMessage, type PushProvenance } from '../../domain/commitMessage.js';
import { revertKey } from '../../domain/keyChanges.js';
import type { FileRecord, KeyRecord } from '../../domain/model.js';
import { commitInfo } from '../../layout/timeTravel.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import type { FileSide, TreeChanges } from '../../layout/treeDiff.js';
import { commitChange, requireHead, type BaseOf, type CommitPlan } from '../write/commit.js';
import { dryRun, type DryRunResult } from '../write/dryRun.js';
import { heldToRequiredApprovals, rollbackInstead } from '../changes/requiredApproval.js';
import { ServiceError } from '../errors.js';
import { KeyRing } from '../security/keyRing.js';
import { resolveCommitId } from '../read/historyPoints.js';
import type { Writer } from '../write/writeGuard.js';
import { documentSides, isRevertableDocument, withDocuments } from './revertDocuments.js';
import { fileRecord, readableChanges, rollbackComment } from './rollbackChanges.js';

export interface RollbackCaller extends PushProvenance, Writer {
  /** The change comment; a default naming what is rolled back otherwise. */
  readonly comment?: string;
  /** The security groups the caller unlocked at the head (a restore changing secured keys needs them). */
  readonly ring?: KeyRing;
  /** The head the caller saw (`If-Match`, the head its preview was made on): refused as a precondition failure on another. */
  readonly ifMatch?: string;
}

export interface RollbackResult {
  readonly kind: 'applied' | 'unchanged';
  readonly commitId: string;
}

const sideText = (side: FileSide | null | undefined) => (side ? `${side.active} ${side.blobId}` : 'absent');

/** Whether `commitId` is on the first-parent history of `head`. */
async function inHistory(repository: GitRepository, head: string, commitId: string): Promise<boolean> {
  for (let at: string | undefined = head; at !== undefined; at = (await commitInfo(repository, at)).parents[0]) {
    if (at === commitId) return true;
  }
  return false;
}

/**
 * Secured keys and files are written only with their group's key, which a revert does
 * not have: it would put back ciphertexts made under a key the group may no longer hold.
 */
function securedReason(
  short: string,
  what: string,
  ...records: (KeyRecord | FileRecord | null | undefined)[]
): string | undefined {
  const group = records.find((record) => record?.securityGroup !== undefined)?.securityGroup;
  if (group === undefined) return undefined;
  return `cannot revert commit ${short}: ${what} is in security group ${group}; revert does not change secured keys and files, push them with the group's password`;
}

async function undoPlan(
  repository: GitRepository,
  base: Snapshot,
  commitId: string,
  changes: TreeChanges,
  message: string,
): Promise<CommitPlan> {
  const short = commitId.slice(0, 12);
  if (!(await inHistory(repository, base.commitId, commitId))) {
    throw new ServiceError('not_found', `commit ${commitId} is not in the history of ${repository.fullName}`);
  }
  const keys = new Map<string, KeyRecord | null>();
  for (const change of changes.keys) {
    const secured = securedReason(
      short,
      `key ${(change.after ?? change.before)!.key}`,
      change.before,
      change.after,
      base.key(change.id),
    );
    if (secured) return { ok: false, reason: secured };
    const reverted = revertKey(change.before, change.after, base.key(change.id) ?? null);
    if (!reverted.ok) return { ok: false, reason: `cannot revert commit ${short}: ${reverted.reason}` };
    keys.set(change.id, reverted.record);
  }
  const files = new Map<string, FileRecord | null>();
  for (const change of changes.files) {
    const entry = base.fileEntries.get(change.id);
    const head = sideText(entry && { active: entry.record.active, blobId: entry.blobId });
    if (head === sideText(change.before)) continue;
    if (head !== sideText(change.after)) {
      return {
        ok: false,
        reason: `cannot revert commit ${short}: file ${change.path} (context ${change.context.join(';')}) was changed again by a later commit`,
      };
    }
    const before = change.before ? await fileRecord(repository, change, change.before) : null;
    const secured = securedReason(short, `file ${change.path}`, before, entry?.record);
    if (secured) return { ok: false, reason: secured };
    files.set(change.id, before);
  }
  const broken = brokenReference(base, { keys, files });
  if (broken) return { ok: false, reason: `cannot revert commit ${short}: ${broken}` };
  return { ok: true, changes: { keys, files }, message };
}

/** What a revert commits: its plan on a head (the commit to undo read once, outside the queue). */
export interface RollbackPlan {
  readonly plan: (base: Snapshot) => Promise<CommitPlan>;
  /** The state the commit is staged on, when it is not the head's (restore). */
  readonly baseOf?: BaseOf;
  /** The commit or point rolled back, for the refusals' words. */
  readonly target: string;
}

/**
 * The revert of `commitText` as a plan on a head. `direct` (a revert committed at once) is held
 * to the repository's required approvals; a change request of it (service/changes/) is not, it
 * gathers them.
 */
export async function revertPlan(
  repository: GitRepository,
  commitText: string,
  caller: RollbackCaller,
  direct: boolean,
): Promise<RollbackPlan> {
  if (caller.comment?.includes('\u0000'))
    throw new ServiceError('invalid_argument', 'the comment contains a NUL character');
  const commitId = await resolveCommitId(repository, commitText, 'the commit to revert');
  const info = await commitInfo(repository, commitId);
  const parent = info.parents[0];
  if (parent === undefined)
    throw new ServiceError('conflict', `commit ${commitId.slice(0, 12)} created the repository; it cannot be reverted`);
  const changes = await readableChanges(repository, parent, commitId);
  const documents = changes.otherPaths.filter(isRevertableDocument);
  const others = changes.otherPaths.filter((path) => !isRevertableDocument(path));
  if (changes.settingsChanged || others.length) {
    const what = changes.settingsChanged ? 'repository.yaml' : others.join(', ');
    throw new ServiceError(
      'conflict',
      `commit ${commitId.slice(0, 12)} changed ${what}, which revert does not undo; change it with git`,
    );
  }
  const title = parseCommitMessage(info.message).comment.split('\n')[0];
  const comment = rollbackComment(
    caller.comment,
    title ? `Revert "${title}"` : `Revert ${commitId.slice(0, 12)}`,
    `This reverts commit ${commitId}.`,
  );
  const message = commitMessage(comment, caller);
  const sides = documents.length ? await documentSides(repository, parent, commitId) : undefined;
  const plan = async (base: Snapshot): Promise<CommitPlan> => {
    requireHead(base, caller.ifMatch);
    const planned = await undoPlan(repository, base, commitId, changes, message);
    const full = planned.ok && sides ? withDocuments(planned, base, sides, commitId, caller) : planned;
    if (!full.ok || !direct) return full;
    return heldToRequiredApprovals(repository, base, full, rollbackInstead(repository.fullName, 'revert', commitId));
  };
  return { plan, target: commitId };
}

export async function revert(
  repository: GitRepository,
  commitText: string,
  caller: RollbackCaller,
): Promise<RollbackResult> {
  const { plan } = await revertPlan(repository, commitText, caller, true);
  return commitChange(repository, plan, { writer: caller });
}

/**
 * The revert run dry (write/dryRun.ts): everything the revert runs (its conflicts, the access
 * rules, the required approvals, the schemas), nothing written, and what each context would read
 * after it; secured values shown opened only for the groups the caller opened.
 */
export async function dryRunRevert(
  repository: GitRepository,
  commitText: string,
  caller: RollbackCaller,
  contexts: readonly string[] = [],
): Promise<DryRunResult> {
  const { plan } = await revertPlan(repository, commitText, caller, true);
  return dryRun(repository, plan, caller, { contexts, ring: () => caller.ring ?? KeyRing.EMPTY });
}
