/**
 * The push transaction: validate against the head and commit, through
 * commitInGroup (commitOnHead's rules, shared with the pushes waiting beside it: the queue, durable objects, the ref moved by compare-and-swap, retried on a new
 * head when another process moved the ref). Secured keys and files are opened for the groups the
 * pusher holds (element passwords, the token's groups) and sealed again before staging.
 */
import { applyPushSteps } from '../../domain/applyPush.js';
import { commitMessage, type PushProvenance } from '../../domain/commitMessage.js';
import { defaultPushSubject } from '../../domain/defaultSubject.js';
import type { PushRequest } from '../../domain/pushRequest.js';
import type { GitRepository } from '../../disk/repository.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { commitInGroup } from './commitBatch.js';
import type { CommitResult } from './commitOnHead.js';
import { ServiceError } from '../errors.js';
import { KeyRing, unlockWithPasswords } from '../security/keyRing.js';
import { OpenedState, sealChangesSteps } from '../security/unsealing.js';
import { MAX_PUSH_DERIVATIONS, passwordAttempts, type PasswordAttempts } from './pushPasswords.js';
import type { GroupKey } from '../security/sealing.js';
import type { Writer } from './writeGuard.js';

export { signature } from './commitOnHead.js';

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

export async function push(repository: GitRepository, request: PushRequest, caller: PushCaller): Promise<PushResult> {
  if (request.changeComment?.includes('\u0000'))
    return { kind: 'refused', reason: 'changeComment contains a NUL character' };
  if (request.data.some((element) => element.password)) {
    // The slow key derivations happen here, outside the repository's queue; inside, they are remembered.
    const head = await repository.headSnapshot();
    const attempts = passwordAttempts(head, request);
    const tooMany = tooManyDerivations(attempts);
    if (tooMany) return { kind: 'refused', reason: tooMany };
    await elementRings(repository, head, attempts);
  }
  // Committed with the pushes waiting beside it, if any (group commit, commitBatch.ts).
  return commitInGroup(
    repository,
    async (base) => {
      if (caller.ifMatch !== undefined && caller.ifMatch !== base.commitId) {
        throw new ServiceError(
          'precondition_failed',
          `the repository's head is ${base.commitId}, not ${caller.ifMatch}`,
        );
      }
      const tokenRing = KeyRing.of(base.securityGroups, caller.groupKeys ?? [], repository.fullName);
      const attempts = passwordAttempts(base, request);
      const tooMany = tooManyDerivations(attempts);
      if (tooMany) return { ok: false, reason: tooMany };
      const rings = await elementRings(repository, base, attempts);
      const ring = rings.reduce((all, one) => all.with(one), tokenRing);
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
      await slices.pause();
      const changes = await slices.run(sealChangesSteps(outcome.changes, state, ring));
      return {
        ok: true,
        changes,
        message: commitMessage(request.changeComment || defaultPushSubject(request.data), caller),
      };
    },
    caller,
  );
}
