/**
 * The push transaction: validate against the head and commit, through the one commit path
 * (commit.ts: the queue, durable objects, the ref moved by compare-and-swap, retried on a new head
 * when another process moved the ref), in a group with the pushes waiting beside it. Secured keys and files are opened for the groups the
 * pusher holds (element passwords, the token's groups) and sealed again before staging.
 */
import { applyPushSteps, type RefusalKind } from '../../domain/applyPush.js';
import { commitMessage, type PushProvenance } from '../../domain/commitMessage.js';
import { defaultPushSubject } from '../../domain/defaultSubject.js';
import type { PushRequest } from '../../domain/pushRequest.js';
import type { GitRepository } from '../../disk/repository.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Snapshot } from '../../layout/snapshot.js';
import {
  commitPlan,
  headSnapshot,
  requireHead,
  signature,
  stageOn,
  type CommitPlan,
  type CommitResult,
  type Staging,
} from './commit.js';
import { KeyRing, unlockWithPasswords } from '../security/keyRing.js';
import { OpenedState, sealChangesSteps } from '../security/unsealing.js';
import { MAX_PUSH_DERIVATIONS, passwordAttempts, type PasswordAttempts } from './pushPasswords.js';
import type { GroupKey } from '../security/sealing.js';
import type { Writer } from './writeGuard.js';
import { dryRun, refusedRun, type DryRunResult } from './dryRun.js';
import { requiredApprovalRefusalSteps } from '../changes/requiredApproval.js';

export { signature };

export interface PushCaller extends PushProvenance, Writer {
  readonly forceKeyPush: boolean;
  /** Keys of the security groups the caller's token is bound to. */
  readonly groupKeys?: readonly GroupKey[];
  /** The commit the caller expects the head to be (`If-Match`). */
  readonly ifMatch?: string;
}

export type PushResult = CommitResult;

/** What each element's password opens, on the groups it can involve (pushPasswords.ts), remembered by keyRing.ts. */
function elementRings(repository: GitRepository, base: Snapshot, attempts: PasswordAttempts): Promise<KeyRing[]> {
  return Promise.all(
    attempts.perElement.map((tries) =>
      tries.length > 0
        ? unlockWithPasswords(repository.gitdir, repository.fullName, base.securityGroups, tries)
        : KeyRing.EMPTY,
    ),
  );
}

function tooManyDerivations(attempts: PasswordAttempts): string | undefined {
  if (attempts.derivations <= MAX_PUSH_DERIVATIONS) return undefined;
  return `a push may check at most ${MAX_PUSH_DERIVATIONS} passwords against security groups (distinct pairs of group and password), this one needs ${attempts.derivations}`;
}

/** What a push does before its plan: cheap checks, and the slow key derivations outside the repository's queue. A refusal, or undefined. */
async function beforePlan(
  repository: GitRepository,
  request: PushRequest,
): Promise<{ reason: string; kind: RefusalKind } | undefined> {
  if (request.changeComment?.includes('\u0000'))
    return { reason: 'changeComment contains a NUL character', kind: 'invalid' };
  if (request.data.some((element) => element.password)) {
    // The slow key derivations happen here, outside the repository's queue; inside, they are remembered.
    const head = await repository.headSnapshot();
    const attempts = passwordAttempts(head, request);
    const tooMany = tooManyDerivations(attempts);
    if (tooMany) return { reason: tooMany, kind: 'security' };
    await elementRings(repository, head, attempts);
  }
  return undefined;
}

