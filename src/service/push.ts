/**
 * The push transaction (contract section 6): validate against the head and commit, through
 * commitOnHead (the queue, durable objects, the ref moved by compare-and-swap, retried on a new
 * head when another process moved the ref). Secured keys and files are opened for the groups the
 * pusher holds (element passwords, the token's groups) and sealed again before staging.
 */
import { applyPush } from '../domain/applyPush.js';
import { commitMessage, type PushProvenance } from '../domain/commitMessage.js';
import { defaultPushSubject } from '../domain/defaultSubject.js';
import type { PushRequest } from '../domain/pushRequest.js';
import type { GitRepository } from '../store/repository.js';
import type { Snapshot } from '../store/snapshot.js';
import { commitOnHead, type CommitResult } from './commitOnHead.js';
import { ServiceError } from './errors.js';
import { KeyRing, unlockWithPasswords } from './keyRing.js';
import { OpenedState, sealChanges } from './opening.js';
import type { GroupKey } from './sealing.js';
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

/** Different passwords one push may carry: each costs a slow key derivation. */
export const MAX_PUSH_PASSWORDS = 16;

/** What each element's password opens: tried on every group (a few), remembered by keyRing.ts. */
function elementRings(repository: GitRepository, base: Snapshot, request: PushRequest): Promise<KeyRing[]> {
  return Promise.all(
    request.data.map(({ password }) =>
      password ? unlockWithPasswords(repository.gitdir, base.securityGroups, base.securityGroups.map((group) => ({ group: group.name, password }))) : KeyRing.EMPTY,
    ),
  );
}

export async function push(repository: GitRepository, request: PushRequest, caller: PushCaller): Promise<PushResult> {
  if (request.changeComment?.includes('\u0000')) return { kind: 'refused', reason: 'changeComment contains a NUL character' };
  const passwords = new Set(request.data.map((element) => element.password).filter(Boolean));
  if (passwords.size > MAX_PUSH_PASSWORDS) return { kind: 'refused', reason: `a push may carry at most ${MAX_PUSH_PASSWORDS} different passwords` };
  // The slow key derivations happen here, outside the repository's queue; inside, they are remembered.
  if (passwords.size > 0) await elementRings(repository, await repository.headSnapshot(), request);
  return commitOnHead(repository, async (base) => {
    if (caller.ifMatch !== undefined && caller.ifMatch !== base.commitId) {
      throw new ServiceError('precondition_failed', `the repository's head is ${base.commitId}, not ${caller.ifMatch}`);
    }
    const tokenRing = KeyRing.of(base.securityGroups, caller.groupKeys ?? []);
    const rings = await elementRings(repository, base, request);
    const ring = rings.reduce((all, one) => all.with(one), tokenRing);
    const state = new OpenedState(base, ring);
    const outcome = applyPush(state, request, {
      forceKeyPush: caller.forceKeyPush,
      unlocked: (index, group) => tokenRing.has(group) || rings[index].has(group),
    });
    if (!outcome.ok) return outcome;
    return { ok: true, changes: sealChanges(outcome.changes, state, ring), message: commitMessage(request.changeComment || defaultPushSubject(request.data), caller) };
  }, undefined, caller);
}
