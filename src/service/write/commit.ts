/**
 * The one way the service makes a commit: push, revert, restore and every administrative change
 * (settings, rule sets, context groups, security groups, schemas) come through `commitPlan`.
 * Inside the repository's queue each write's plan is made against the head, passes the write guard
 * (context group conflicts, the writer's access rules), is staged, and the state it would make
 * passes the repository's schemas; the commit's objects are written durably and the ref moves by
 * lock and compare-and-swap. A ref moved by another process (the CLI, a second server, plain git)
 * means the plans are made again on the new head and retried: nothing is lost and nothing is
 * applied twice.
 *
 * Group commit: writes whose plan reads nothing but the state it is given (pushes) and that wait
 * while the repository's previous commit is being made durable are committed together, as git's
 * receive-pack and etcd's WAL do. Each keeps its own commit, planned on the commit before it (the
 * head for the first), so history stays linear with one commit per write and nothing is merged or
 * reordered; all their objects go into one pack, the ref moves once to the last commit, and the
 * fsyncs of that pack, the lock and the two folders are shared. Each is answered only after that
 * commit is durable, so a 200 means what it meant. Every other write is a group of one.
 *
 * A write that arrives while no commit is running is committed at once: a single client waits for
 * nothing. A refusal, an unchanged write or an error of one write (a 304, a 412) settles that write
 * alone; a failure to write (a full disk) or a ref that stayed busy settles the whole group, none
 * committed.
 */
import type { RefusalKind } from '../../domain/applyPush.js';
import type { PushChanges } from '../../domain/model.js';
import type { EncodedObject, Signature } from '../../git/gitObjects.js';
import { BUSY, retryWhileBusy } from '../../disk/refs/lockRetry.js';
import type { GitRepository } from '../../disk/repository.js';
import { StorageFullError } from '../../disk/errors.js';
import { LayoutError } from '../../layout/errors.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { stageCommitSteps, type StagedCommit } from '../../layout/stageCommit.js';
import { secondsSince, telemetry } from '../../lib/telemetry.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { noteWrite } from '../admin/storageHealth.js';
import { ServiceError } from '../errors.js';
import { schemaRefusalSteps } from '../schemas/schemaCheck.js';
import { guardProblemSteps, type Writer } from './writeGuard.js';

/**
 * What to commit on a head, or why not. A push's refusal says what it is about (`kind`: the
 * metrics count refusals by it); other commits' refusals become errors and need not. `denied`: the
 * writer's access rules refuse it (a 403 where the refusal is an error, `denied` in a dry run).
 */
export type CommitPlan =
  | { readonly ok: true; readonly changes: PushChanges; readonly message: string }
  | { readonly ok: false; readonly reason: string; readonly kind?: RefusalKind; readonly denied?: boolean };

/** Makes a write's plan against a state; may run more than once (once per head tried) and may throw a ServiceError to stop. */
export type Planner = (base: Snapshot) => CommitPlan | Promise<CommitPlan>;

export type Refused = {
  readonly kind: 'refused';
  readonly reason: string;
  /** What the refusal is about: the plan's kind, `context` for the write guard's (a context group conflict, the access rules), `schema` for the schemas'. */
  readonly refusal?: RefusalKind;
  /** Refused by the access rules. */
  readonly denied?: boolean;
};

export type Committed =
  { readonly kind: 'applied'; readonly commitId: string } | { readonly kind: 'unchanged'; readonly commitId: string };

export type CommitResult = Committed | Refused;

/**
 * The state a commit is planned on: by default the head's snapshot. A head whose content breaks
 * the layout rules is a 409 naming the file and commit (restore, which does not need it, passes its
 * own base).
 */
export type BaseOf = (head: string) => Promise<Snapshot>;

export interface CommitOptions {
  /** Whose write: the write guard checks the changes against its access rules. */
  readonly writer?: Writer;
  /** The state to plan on instead of the head's (restore's: the head with a past commit's content); committed alone. */
  readonly baseOf?: BaseOf;
  /**
   * The plan reads nothing but the state it is given, so it may be planned on the commit of a
   * write beside it that is not written yet: it joins the group that waits (pushes). A plan that
   * reads the repository at its base's commit (revert walks the history) is committed alone.
   */
  readonly grouped?: boolean;
}

/** Writes in one group at most: bounds the pack and the work between two answers. */
export const MAX_GROUP = 32;

export function signature(name = 'cfghub'): Signature {
  return { name, email: 'cfghub@localhost', timestamp: Math.floor(Date.now() / 1000) };
}

export async function headSnapshot(repository: GitRepository, head: string): Promise<Snapshot> {
  try {
    return await repository.snapshot(head);
  } catch (error) {
    if (error instanceof LayoutError) throw error.within("the repository's head cannot be read");
    throw error;
  }
}

/** The state a write is staged on at `head`: the caller's (`baseOf`, restore's) or the head's own. */
export function baseAt(repository: GitRepository, head: string, baseOf?: BaseOf): Promise<Snapshot> {
  return baseOf ? baseOf(head) : headSnapshot(repository, head);
}

