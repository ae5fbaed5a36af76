/**
 * Change requests: a push body kept as a commit on top of the head it was made on, under
 * `refs/changes/<n>`, to be reviewed, approved by others and applied (or closed). What it changes
 * is checked at creation as a push is (access rules, value types, schemas, security groups), and
 * again at apply, where it is merged key by key and context by context onto the head
 * (mergeChange.ts) and committed through the service's write path with `Change-Request` and
 * `Approved-By` trailers. Its review (approvals, closing, applying) is a chain of commits under
 * `refs/change-reviews/<n>`, each holding the whole record as `review.json`.
 *
 * Identities are token labels (an admin token counts as its label). The author cannot approve
 * their own change request. Required approvals (requiredApproval.ts) are counted at apply.
 */
import { parseCommitMessage, commitMessage, type PushProvenance } from '../../domain/commitMessage.js';
import type { PushRequest } from '../../domain/pushRequest.js';
import { isoSeconds } from '../../lib/dates.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import {
  BLOB_MODE,
  encodeObject,
  parseCommit,
  parseTree,
  serializeCommit,
  serializeTree,
} from '../../git/gitObjects.js';
import type { GitRepository } from '../../disk/repository.js';
import {
  changeNumbers,
  changeRef,
  refValue,
  reviewRef,
  writeObjectsAndMoveRef,
} from '../../disk/records/changeRefs.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { ServiceError } from '../errors.js';
import { KeyRing } from '../security/keyRing.js';
import type { GroupKey } from '../security/sealing.js';
import { openFile, openValue } from '../security/unsealing.js';
import {
  baseAt,
  commitChange,
  headSnapshot,
  signature,
  stageOn,
  type CommitPlan,
  type Staging,
} from '../write/commit.js';
import { dryRun, type DryRunResult } from '../write/dryRun.js';
import { revertPlan } from '../history/revert.js';
import { restorePlan } from '../history/restore.js';
import { stagePush, type PushCaller } from '../write/push.js';
import type { Writer } from '../write/writeGuard.js';
import { conflictReason, mergeChangeSteps } from './mergeChange.js';
import { approverCount, requiredApprovalRefusalSteps, touchedRulesSteps } from './requiredApproval.js';
import { describeRule } from '../../domain/approvalRules.js';
import { DamagedSecretError } from '../errors.js';

export const MAX_TITLE = 200;
export const MAX_COMMENT = 10_000;
/** Change requests a listing shows, newest first. */
export const MAX_LISTED = 200;
/** Approvals one change request records. */
export const MAX_APPROVALS = 50;

export type ChangeStatus = 'open' | 'applied' | 'closed';

export interface ReviewEvent {
  readonly by: string;
  readonly at: string;
}

/** What `refs/change-reviews/<n>` records. */
export interface Review {
  readonly status: ChangeStatus;
  readonly approvals: readonly ReviewEvent[];
  readonly closed?: ReviewEvent;
  readonly applied?: ReviewEvent & { readonly commit: string };
}

export interface ChangeRequestSummary {
  readonly id: number;
  readonly title: string;
  readonly author: string;
  readonly created: string;
  readonly status: ChangeStatus;
  readonly approvals: readonly ReviewEvent[];
}

export interface ChangeRequest extends ChangeRequestSummary {
  readonly comment: string;
  /** The head it was made on, and its own commit (`refs/changes/<n>`). */
  readonly base: string;
  readonly commit: string;
  readonly closed?: ReviewEvent;
  readonly applied?: ReviewEvent & { readonly commit: string };
}

export interface ChangeRequestView extends ChangeRequest {
  /** The required-approval rules it touches on the current head, and whether it has enough approvals. */
  readonly requiredApprovals: {
    readonly rules: readonly string[];
    readonly needed: number;
    readonly approved: boolean;
  };
  /** What applying it would do now, on the current head, context by context (write/dryRun.ts); absent once applied or closed. */
  readonly preview?: DryRunResult;
}

/** Who acts on a change request: their token's label, rule set, security groups and provenance. */
export interface ChangeActor extends PushProvenance, Writer {
  /** The token's label (an admin token's label): the identity that is author or approver. */
  readonly identity: string;
  readonly forceKeyPush?: boolean;
  readonly groupKeys?: readonly GroupKey[];
}

const OPEN_REVIEW: Review = { status: 'open', approvals: [] };
const REVIEW_FILE = 'review.json';

