/**
 * `git push` through the server. git's receive-pack takes the client's pack into a quarantine
 * (git's own `objects/incoming-*`, see disk/gitCli/receivePack.ts) and asks here, before any ref
 * moves, whether the push may land. Each pushed commit is read with the server's own layout
 * reader and checked, oldest first against its parent, as a REST push is
 * (pushedCommitChecks.ts); then the commits' objects are written and the ref moved by the
 * repository's writers' queue and the same ref swap as every commit the server makes (its push
 * journal, the HA replication hook, the head watchers), by compare-and-swap from the head the
 * client pushed onto. The commits stay as they were pushed (same ids). A refusal leaves nothing
 * in the repository: the objects stay in the quarantine, which git removes.
 */
import {
  encodeObject,
  isTreeEntry,
  parseCommit,
  parseTree,
  type EncodedObject,
  type ObjectType,
} from '../../git/gitObjects.js';
import { BUSY, retryWhileBusy } from '../../disk/refs/lockRetry.js';
import type { ObjectStore } from '../../disk/objects/objectStore.js';
import type { GitRepository } from '../../disk/repository.js';
import { StorageFullError } from '../../disk/errors.js';
import { BRANCH_REF } from '../../layout/layout.js';
import { LayoutError } from '../../layout/errors.js';
import type { ObjectReader } from '../../layout/objectReader.js';
import { readSnapshot } from '../../layout/readSnapshot.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { secondsSince, telemetry } from '../../lib/telemetry.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { noteWrite } from '../admin/storageHealth.js';
import { KeyRing } from '../security/keyRing.js';
import type { GroupKey } from '../security/sealing.js';
import { headSnapshot } from './commit.js';
import { requiredApprovalRefusalSteps } from '../changes/requiredApproval.js';
import { commitChanges, pushedCommitProblemSteps, type GitPusher } from './pushedCommitChecks.js';

export type { GitPusher } from './pushedCommitChecks.js';

/** Commits one push may bring: each is read and checked, so the work stays bounded. */
export const MAX_PUSHED_COMMITS = 1000;

/** A ref update as git's receive-pack hands it over: `<old> <new> <ref>`. */
export interface RefCommand {
  readonly old: string;
  readonly new: string;
  readonly ref: string;
}

export interface GitPushCaller extends GitPusher {
  /** Keys of the security groups the token is bound to. */
  readonly groupKeys?: readonly GroupKey[];
  /** Who pushes, to find the turn its advertisement took (takePushTurn). */
  readonly pusher?: string;
}

export type GitPushOutcome =
  | { readonly ok: true; readonly commitId: string; readonly commits: number }
  | { readonly ok: false; readonly reason: string };

const ZERO = /^0{40}$/;
const OBJECT_ID = /^[0-9a-f]{40}$/;

/** Parses receive-pack's command lines; undefined when one is not `<old> <new> <ref>`. */
export function parseRefCommands(text: string): RefCommand[] | undefined {
  const commands: RefCommand[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [old, next, ref, ...rest] = line.split(' ');
    if (rest.length > 0 || !OBJECT_ID.test(old ?? '') || !OBJECT_ID.test(next ?? '') || !ref) return undefined;
    commands.push({ old, new: next, ref });
  }
  return commands;
}

const short = (id: string) => id.slice(0, 12);

/** What the client should do when the branch moved after its fetch. */
const moved = (head: string) =>
  `main moved since your fetch (it is now ${short(head)}): fetch, rebase your commits onto origin/main (git pull --rebase) and push again`;

/**
 * Decides a push and, when it passes, makes its last commit the head. `incoming` reads the
 * quarantine (the objects the push brought); the repository's store holds the rest.
 */