/** A push's plan against a head, and the key ring its last run used (what the pusher opened). */
function pushPlan(
  repository: GitRepository,
  request: PushRequest,
  caller: PushCaller,
  route: 'direct' | 'change request' = 'direct',
): { plan: (base: Snapshot) => Promise<CommitPlan>; ring: () => KeyRing } {
  let used = KeyRing.EMPTY;
  const plan = async (base: Snapshot): Promise<CommitPlan> => {
    requireHead(base, caller.ifMatch);
    const tokenRing = KeyRing.of(base.securityGroups, caller.groupKeys ?? [], repository.fullName);
    const attempts = passwordAttempts(base, request);
    const tooMany = tooManyDerivations(attempts);
    if (tooMany) return { ok: false, reason: tooMany, kind: 'security' };
    const rings = await elementRings(repository, base, attempts);
    const ring = rings.reduce((all, one) => all.with(one), tokenRing);
    used = ring;
    const state = new OpenedState(base, ring);
    const slices = new TimeSlices();
    await slices.pause();
    // Element by element in slices: the largest allowed push is 50,000 values to check.
    const outcome = await slices.run(
      applyPushSteps(state, request, {
        forceKeyPush: caller.forceKeyPush,
        unlocked: (index, group) => tokenRing.has(group) || rings[index].has(group),
      }),
    );
    if (!outcome.ok) return outcome;
    if (route === 'direct') {
      // Contexts under required approvals change only through an approved change request.
      const unapproved = await slices.run(requiredApprovalRefusalSteps(base, outcome.changes, repository.fullName));
      if (unapproved) return { ok: false, reason: unapproved, kind: 'context' };
    }
    if (request.schemas && caller.ruleSet !== undefined && base.settings.accessControlsEnabled) {
      return {
        ok: false,
        reason: `You do not have write access for specified context: a token of rule set ${caller.ruleSet} cannot change the schemas`,
        kind: 'context',
      };
    }
    await slices.pause();
    const sealed = await slices.run(sealChangesSteps(outcome.changes, state, ring));
    const changes = request.schemas ? { ...sealed, schemas: request.schemas } : sealed;
    return {
      ok: true,
      changes,
      message: commitMessage(request.changeComment || defaultPushSubject(request.data), caller),
    };
  };
  return { plan, ring: () => used };
}

export async function push(repository: GitRepository, request: PushRequest, caller: PushCaller): Promise<PushResult> {
  const refusal = await beforePlan(repository, request);
  if (refusal) return { kind: 'refused', reason: refusal.reason, refusal: refusal.kind };
  // Committed with the pushes waiting beside it, if any (group commit, commit.ts).
  return commitPlan(repository, pushPlan(repository, request, caller).plan, { writer: caller, grouped: true });
}

/**
 * The push run dry (write/dryRun.ts): everything it runs, nothing written, and what it would
 * change context by context; secured values shown opened only for the groups the push opens
 * (the token's, the elements' passwords).
 */
export async function dryRunPush(
  repository: GitRepository,
  request: PushRequest,
  caller: PushCaller,
  contexts: readonly string[] = [],
): Promise<DryRunResult> {
  const refusal = await beforePlan(repository, request);
  if (refusal) return refusedRun(repository.head(), refusal.reason);
  const { plan, ring } = pushPlan(repository, request, caller);
  return dryRun(repository, plan, caller, { contexts, ring });
}

/**
 * The push planned, checked (access rules, schemas, security groups: everything a push runs but
 * the required approvals, which the change request exists to gather) and staged on the head,
 * with `message` and `author`, and not committed: the commit a change request keeps under its own
 * ref (service/changes/). The slow key derivations happen first, as for a push.
 */
export async function stagePush(
  repository: GitRepository,
  request: PushRequest,
  caller: PushCaller,
  message: string,
  author: string,
): Promise<Staging & { readonly base?: Snapshot }> {
  const refusal = await beforePlan(repository, request);
  if (refusal) return { kind: 'refused', reason: refusal.reason };
  const { plan } = pushPlan(repository, request, caller, 'change request');
  const base = await headSnapshot(repository, repository.head());
  const staging = await stageOn(
    base,
    async (head) => {
      const planned = await plan(head);
      return planned.ok ? { ...planned, message } : planned;
    },
    caller,
    new TimeSlices(),
    { author: signature(author) },
  );
  return { ...staging, base };
}