function requireIdentity(actor: ChangeActor, what: string): string {
  if (!actor.identity) throw new ServiceError('unauthorized', `${what} needs a token: its label is the identity`);
  return actor.identity;
}

function checkText(title: string, comment: string): void {
  if (!title.trim()) throw new ServiceError('invalid_argument', 'a change request needs a title');
  if (title.length > MAX_TITLE || /[\u0000-\u001f\u007f]/.test(title))
    throw new ServiceError('invalid_argument', `the title must be one line of at most ${MAX_TITLE} characters`);
  if (comment.length > MAX_COMMENT || comment.includes('\u0000'))
    throw new ServiceError('invalid_argument', `the comment must be at most ${MAX_COMMENT} characters, without NUL`);
}

/** The commit message of a change request's own commit: title, comment, then its id and author as trailers. */
function changeMessage(id: number, title: string, comment: string, actor: ChangeActor): string {
  const text = comment.trim() ? `${title.trim()}\n\n${comment.trim()}` : title.trim();
  return commitMessage(text, { ...actor, tokenLabel: actor.identity }, [['Change-Request', String(id)]]);
}

/** Stages a change request's commit on the head with `message` (its number's) and `author`: a push body's, a revert's or a restore's. */
type StageChange = (message: string, author: string) => Promise<Staging>;

/**
 * Stores what `stage` makes as change request n+1 (n the highest so far). Checked as the write it
 * stands for is, but for required approvals (which it gathers); refused with that write's reason
 * (409, or 403 for the access rules) and nothing stored.
 */
async function storeChangeRequest(
  repository: GitRepository,
  title: string,
  comment: string,
  actor: ChangeActor,
  stage: StageChange,
): Promise<ChangeRequest> {
  const author = requireIdentity(actor, 'a change request');
  checkText(title, comment);
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = (changeNumbers(repository.gitdir).at(-1) ?? 0) + 1;
    const staging = await stage(changeMessage(id, title, comment, actor), author);
    if (staging.kind === 'refused')
      throw new ServiceError(
        staging.denied ? 'forbidden' : 'conflict',
        `the change request is refused: ${staging.reason}`,
      );
    if (staging.kind === 'unchanged')
      throw new ServiceError('conflict', 'the change request changes nothing on the head');
    const commit = staging.staged.commitId!;
    const move = await writeObjectsAndMoveRef(repository, staging.staged.objects, changeRef(id), null, commit);
    if (move === 'changed') continue; // another writer took number n meanwhile
    if (move === 'locked')
      throw new ServiceError('unavailable', 'the repository is busy with other writers; try again');
    return readChangeRequest(repository, id);
  }
  throw new ServiceError('unavailable', 'the repository is busy with other change requests; try again');
}

/** Stores a push body (keys, files, schemas) as a change request. */
export function createChangeRequest(
  repository: GitRepository,
  request: PushRequest,
  title: string,
  actor: ChangeActor,
): Promise<ChangeRequest> {
  const caller: PushCaller = { ...actor, tokenLabel: actor.identity, forceKeyPush: actor.forceKeyPush ?? false };
  return storeChangeRequest(repository, title, request.changeComment ?? '', actor, (message, author) =>
    stagePush(repository, request, caller, message, author),
  );
}

/** A revert (of a commit) or a restore (of a commit, tag or date), to be made as a change request. */
export interface RollbackRequest {
  readonly kind: 'revert' | 'restore';
  readonly target: string;
  readonly comment?: string;
}

/**
 * Stores a revert or restore as a change request: the commit it would make on the head, checked
 * as it is (its conflicts, access rules, security groups, schemas) but for the required approvals,
 * which the change request gathers; applied as any change request, merged onto the head then.
 */