export async function acceptPushedCommits(
  repository: GitRepository,
  commands: readonly RefCommand[],
  incoming: ObjectStore,
  caller: GitPushCaller,
): Promise<GitPushOutcome> {
  const refused = (reason: string): GitPushOutcome => ({ ok: false, reason });
  const others = commands.filter((command) => command.ref !== BRANCH_REF);
  if (others.length > 0)
    return refused(`only ${BRANCH_REF} is pushed to (refused: ${others.map((command) => command.ref).join(', ')})`);
  if (commands.length !== 1) return refused(`push one update of ${BRANCH_REF}`);
  const [command] = commands;
  if (ZERO.test(command.new)) return refused(`${BRANCH_REF} cannot be deleted`);
  const head = repository.head();
  if (command.old !== head) return refused(moved(head));

  const reader: ObjectReader = {
    read: (oid) => (incoming.holds(oid) ? incoming.read(oid) : repository.objects.read(oid)),
  };
  const chain = await pushedChain(reader, incoming, command);
  if (typeof chain === 'string') return refused(chain);

  const slices = new TimeSlices();
  const ring = async (base: Snapshot) => KeyRing.of(base.securityGroups, caller.groupKeys ?? [], repository.fullName);
  let before = await headSnapshot(repository, head);
  const objects = new Map<string, EncodedObject>();
  for (const commit of chain) {
    let after: Snapshot;
    try {
      after = await readSnapshot(reader, commit.id, before);
    } catch (error) {
      if (error instanceof LayoutError) return refused(`${commit.named}: ${error.message}`);
      throw error;
    }
    await slices.pause();
    const changes = commitChanges(before, after);
    const problem = await slices.run(pushedCommitProblemSteps(before, after, changes, caller, await ring(before)));
    if (problem) return refused(`${commit.named}: ${problem}`);
    // A push carries no approvals: a commit touching a context that needs them is refused.
    const unapproved = await slices.run(requiredApprovalRefusalSteps(before, changes, repository.fullName));
    if (unapproved) return refused(`${commit.named}: ${unapproved}`);
    await collectNewObjects(incoming, commit.id, commit.tree, before.treeId, objects, slices);
    before = after;
  }

  return moveHead(repository, caller.pusher, head, command.new, [...objects.values()], before, chain.length);
}

interface PushedCommit {
  readonly id: string;
  readonly tree: string;
  /** How a refusal names it: `commit 0123456789ab (its subject)`. */
  readonly named: string;
}

/** The pushed commits, oldest first, from the new head back to the old one; or why they are refused. */
async function pushedChain(
  reader: ObjectReader,
  incoming: ObjectStore,
  command: RefCommand,
): Promise<PushedCommit[] | string> {
  const chain: PushedCommit[] = [];
  let at = command.new;
  while (at !== command.old) {
    if (!incoming.holds(at))
      return `${short(command.new)} does not build on main's head ${short(command.old)}: rebase onto origin/main and push again`;
    if (chain.length >= MAX_PUSHED_COMMITS)
      return `a push brings at most ${MAX_PUSHED_COMMITS} commits: push them in parts`;
    const object = await reader.read(at);
    if (object.type !== 'commit') return `${short(at)} is a ${object.type}, not a commit`;
    const commit = parseCommit(object.content);
    const subject = commit.message.split('\n')[0].slice(0, 72);
    const named = `commit ${short(at)} (${subject})`;
    if (commit.parents.length > 1)
      return `${named} is a merge: main's history is linear, rebase instead of merging (git pull --rebase) and push again`;
    if (commit.parents.length === 0)
      return `${named} has no parent: it does not build on main's head ${short(command.old)}`;
    chain.push({ id: at, tree: commit.tree, named });
    at = commit.parents[0];
  }
  return chain.reverse();
}

/**
 * Every object of the quarantine a commit's tree reaches and its parent's does not: the commit,
 * then the trees that differ, and their new entries. An object the quarantine does not hold is in
 * the repository already, with all it reaches (git checked the push's connectivity).
 */
async function collectNewObjects(
  incoming: ObjectStore,
  commitId: string,
  tree: string,
  parentTree: string,
  into: Map<string, EncodedObject>,
  slices: TimeSlices,
): Promise<void> {
  const take = async (oid: string, type: ObjectType) => {
    const object = await incoming.read(oid);
    if (object.type !== type) throw new LayoutError(`object ${short(oid)} is a ${object.type}, not a ${type}`);
    into.set(oid, encodeObject(type, object.content));
    return object.content;
  };
  await take(commitId, 'commit');
  const pending: [string, string | undefined][] = [[tree, parentTree]];
  while (pending.length > 0) {
    const [treeId, was] = pending.pop()!;
    if (treeId === was || into.has(treeId) || !incoming.holds(treeId)) continue;
    for (const entry of parseTree(await take(treeId, 'tree'))) {
      if (into.has(entry.oid) || !incoming.holds(entry.oid)) continue;
      if (isTreeEntry(entry)) pending.push([entry.oid, undefined]);
      else await take(entry.oid, 'blob');
    }
    await slices.pause();
  }
}

