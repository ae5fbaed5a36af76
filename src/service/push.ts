/**
 * The push transaction (contract section 6): validate against the head, stage the commit, write
 * its objects durably and move the ref by compare-and-swap, all inside the repository's queue.
 * A ref moved by another process (the CLI, a second server, plain git) means the push is
 * re-validated on the new head and retried: nothing is lost and nothing is applied twice.
 */
import { applyPush } from '../domain/applyPush.js';
import { commitMessage, type PushProvenance } from '../domain/commitMessage.js';
import type { PushRequest } from '../domain/pushRequest.js';
import type { Signature } from '../store/gitObjects.js';
import { LOCK_ATTEMPTS, lockRetryPause } from '../store/refs.js';
import type { GitRepository } from '../store/repository.js';
import { stageCommit } from '../store/stageCommit.js';
import { ServiceError } from './errors.js';

export interface PushCaller extends PushProvenance {
  readonly forceKeyPush: boolean;
  /** The commit the caller expects the head to be (`If-Match`). */
  readonly ifMatch?: string;
}

export type PushResult =
  | { readonly kind: 'applied'; readonly commitId: string }
  | { readonly kind: 'unchanged'; readonly commitId: string }
  | { readonly kind: 'refused'; readonly reason: string };


export function signature(name = 'cfghub'): Signature {
  return { name, email: 'cfghub@localhost', timestamp: Math.floor(Date.now() / 1000) };
}

export function push(repository: GitRepository, request: PushRequest, caller: PushCaller): Promise<PushResult> {
  return repository.exclusive(async () => {
    if (request.changeComment?.includes('\u0000')) return { kind: 'refused', reason: 'changeComment contains a NUL character' };
    for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
      const head = repository.head();
      if (caller.ifMatch !== undefined && caller.ifMatch !== head) {
        throw new ServiceError('precondition_failed', `the repository's head is ${head}, not ${caller.ifMatch}`);
      }
      const base = await repository.snapshot(head);
      const outcome = applyPush(base, request, { forceKeyPush: caller.forceKeyPush });
      if (!outcome.ok) return { kind: 'refused', reason: outcome.reason };
      const staged = stageCommit(base, outcome.changes, {
        message: commitMessage(request.changeComment, caller),
        author: signature(),
      });
      if (staged.commitId === null) return { kind: 'unchanged', commitId: head };
      const update = await repository.commit(staged, head);
      if (update.ok) return { kind: 'applied', commitId: staged.commitId };
      // Another process holds the ref lock or moved the ref: wait a little, then start over.
      await lockRetryPause(attempt);
    }
    throw new ServiceError('unavailable', 'the repository is busy with other writers; try again');
  });
}