export async function createRollbackChangeRequest(
  repository: GitRepository,
  rollback: RollbackRequest,
  title: string,
  actor: ChangeActor,
): Promise<ChangeRequest> {
  const head = await headSnapshot(repository, repository.head());
  const caller = {
    ...actor,
    tokenLabel: actor.identity,
    ring: KeyRing.of(head.securityGroups, actor.groupKeys ?? [], repository.fullName),
  };
  const planned =
    rollback.kind === 'revert'
      ? await revertPlan(repository, rollback.target, caller, false)
      : await restorePlan(repository, rollback.target, caller, false);
  const sentence =
    rollback.kind === 'revert'
      ? `This reverts commit ${planned.target}.`
      : `This restores the keys and files of commit ${planned.target}.`;
  const comment = rollback.comment?.trim() ? `${rollback.comment.trim()}\n\n${sentence}` : sentence;
  return storeChangeRequest(repository, title, comment, actor, async (message, author) => {
    const at = repository.head();
    const base = await baseAt(repository, at, planned.baseOf);
    const plan = async (on: Snapshot): Promise<CommitPlan> => {
      const made = await planned.plan(on);
      return made.ok ? { ...made, message } : made;
    };
    return stageOn(base, plan, actor, new TimeSlices(), {
      author: signature(author),
      checkAll: planned.baseOf !== undefined,
    });
  });
}

async function readObject(repository: GitRepository, oid: string): Promise<Buffer> {
  return (await repository.objects.read(oid)).content;
}

async function readReview(repository: GitRepository, id: number): Promise<{ review: Review; tip: string | null }> {
  const tip = refValue(repository, reviewRef(id));
  if (tip === null) return { review: OPEN_REVIEW, tip };
  const commit = parseCommit(await readObject(repository, tip));
  const entry = parseTree(await readObject(repository, commit.tree)).find((e) => e.name === REVIEW_FILE);
  if (!entry) return { review: OPEN_REVIEW, tip };
  const review = JSON.parse((await readObject(repository, entry.oid)).toString('utf8')) as Review;
  return { review, tip };
}

function requireChangeCommit(repository: GitRepository, id: number): string {
  const commit = Number.isSafeInteger(id) && id > 0 ? refValue(repository, changeRef(id)) : null;
  if (commit === null)
    throw new ServiceError('not_found', `repository ${repository.fullName} has no change request ${id}`);
  return commit;
}

/** A change request as stored: its commit's message and author, and its review. */
export async function readChangeRequest(repository: GitRepository, id: number): Promise<ChangeRequest> {
  const commitId = requireChangeCommit(repository, id);
  const commit = parseCommit(await readObject(repository, commitId));
  const parsed = parseCommitMessage(commit.message);
  const [title, ...rest] = parsed.comment.split('\n');
  const { review } = await readReview(repository, id);
  return {
    id,
    title,
    comment: rest.join('\n').trim(),
    author: parsed.tokenLabel ?? commit.author.name,
    created: isoSeconds(new Date(commit.committedAt * 1000)),
    status: review.status,
    approvals: review.approvals,
    ...(review.closed ? { closed: review.closed } : {}),
    ...(review.applied ? { applied: review.applied } : {}),
    base: commit.parents[0],
    commit: commitId,
  };
}

/** The change requests, newest first (at most MAX_LISTED), optionally only those of one status. */
export async function listChangeRequests(
  repository: GitRepository,
  status?: ChangeStatus,
): Promise<ChangeRequestSummary[]> {
  const found: ChangeRequestSummary[] = [];
  const ids = changeNumbers(repository.gitdir).reverse();
  const slices = new TimeSlices();
  for (const id of ids) {
    const {
      comment: _comment,
      base: _base,
      commit: _commit,
      closed: _closed,
      applied: _applied,
      ...summary
    } = await readChangeRequest(repository, id);
    if (!status || summary.status === status) found.push(summary);
    if (found.length >= MAX_LISTED) break;
    await slices.pause();
  }
  return found;
}

/** The plan that applies change request `change` on a head: merged, checked for secured values the applier opens, with its trailers. */
function applyPlan(
  repository: GitRepository,
  change: ChangeRequest,
  snapshots: { base: Snapshot; mine: Snapshot },
  actor: ChangeActor,
  approvals: readonly ReviewEvent[],
  /** False for the preview: what changes is shown; approvals and the applier's groups are weighed at apply. */
  atApply: boolean,
): (head: Snapshot) => Promise<CommitPlan> {
  return async (head) => {
    const slices = new TimeSlices();
    const merge = await slices.run(mergeChangeSteps(snapshots.base, snapshots.mine, head));
    if (!merge.ok) return { ok: false, reason: conflictReason(change.id, merge.conflicts) };
    if (atApply) {
      const short = await slices.run(
        requiredApprovalRefusalSteps(head, merge.changes, repository.fullName, {
          author: change.author,
          approvedBy: approvals.map((a) => a.by),
        }),
      );
      if (short) return { ok: false, reason: short };
    }
    if (atApply && actor.ruleSet !== undefined && head.settings.accessControlsEnabled) {
      const document = merge.changes.schemas ? 'the schemas' : merge.changes.ruleSets ? 'the access rules' : undefined;
      if (document)
        throw new ServiceError(
          'forbidden',
          `You do not have write access for specified context: a token of rule set ${actor.ruleSet} cannot change ${document}`,
        );
    }
    const sealed = atApply ? sealedProblem(head, merge.changes, actor, repository.fullName) : undefined;
    if (sealed) return { ok: false, reason: sealed };
    const text = change.comment ? `${change.title}\n\n${change.comment}` : change.title;
    const message = commitMessage(text, { ...actor, tokenLabel: actor.identity }, [
      ['Change-Request', String(change.id)],
      ...approvals.map((a) => ['Approved-By', a.by] as const),
    ]);
    return { ok: true, changes: merge.changes, message };
  };
}