/**
 * A git pusher's turn in the repository's writers' queue. A git client checks the head it is
 * shown (the push's ref advertisement) against the commits it built, then sends them; a REST
 * push landing in between refuses the git push, and steady REST writers left git pushers almost
 * none of their attempts. So the advertisement takes a turn in the queue, as a REST push does:
 * the head stays as shown until the push is decided, and the writers that come meanwhile wait
 * their turn (the REST pushes then commit together, commit.ts). A turn is bounded: it ends
 * when its push is decided, or after PUSH_TURN_MS when no push comes (the client found nothing to
 * push, or found the head had moved since its fetch). A second advertisement for the same pusher
 * while its turn lasts (a retry after `git pull --rebase`) shares the turn, never past its bound.
 */
export const PUSH_TURN_MS = 3_000;

interface PushTurn {
  /** Ends the turn (the queue moves on), or, while its push is moving the head, once it has. */
  readonly end: () => void;
  /** Set once the turn holds the queue. */
  active: boolean;
  /** Its push is moving the head. */
  working: boolean;
  /** It ended while its push was moving the head. */
  ended: boolean;
}

const turns = new WeakMap<GitRepository, Map<string, PushTurn>>();

/**
 * Takes (or shares) `pusher`'s turn in the repository's writers' queue and resolves, once it
 * holds the queue, to the head to advertise: it stays the head until the turn ends.
 */
export async function takePushTurn(repository: GitRepository, pusher: string): Promise<string> {
  let ofRepository = turns.get(repository);
  if (!ofRepository) turns.set(repository, (ofRepository = new Map()));
  const current = ofRepository.get(pusher);
  if (current?.active) return repository.head();
  const byRepository = ofRepository;
  await new Promise<void>((started) => {
    void repository.exclusive(
      () =>
        new Promise<void>((ended) => {
          const turn: PushTurn = {
            active: true,
            working: false,
            ended: false,
            end: () => {
              clearTimeout(timer);
              turn.ended = true;
              if (turn.working) return;
              turn.active = false;
              if (byRepository.get(pusher) === turn) byRepository.delete(pusher);
              ended();
            },
          };
          const timer = setTimeout(turn.end, PUSH_TURN_MS);
          timer.unref?.();
          byRepository.get(pusher)?.end(); // an older turn of the same pusher still waiting
          byRepository.set(pusher, turn);
          started();
        }),
    );
  });
  return repository.head();
}

/** Ends `pusher`'s turn, if it holds one (its push is decided). */
export function endPushTurn(repository: GitRepository, pusher: string): void {
  turns.get(repository)?.get(pusher)?.end();
}

/**
 * Runs `work` as a writer: inside `pusher`'s turn when it holds one (the queue is held for it
 * already), else in the queue, after the writers before it.
 */
async function asWriter<T>(repository: GitRepository, pusher: string | undefined, work: () => Promise<T>): Promise<T> {
  const turn = pusher === undefined ? undefined : turns.get(repository)?.get(pusher);
  if (!turn?.active || turn.ended) return repository.exclusive(work);
  turn.working = true;
  try {
    return await work();
  } finally {
    turn.working = false;
    turn.end();
  }
}

/** The head moved to the pushed commit as a writer: compare-and-swap from `old`. */
async function moveHead(
  repository: GitRepository,
  pusher: string | undefined,
  old: string,
  commitId: string,
  objects: EncodedObject[],
  snapshot: Snapshot,
  commits: number,
): Promise<GitPushOutcome> {
  return asWriter(repository, pusher, async () => {
    const result = await retryWhileBusy(async (): Promise<GitPushOutcome | typeof BUSY> => {
      const head = repository.head();
      if (head !== old) return { ok: false, reason: moved(head) };
      const started = process.hrtime.bigint();
      let update;
      try {
        update = await repository.commit({ objects, commitId, snapshot }, head);
      } catch (error) {
        if (error instanceof StorageFullError) noteWrite(true, repository.fullName);
        throw error;
      }
      noteWrite(false);
      // Another process holds the ref lock or moved the ref: look again after a pause.
      if (!update.ok) return BUSY;
      telemetry.commit(secondsSince(started));
      return { ok: true, commitId, commits };
    });
    if (result === BUSY) return { ok: false, reason: 'the repository is busy with other writers; push again' };
    return result;
  });
}
