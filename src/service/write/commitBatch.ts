/**
 * Group commit of pushes: the pushes to one repository that wait while its previous
 * commit is being made durable are committed together, as git's receive-pack and etcd's WAL do.
 * Each keeps its own commit, planned on the commit before it (the head for the first), so history
 * stays linear with one commit per push and nothing is merged or reordered; all their objects go
 * into one pack, the ref moves once (lock and compare-and-swap from the head, as commitOnHead does)
 * to the last commit, and the fsyncs of that pack, the lock and the two folders are shared. Each
 * push is answered only after that commit is durable, so a 200 means what it meant.
 *
 * A push that arrives while no commit is running is committed at once, alone: a single client
 * waits for nothing. A refusal, an unchanged push or an error of one push (a 304, a 412) settles
 * that push alone; a failure to write (a full disk) or a ref that stayed busy settles all of them,
 * none committed. When another process moved the ref, every plan is made again on the new head.
 */
import type { EncodedObject } from '../../git/gitObjects.js';
import { BUSY, retryWhileBusy } from '../../disk/refs/lockRetry.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { stageCommitSteps, type StagedCommit } from '../../layout/stageCommit.js';
import { StorageFullError } from '../../disk/errors.js';
import { secondsSince, telemetry } from '../../lib/telemetry.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { headSnapshot, signature, type CommitPlan, type CommitResult } from './commitOnHead.js';
import { ServiceError } from '../errors.js';
import { noteWrite } from '../admin/storageHealth.js';
import { guardProblemSteps, type Writer } from './writeGuard.js';
import { schemaRefusalSteps } from '../schemas/schemaCheck.js';

/** Pushes in one group at most: bounds the pack and the work between two answers. */
export const MAX_GROUP = 32;

interface Waiting {
  readonly plan: (base: Snapshot) => CommitPlan | Promise<CommitPlan>;
  readonly writer?: Writer;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

type Outcome = { readonly result: CommitResult } | { readonly error: unknown };

/** Per repository, the group that waits for the repository's queue and has not started yet. */
const forming = new WeakMap<GitRepository, Waiting[]>();

/**
 * Commits a push's plan in the next group of its repository: like commitOnHead (the plan may run
 * more than once, may throw a ServiceError, and passes the write guard), shared with the pushes
 * that wait beside it.
 */
export function commitInGroup(
  repository: GitRepository,
  plan: Waiting['plan'],
  writer?: Writer,
): Promise<CommitResult> {
  return new Promise<CommitResult>((resolve, reject) => {
    const entry: Waiting = { plan, writer, resolve, reject };
    const group = forming.get(repository);
    if (group && group.length < MAX_GROUP) {
      group.push(entry);
      return;
    }
    const next = [entry];
    forming.set(repository, next);
    void repository.exclusive(async () => {
      if (forming.get(repository) === next) forming.delete(repository); // later pushes form the next group
      try {
        const outcomes = await commitGroup(repository, next);
        next.forEach((waiting, i) => {
          const outcome = outcomes[i];
          if ('error' in outcome) waiting.reject(outcome.error);
          else waiting.resolve(outcome.result);
        });
      } catch (error) {
        for (const waiting of next) waiting.reject(error);
      }
    });
  });
}

async function commitGroup(repository: GitRepository, group: readonly Waiting[]): Promise<Outcome[]> {
  const result = await retryWhileBusy(async (): Promise<Outcome[] | typeof BUSY> => {
    const slices = new TimeSlices();
    const head = repository.head();
    let current = await headSnapshot(repository, head);
    const outcomes: Outcome[] = [];
    const staged: StagedCommit[] = [];
    for (const waiting of group) {
      try {
        const planned = await waiting.plan(current);
        if (!planned.ok) {
          outcomes.push({ result: { kind: 'refused', reason: planned.reason, refusal: planned.kind } });
          continue;
        }
        // In slices: the largest allowed push checks and stages 50,000 values.
        const problem = await slices.run(guardProblemSteps(current, planned.changes, waiting.writer));
        if (problem) {
          outcomes.push({
            result: { kind: 'refused', reason: problem.reason, refusal: 'context', denied: problem.denied },
          });
          continue;
        }
        await slices.pause();
        const one = await slices.run(
          stageCommitSteps(current, planned.changes, { message: planned.message, author: signature() }),
        );
        if (one.commitId === null) {
          outcomes.push({ result: { kind: 'unchanged', commitId: current.commitId } });
          continue;
        }
        const broken = await slices.run(schemaRefusalSteps(current, one.snapshot, planned.changes));
        if (broken) {
          outcomes.push({ result: { kind: 'refused', reason: broken, refusal: 'schema' } });
          continue;
        }
        staged.push(one);
        current = one.snapshot;
        outcomes.push({ result: { kind: 'applied', commitId: one.commitId } });
      } catch (error) {
        outcomes.push({ error });
      }
      await slices.pause();
    }
    if (staged.length === 0) return outcomes;
    const started = process.hrtime.bigint();
    let update;
    try {
      update = await repository.commit(
        { objects: objectsOf(staged), commitId: current.commitId, snapshot: current },
        head,
      );
    } catch (error) {
      if (error instanceof StorageFullError) noteWrite(true, repository.fullName);
      throw error;
    }
    noteWrite(false);
    // Another process holds the ref lock or moved the ref: wait a little, then plan them all again.
    if (!update.ok) return BUSY;
    const seconds = secondsSince(started);
    for (let i = 0; i < staged.length; i++) telemetry.commit(seconds);
    return outcomes;
  });
  if (result === BUSY) throw new ServiceError('unavailable', 'the repository is busy with other writers; try again');
  return result;
}

/** The objects of every staged commit of a group, each once (a later commit may make a blob an earlier one made). */
function objectsOf(staged: readonly StagedCommit[]): EncodedObject[] {
  if (staged.length === 1) return [...staged[0].objects];
  const byId = new Map<string, EncodedObject>();
  for (const one of staged) for (const object of one.objects) byId.set(object.oid, object);
  return [...byId.values()];
}
