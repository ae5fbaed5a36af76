/**
 * The one way the service makes a commit, shared by push, revert and
 * restore: inside the repository's queue, plan the changes against the head, stage the commit,
 * write its objects durably and move the ref by lock and compare-and-swap. A ref moved by another
 * process (the CLI, a second server, plain git) means the plan is made again on the new head and
 * retried: nothing is lost and nothing is applied twice.
 */
import { noteWrite } from '../admin/storageHealth.js';
import type { RefusalKind } from '../../domain/applyPush.js';
import type { PushChanges } from '../../domain/model.js';
import type { Signature } from '../../git/gitObjects.js';
import { BUSY, retryWhileBusy } from '../../disk/refs/lockRetry.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { stageCommitSteps } from '../../layout/stageCommit.js';
import { secondsSince, telemetry } from '../../lib/telemetry.js';
import { ServiceError } from '../errors.js';
import { guardProblemSteps, type Writer } from './writeGuard.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { LayoutError } from '../../layout/errors.js';
import { StorageFullError } from '../../disk/errors.js';
import { schemaRefusalSteps } from '../schemas/schemaCheck.js';

/**
 * What to commit on a head, or why not. A push's refusal says what it is about (`kind`: the
 * metrics count refusals by it); other commits' refusals become errors and need not.
 */
export type CommitPlan =
  | { readonly ok: true; readonly changes: PushChanges; readonly message: string }
  | { readonly ok: false; readonly reason: string; readonly kind?: RefusalKind };

export type CommitResult =
  | { readonly kind: 'applied'; readonly commitId: string }
  | { readonly kind: 'unchanged'; readonly commitId: string }
  | {
      readonly kind: 'refused';
      readonly reason: string;
      /** What the refusal is about: the plan's kind, `context` for the write guard's (a context group conflict, the access rules), `schema` for the schemas'. */
      readonly refusal?: RefusalKind;
      /** Refused by the access rules. */ readonly denied?: boolean;
    };

export function signature(name = 'cfghub'): Signature {
  return { name, email: 'cfghub@localhost', timestamp: Math.floor(Date.now() / 1000) };
}

/**
 * The state a commit is planned on: by default the head's snapshot. A head whose content breaks
 * the layout rules is a 409 naming the file and commit (restore, which does not need it, passes its
 * own base).
 */
export type BaseOf = (head: string) => Promise<Snapshot>;

export async function headSnapshot(repository: GitRepository, head: string): Promise<Snapshot> {
  try {
    return await repository.snapshot(head);
  } catch (error) {
    if (error instanceof LayoutError) throw error.within("the repository's head cannot be read");
    throw error;
  }
}

/**
 * `plan` may run more than once (once per head tried) and may throw a ServiceError to stop. Every
 * plan passes the write guard (context group conflicts, the writer's access rules), and the state it
 * would make passes the repository's schemas (schemas/schemaCheck.ts).
 */
export function commitOnHead(
  repository: GitRepository,
  plan: (base: Snapshot) => CommitPlan | Promise<CommitPlan>,
  baseOf?: BaseOf,
  writer?: Writer,
): Promise<CommitResult> {
  return repository.exclusive(async () => {
    const result = await retryWhileBusy(async (): Promise<CommitResult | typeof BUSY> => {
      const slices = new TimeSlices();
      const head = repository.head();
      const base = await (baseOf ? baseOf(head) : headSnapshot(repository, head));
      const planned = await plan(base);
      if (!planned.ok) return { kind: 'refused', reason: planned.reason, refusal: planned.kind };
      const problem = await slices.run(guardProblemSteps(base, planned.changes, writer));
      if (problem) return { kind: 'refused', reason: problem.reason, refusal: 'context', denied: problem.denied };
      // Between the phases of a large push (validation, staging, the pack), other requests get in.
      await slices.pause();
      const staged = await slices.run(
        stageCommitSteps(base, planned.changes, { message: planned.message, author: signature() }),
      );
      if (staged.commitId === null) return { kind: 'unchanged', commitId: head };
      // A base of the caller's (restore's) is not the head's state: the schemas weigh all it brings.
      const broken = await slices.run(schemaRefusalSteps(baseOf ? undefined : base, staged.snapshot, planned.changes));
      if (broken) return { kind: 'refused', reason: broken, refusal: 'schema' };
      await slices.pause();
      const started = process.hrtime.bigint();
      let update;
      try {
        update = await repository.commit(staged, head);
      } catch (error) {
        if (error instanceof StorageFullError) noteWrite(true, repository.fullName);
        throw error;
      }
      noteWrite(false);
      if (update.ok) telemetry.commit(secondsSince(started));
      if (update.ok) return { kind: 'applied', commitId: staged.commitId };
      // Another process holds the ref lock or moved the ref: wait a little, then start over.
      return BUSY;
    });
    if (result === BUSY) throw new ServiceError('unavailable', 'the repository is busy with other writers; try again');
    return result;
  });
}
