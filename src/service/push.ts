/**
 * The push transaction (contract section 6): validate against the head and commit, through
 * commitOnHead (the queue, durable objects, the ref moved by compare-and-swap, retried on a new
 * head when another process moved the ref).
 */
import { applyPush } from '../domain/applyPush.js';
import { commitMessage, type PushProvenance } from '../domain/commitMessage.js';
import type { PushRequest } from '../domain/pushRequest.js';
import type { GitRepository } from '../store/repository.js';
import { commitOnHead, type CommitResult } from './commitOnHead.js';
import { ServiceError } from './errors.js';

export { signature } from './commitOnHead.js';

export interface PushCaller extends PushProvenance {
  readonly forceKeyPush: boolean;
  /** The commit the caller expects the head to be (`If-Match`). */
  readonly ifMatch?: string;
}

export type PushResult = CommitResult;

export async function push(repository: GitRepository, request: PushRequest, caller: PushCaller): Promise<PushResult> {
  if (request.changeComment?.includes('\u0000')) return { kind: 'refused', reason: 'changeComment contains a NUL character' };
  return commitOnHead(repository, (base) => {
    if (caller.ifMatch !== undefined && caller.ifMatch !== base.commitId) {
      throw new ServiceError('precondition_failed', `the repository's head is ${base.commitId}, not ${caller.ifMatch}`);
    }
    const outcome = applyPush(base, request, { forceKeyPush: caller.forceKeyPush });
    if (!outcome.ok) return outcome;
    return { ok: true, changes: outcome.changes, message: commitMessage(request.changeComment, caller) };
  });
}