/**
 * Security groups at apply: each secured value and file the change request writes must belong to
 * a group of the head that the applier's token opens, with the group's current key (a group whose
 * password changed since the request was made cannot open what was sealed for it then).
 */
function sealedProblem(
  head: Snapshot,
  changes: import('../../domain/model.js').PushChanges,
  actor: ChangeActor,
  fullName: string,
): string | undefined {
  const ring = KeyRing.of(head.securityGroups, actor.groupKeys ?? [], fullName);
  try {
    for (const key of changes.keys.values()) {
      if (!key?.securityGroup) continue;
      const before = head.key(key.key.toLowerCase());
      for (const value of key.values) {
        const was = before?.values.find(
          (v) => v.context.join(';').toLowerCase() === value.context.join(';').toLowerCase(),
        );
        if (was && was.value === value.value && was.active === value.active) continue;
        if (!openValue(key, value, ring))
          return `key ${key.key} is in security group ${key.securityGroup}: applying a change to it needs a token of that group`;
      }
    }
    for (const file of changes.files.values())
      if (file?.securityGroup && !openFile(file, ring))
        return `file ${file.path} is in security group ${file.securityGroup}: applying a change to it needs a token of that group`;
  } catch (error) {
    if (error instanceof DamagedSecretError)
      return `a secured value of the change request no longer opens with its group's key (the group's password changed since it was made): make a new change request`;
    throw error;
  }
  return undefined;
}

async function snapshotsOf(
  repository: GitRepository,
  change: ChangeRequest,
): Promise<{ base: Snapshot; mine: Snapshot }> {
  const [base, mine] = await Promise.all([repository.snapshot(change.base), repository.snapshot(change.commit)]);
  return { base, mine };
}

function requireOpen(change: ChangeRequest, what: string): void {
  if (change.status !== 'open')
    throw new ServiceError('conflict', `change request ${change.id} is ${change.status}: it cannot be ${what}`);
}

/** A change request with what it needs and what applying it would do on the current head. */
export async function showChangeRequest(
  repository: GitRepository,
  id: number,
  viewer: { readonly groupKeys?: readonly GroupKey[] },
): Promise<ChangeRequestView> {
  const change = await readChangeRequest(repository, id);
  const snapshots = await snapshotsOf(repository, change);
  const head = await headSnapshot(repository, repository.head());
  const slices = new TimeSlices();
  const merge = await slices.run(mergeChangeSteps(snapshots.base, snapshots.mine, head));
  const touched = merge.ok ? await slices.run(touchedRulesSteps(head, merge.changes)) : [];
  const needed = Math.max(0, ...touched.map((one) => one.rule.approvals));
  const requiredApprovals = {
    rules: touched.map((one) => describeRule(one.rule)),
    needed,
    approved: approverCount({ author: change.author, approvedBy: change.approvals.map((a) => a.by) }) >= needed,
  };
  if (change.status !== 'open') return { ...change, requiredApprovals };
  const ring = () => KeyRing.of(head.securityGroups, viewer.groupKeys ?? [], repository.fullName);
  const actor: ChangeActor = { identity: change.author };
  const preview = await dryRun(
    repository,
    applyPlan(repository, change, snapshots, actor, change.approvals, false),
    undefined,
    {
      ring,
    },
  );
  return { ...change, requiredApprovals, preview };
}