/**
 * A write prepared on a head the caller saw (`If-Match`, the head a preview was made on) is made on
 * that head only: the head has moved since, so what would be written is not what was seen.
 */
export function requireHead(base: Snapshot, expected: string | undefined): void {
  if (expected !== undefined && expected !== base.commitId)
    throw new ServiceError('precondition_failed', `the repository's head is ${base.commitId}, not ${expected}`);
}

/** A write planned, checked and staged on a base, and not committed: the commit it would make, or why it makes none. */
export type Staging =
  | { readonly kind: 'staged'; readonly staged: StagedCommit; readonly changes: PushChanges }
  | { readonly kind: 'unchanged'; readonly commitId: string }
  | Refused;

/**
 * What every write runs before anything is written: the plan on `base`, the write guard, the
 * staging (by `author`, cfghub by default), the schema check (of everything the new state holds
 * when `base` is not the head's state: `checkAll`). In slices: the largest allowed push checks and
 * stages 50,000 values. Used by the commits here, by the dry run (dryRun.ts), and by a change
 * request, which keeps the staged commit off the branch under its own ref (service/changes/).
 */
export async function stageOn(
  base: Snapshot,
  plan: Planner,
  writer: Writer | undefined,
  slices = new TimeSlices(),
  options: { readonly author?: Signature; readonly checkAll?: boolean } = {},
): Promise<Staging> {
  const planned = await plan(base);
  if (!planned.ok)
    return {
      kind: 'refused',
      reason: planned.reason,
      refusal: planned.kind,
      ...(planned.denied ? { denied: true } : {}),
    };
  const problem = await slices.run(guardProblemSteps(base, planned.changes, writer));
  if (problem) return { kind: 'refused', reason: problem.reason, refusal: 'context', denied: problem.denied };
  // Between the phases of a large write (validation, staging, the pack), other requests get in.
  await slices.pause();
  const staged = await slices.run(
    stageCommitSteps(base, planned.changes, { message: planned.message, author: options.author ?? signature() }),
  );
  if (staged.commitId === null) return { kind: 'unchanged', commitId: base.commitId };
  const broken = await slices.run(
    schemaRefusalSteps(options.checkAll ? undefined : base, staged.snapshot, planned.changes),
  );
  if (broken) return { kind: 'refused', reason: broken, refusal: 'schema' };
  return { kind: 'staged', staged, changes: planned.changes };
}

interface Waiting {
  readonly plan: Planner;
  readonly writer?: Writer;
  resolve(result: CommitResult): void;
  reject(error: unknown): void;
}

type Outcome = { readonly result: CommitResult } | { readonly error: unknown };

/** Per repository, the group of grouped writes that waits for the repository's queue and has not started yet. */
const forming = new WeakMap<GitRepository, Waiting[]>();

/** Commits a write's plan (see the top of this file); a refusal is a result, not an error. */
export function commitPlan(
  repository: GitRepository,
  plan: Planner,
  options: CommitOptions = {},
): Promise<CommitResult> {
  const grouped = options.grouped === true && options.baseOf === undefined;
  return new Promise<CommitResult>((resolve, reject) => {
    const entry: Waiting = { plan, writer: options.writer, resolve, reject };
    const group = grouped ? forming.get(repository) : undefined;
    if (group && group.length < MAX_GROUP) {
      group.push(entry);
      return;
    }
    const next = [entry];
    if (grouped) forming.set(repository, next);
    void repository.exclusive(async () => {
      if (forming.get(repository) === next) forming.delete(repository); // later writes form the next group
      try {
        const outcomes = await commitGroup(repository, next, options.baseOf);
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

/**
 * A write that is not a push: committed alone, its refusal an error (forbidden when the access
 * rules refused it, else a conflict).
 */
export async function commitChange(
  repository: GitRepository,
  plan: Planner,
  options: Omit<CommitOptions, 'grouped'> = {},
): Promise<Committed> {
  const result = await commitPlan(repository, plan, options);
  if (result.kind === 'refused') throw new ServiceError(result.denied ? 'forbidden' : 'conflict', result.reason);
  return result;
}

async function commitGroup(repository: GitRepository, group: readonly Waiting[], baseOf?: BaseOf): Promise<Outcome[]> {
  const result = await retryWhileBusy(async (): Promise<Outcome[] | typeof BUSY> => {
    const slices = new TimeSlices();
    const head = repository.head();
    let current = await baseAt(repository, head, baseOf);
    const outcomes: Outcome[] = [];
    const staged: StagedCommit[] = [];
    for (const waiting of group) {
      try {
        // A base of the caller's (restore's) is not the head's state: the schemas weigh all it brings.
        const one = await stageOn(current, waiting.plan, waiting.writer, slices, { checkAll: baseOf !== undefined });
        if (one.kind === 'staged') {
          staged.push(one.staged);
          current = one.staged.snapshot;
          outcomes.push({ result: { kind: 'applied', commitId: one.staged.snapshot.commitId } });
        } else {
          outcomes.push({ result: one });
        }
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