/** Records one more review event: the review ref moved by compare-and-swap from the tip read. */
async function recordReview(
  repository: GitRepository,
  id: number,
  event: string,
  next: (change: ChangeRequest) => Review | undefined,
): Promise<ChangeRequest> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const { tip } = await readReview(repository, id);
    const change = await readChangeRequest(repository, id);
    const review = next(change);
    if (!review) return change;
    const blob = encodeObject('blob', Buffer.from(`${JSON.stringify(review, null, 2)}\n`));
    const tree = encodeObject('tree', serializeTree([{ name: REVIEW_FILE, mode: BLOB_MODE, oid: blob.oid }]));
    const who = signature();
    const commit = encodeObject(
      'commit',
      serializeCommit({
        tree: tree.oid,
        parents: tip ? [tip] : [],
        author: who,
        committer: who,
        message: `${event}\n\nChange-Request: ${id}\n`,
      }),
    );
    const move = await writeObjectsAndMoveRef(repository, [blob, tree, commit], reviewRef(id), tip, commit.oid);
    if (move === 'moved') return readChangeRequest(repository, id);
    if (move === 'locked') break;
  }
  throw new ServiceError('unavailable', 'the repository is busy with other reviewers; try again');
}

const reviewOf = (change: ChangeRequest): Review => ({
  status: change.status,
  approvals: change.approvals,
  ...(change.closed ? { closed: change.closed } : {}),
  ...(change.applied ? { applied: change.applied } : {}),
});

/** Approves a change request as `actor`; the author's own approval is refused. Approving twice changes nothing. */
export function approveChangeRequest(
  repository: GitRepository,
  id: number,
  actor: ChangeActor,
): Promise<ChangeRequest> {
  const identity = requireIdentity(actor, 'an approval');
  return recordReview(repository, id, `Approve change request ${id}\n\nApproved-By: ${identity}`, (change) => {
    requireOpen(change, 'approved');
    if (change.author.toLowerCase() === identity.toLowerCase())
      throw new ServiceError(
        'forbidden',
        `${identity} is the author of change request ${id}: an approval must come from another identity`,
      );
    if (change.approvals.some((a) => a.by.toLowerCase() === identity.toLowerCase())) return undefined;
    if (change.approvals.length >= MAX_APPROVALS)
      throw new ServiceError('conflict', `change request ${id} has ${MAX_APPROVALS} approvals, the most it records`);
    return { ...reviewOf(change), approvals: [...change.approvals, { by: identity, at: isoSeconds(new Date()) }] };
  });
}

/** Closes an open change request without applying it. */
export function closeChangeRequest(repository: GitRepository, id: number, actor: ChangeActor): Promise<ChangeRequest> {
  const identity = requireIdentity(actor, 'closing a change request');
  return recordReview(repository, id, `Close change request ${id}\n\nClosed-By: ${identity}`, (change) => {
    requireOpen(change, 'closed');
    return { ...reviewOf(change), status: 'closed', closed: { by: identity, at: isoSeconds(new Date()) } };
  });
}

/** Applies made in this process, by repository and change request: one at a time. */
const applying = new Set<string>();

/**
 * Applies an open change request: merged onto the head, checked as a push is (access rules of the
 * applier's token, schemas, security groups) and against the required approvals, committed with
 * its trailers; then recorded as applied. A conflict is refused (409) naming each key and context.
 */
export async function applyChangeRequest(
  repository: GitRepository,
  id: number,
  actor: ChangeActor,
): Promise<{ change: ChangeRequest; commit: string }> {
  const identity = requireIdentity(actor, 'applying a change request');
  const slot = `${repository.gitdir}\n${id}`;
  if (applying.has(slot)) throw new ServiceError('conflict', `change request ${id} is being applied`);
  applying.add(slot);
  try {
    const change = await readChangeRequest(repository, id);
    requireOpen(change, 'applied');
    const snapshots = await snapshotsOf(repository, change);
    const result = await commitChange(
      repository,
      applyPlan(repository, change, snapshots, actor, change.approvals, true),
      { writer: actor },
    );
    const commit = result.commitId;
    const applied = await recordReview(
      repository,
      id,
      `Apply change request ${id}\n\nApplied-By: ${identity}`,
      (now) => {
        requireOpen(now, 'applied');
        return { ...reviewOf(now), status: 'applied', applied: { by: identity, at: isoSeconds(new Date()), commit } };
      },
    );
    return { change: applied, commit };
  } finally {
    applying.delete(slot);
  }
}
