/**
 * One bare repository: its object store, its head (and the watch on it), its caches
 * (repositoryCaches.ts), the in-process queue that serialises its writers (other processes are
 * kept out by the ref lock) and the commit of a staged push. When packs are merged or loose objects
 * packed is decided in maintenance.ts.
 */
import { writeStarted } from './fileCalls.js';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { BRANCH_AND_TAG_FOLDERS, branchesAndTags, readRef, RefLock, type RefUpdate } from './refs/refs.js';

/** The folders of the change requests' refs (records/changeRefs.ts): replicated with the branches and tags. */
export const CHANGE_REF_FOLDERS = ['refs/changes', 'refs/change-reviews'] as const;
/** Every ref a read replica holds as its primary does: what the refs digest covers. */
export const REPLICATED_REF_FOLDERS = [...BRANCH_AND_TAG_FOLDERS, ...CHANGE_REF_FOLDERS] as const;
import { faultPoint } from './faultPoints.js';
import { ChangeWatch } from './refs/changeWatch.js';
import { BRANCH_REF } from '../layout/layout.js';
import { Maintenance } from './objects/maintenance.js';
import { ObjectStore } from './objects/objectStore.js';
import { readSnapshot } from '../layout/readSnapshot.js';
import { secondsSince, telemetry } from '../lib/telemetry.js';
import { RepositoryCaches } from '../layout/repositoryCaches.js';
import type { Snapshot } from '../layout/snapshot.js';
import type { StagedCommit } from '../layout/stageCommit.js';
import { asDamagedCommit, asStorageFault } from './storageFaults.js';
import { LayoutError } from '../layout/errors.js';
import { RepositoryGoneError } from './errors.js';
import type { JournalFile, PushJournal } from './journal/pushJournal.js';
import type { JournalEntry } from './journal/journalRecords.js';
import type { Pack } from '../git/packWriter.js';

export interface RepositoryOptions {
  /** Whether the repository's folder is still a real folder (no symbolic link) where it was found. */
  readonly stillInPlace?: () => boolean;
  /** Loose objects (as `git gc --auto` estimates them) above which the repository is repacked; undefined: never. */
  readonly looseObjectLimit?: number;
  /** The folder the repository was found in (the registry's root): the head watch watches from there down. */
  readonly root?: string;
  /** The push journal of the server's process (pushJournal.ts), if commits go through one. */
  readonly journal?: PushJournal;
  /**
   * In an HA cluster's leader: makes a push's journal record durable on the cluster's other
   * nodes before the ref moves (service/ha/syncSet.ts). Resolves to what to call once the ref has
   * moved or failed to; a rejection refuses the commit (its record voided, the ref unmoved).
   */
  readonly replicate?: ReplicateHook;
}

export type ReplicateHook = (entry: JournalEntry) => Promise<() => void>;

export class GitRepository {
  readonly objects: ObjectStore;
  private queue: Promise<unknown> = Promise.resolve();
  /** Every cache of this repository (snapshots, parsed commits, trees, keys, tags, summaries). */
  readonly caches = new RepositoryCaches();
  private get snapshots() {
    return this.caches.snapshots; // made on first use (repositoryCaches.ts)
  }
  private readonly built = this.caches.built;
  /** Pack merges and repacks, run between writers through `exclusive`. */
  private readonly maintenance: Maintenance;
  private latest: Snapshot | undefined;
  /** The head as last read, and the identity (inode, mtime, size) of the ref file it was read from. */
  private headSeen: { stamp: string; head: string } | undefined;

  constructor(
    readonly account: string,
    readonly name: string,
    readonly gitdir: string,
    private readonly options: RepositoryOptions = {},
  ) {
    this.objects = new ObjectStore(gitdir);
    this.refPath = join(gitdir, BRANCH_REF);
    this.headWatch = ChangeWatch.ofHead(options.root ?? dirname(dirname(gitdir)), gitdir);
    this.headWatch.onChange = () => this.headMayHaveChanged();
    this.root = options.root ?? dirname(dirname(gitdir));
    this.maintenance = new Maintenance(this.objects, gitdir, (work) => this.exclusive(work), options.looseObjectLimit);
  }

  private readonly headListeners = new Set<() => void>();

  /**
   * Calls `listener` whenever the head may have changed: after a commit of this process, and
   * when the head watch sees the ref change (plain git, another process). It may be called when
   * nothing changed; the listener reads `head()` to know. Returns the unsubscribe.
   */
  onHeadChange(listener: () => void): () => void {
    this.headListeners.add(listener);
    return () => this.headListeners.delete(listener);
  }

  private headMayHaveChanged(): void {
    for (const listener of this.headListeners) listener();
  }

  private readonly headWatch: ChangeWatch;
  /**
   * What the refs digest depends on: `refs/heads`, `refs/tags`, `packed-refs` and the change
   * requests' folders (a ref in a nested folder shows by the recheck). Made by the first digest:
   * only replication asks for one, and four watches made for each of 1,000 repositories were a
   * sixth of a new server's first listing.
   */
  private refsWatches: readonly ChangeWatch[] | undefined;
  private refsSeen: string | undefined;
  /** Watches of the change requests' ref folders that exist (refs/changes, refs/change-reviews). */
  private readonly changeRefWatches = new Map<string, ChangeWatch>();
  private readonly root: string;

  /**
   * A digest of every branch and tag with the object it names: what a read replica compares to
   * know it holds all of a repository, tags included. Read from disk only when a watch says a ref
   * may have changed, or cannot tell (see changeWatch.ts), as the head is.
   */
  refsDigest(): string {
    this.refsWatches ??= [
      ChangeWatch.ofHead(this.root, this.gitdir),
      new ChangeWatch(this.root, join(this.gitdir, 'refs', 'tags')),
      new ChangeWatch(this.root, this.gitdir, ['packed-refs']),
      // The change requests' folders appearing or going (their own watches are made once they exist).
      new ChangeWatch(
        this.root,
        join(this.gitdir, 'refs'),
        CHANGE_REF_FOLDERS.map((folder) => folder.slice('refs/'.length)),
      ),
    ];
    const refsWatches = this.refsWatches;
    const watches = () => [...refsWatches, ...this.changeRefWatches.values()];
    if (this.refsSeen !== undefined && watches().every((watch) => watch.unchanged())) return this.refsSeen;
    for (const folder of CHANGE_REF_FOLDERS)
      if (!this.changeRefWatches.has(folder) && existsSync(join(this.gitdir, folder)))
        this.changeRefWatches.set(folder, new ChangeWatch(this.root, join(this.gitdir, folder)));
    for (const watch of watches()) watch.beginCheck();
    try {
      const text = branchesAndTags(this.gitdir, REPLICATED_REF_FOLDERS)
        .map(([name, oid]) => `${oid} ${name}\n`)
        .join('');
      this.refsSeen = createHash('sha256').update(text).digest('hex');
      return this.refsSeen;
    } catch (error) {
      this.refsSeen = undefined;
      throw error;
    }
  }

  private readonly refPath: string;
  /** Set when the folder was found gone or swapped: the registry then searches again. */
  gone = false;

  get fullName(): string {
    return `${this.account}/${this.name}`;
  }

  /**
   * The current head commit, so commits made by others show at once: as of the watch events
   * handed over so far, which include every event queued before a request once the request has
   * awaited `afterQueuedWatchEvents` (AccessPolicy does). Read from disk only when the
   * head may have changed since the last read: the head watch (inotify, see changeWatch.ts) says
   * so, or cannot tell. Then the ref file is stat'ed and read; the rest is done again only when
   * it is not the one seen last: git and cfghub replace refs by rename, which gives the file a new inode. (A
   * compare-and-swap always reads the ref itself, under the lock.) Whenever the ref file is not
   * the one seen last, the folder is checked to be still in place first: a folder removed, or
   * swapped for a symbolic link to another repository, shows as a new ref file.
   */
  head(): string {
    if (this.headSeen && this.headWatch.unchanged()) return this.headSeen.head;
    this.headWatch.beginCheck();
    try {
      return this.readHead();
    } catch (error) {
      this.headWatch.invalidate();
      throw error;
    }
  }

  private readHead(): string {
    const stat = statSync(this.refPath, { bigint: true, throwIfNoEntry: false });
    const stamp = stat && `${stat.ino}:${stat.mtimeNs}:${stat.size}`;
    // The same stamp is not proof of the same file: ext4 gives a freed inode number to the next
    // new file at once, and before Linux 6.13 stamps times to the timer tick, so a ref replaced
    // twice within a tick can come back with the stamp seen first. The content decides (41 bytes
    // read cost about what the stat does, and only when the watch cannot vouch for the head).
    if (stamp && this.headSeen?.stamp === stamp && readRef(this.gitdir, BRANCH_REF) === this.headSeen.head)
      return this.headSeen.head;
    this.headSeen = undefined;
    this.gone = !(this.options.stillInPlace?.() ?? true);
    if (this.gone) {
      this.headWatch.close();
      throw new RepositoryGoneError(this.fullName);
    }
    const head = readRef(this.gitdir, BRANCH_REF);
    if (!head) throw new LayoutError(`repository ${this.fullName} has no ${BRANCH_REF}`);
    // Without a loose ref file (packed refs only) there is no file to watch: read every time.
    this.headSeen = stamp ? { stamp, head } : undefined;
    if (head !== this.headChecked) {
      // A new head may come from a plain-git writer, who leaves loose objects, or follow git's
      // maintenance, which replaces packs: forget packs that are gone.
      this.headChecked = head;
      this.objects.refreshIfChanged();
      this.maintenance.afterNewHead();
    }
    return head;
  }

  /**
   * Stops watching the head and closes the packs (the repository is no longer served from this
   * object): packs read by windows keep their file open, and every pack's delta bases hold part
   * of the process's shared budget. A read after this opens the packs again.
   */
  close(): void {
    this.headWatch.close();
    for (const watch of [...(this.refsWatches ?? []), ...this.changeRefWatches.values()]) watch.close();
    this.changeRefWatches.clear();
    this.refsSeen = undefined;
    this.objects.resetCache();
  }

  async headSnapshot(): Promise<Snapshot> {
    return this.snapshot(this.head());
  }

  /** The parsed state at a commit; built once per commit, from the newest snapshot's parts. */
  snapshot(commitId: string): Promise<Snapshot> {
    let pending = this.snapshots.get(commitId);
    if (!pending) {
      const started = process.hrtime.bigint();
      pending = readSnapshot(this.objects, commitId, this.latest).catch((error: unknown) => {
        throw asDamagedCommit(error, this.fullName, commitId);
      });
      pending.then(
        () => telemetry.snapshotLoad(secondsSince(started)),
        () => undefined,
      );
      this.remember(commitId, pending);
      pending.then(
        (snapshot) => {
          if (this.snapshots.get(commitId) === pending) this.built.set(commitId, snapshot);
          this.makeLatest(snapshot);
        },
        () => {
          if (this.snapshots.peek(commitId) === pending) this.snapshots.delete(commitId);
        },
      );
    }
    return pending;
  }

  /** The snapshot of a commit if it is built already; never reads anything. */
  builtSnapshot(commitId: string): Snapshot | undefined {
    return this.built.get(commitId);
  }

  /** Bounded in repositoryCaches.ts: the least recently used snapshot (and its built copy) goes. */
  private remember(commitId: string, snapshot: Promise<Snapshot>): void {
    this.snapshots.set(commitId, snapshot);
  }

  private makeLatest(snapshot: Snapshot): void {
    this.latest = snapshot;
  }

  /** Runs `work` after every earlier writer of this repository in this process has finished. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** A hold on the server's push journal for one record, if the server keeps one (see commitOnce); let go after. */
  journalFile(): Promise<JournalFile | undefined> {
    return this.options.journal?.file() ?? Promise.resolve(undefined);
  }

  /** The path of a ref's loose file. */
  refFile(ref: string): string {
    return join(this.gitdir, ref);
  }

  /**
   * After a ref move made in this repository's turn (`exclusive`) by other means than `commit`: a
   * cluster member's apply of its leader's record (applyReplicated.ts) or a catch-up fetch. The
   * next read sees it at once, and the packs it added count towards the next merge, which runs in
   * the queue after it, as after a commit.
   */
  movedInTurn(): void {
    this.headWatch.invalidate();
    this.headMayHaveChanged();
    this.objects.refreshIfChanged();
    this.maintenance.afterCommit();
  }

  /**
   * Makes a staged commit the head, durably. With the server's push journal (pushJournal.ts), in
   * one fsync: the lock file with the new commit id, and the pack with its index, written and
   * renamed into place without fsyncs; then, under the lock, the compare-and-swap against
   * `parent`, the journal's record (the pack's bytes and the ref's move) appended and
   * fdatasynced, and the rename of the lock over the ref; the files are fsynced later by the
   * journal's checkpoint, and a power cut before that is undone by the journal's replay at the
   * next start. Without a journal (a command on the folder), in three rounds of fsyncs. First, at
   * once: the lock file and the pack with its index, each fsynced, then renamed into place. Then
   * the ref: lock, compare-and-swap, the pack folder's fsync, the rename, and the fsync of the
   * ref's folder, before the answer. The pack's folder entry is durable before the ref's rename,
   * so a power cut never leaves the ref ahead of its objects, even on a file system that keeps no
   * order between renames (RefLock.swap). Call inside `exclusive`.
   */
  async commit(staged: StagedCommit, parent: string): Promise<RefUpdate> {
    const ended = writeStarted(); // its small file calls go to the thread pool while others commit too
    try {
      return await this.commitOnce(staged, parent);
    } catch (error) {
      throw asStorageFault(error, this.fullName);
    } finally {
      ended();
    }
  }

  private async commitOnce(staged: StagedCommit, parent: string): Promise<RefUpdate> {
    // Journaled (a server's push, pushJournal.ts): the journal's record is the one fdatasync;
    // otherwise (a command on the folder, or no journal to be had) the files' own rounds.
    const journal = staged.objects.length > 0 ? await this.options.journal?.file() : undefined;
    // An HA leader's commit reaches the other nodes as its journal record: none, no commit.
    if (this.options.replicate && !journal)
      throw new Error('this cluster node cannot commit: its push journal is not available');
    try {
      return await this.commitWith(staged, parent, journal);
    } finally {
      journal?.letGo(); // the file may be retired now (see JournalFile.hold)
    }
  }

  private async commitWith(staged: StagedCommit, parent: string, journal: JournalFile | undefined): Promise<RefUpdate> {
    const durable = journal === undefined;
    const [lock, written] = await Promise.allSettled([
      RefLock.acquire(this.gitdir, BRANCH_REF, staged.commitId!, durable),
      this.objects.writeUntilFolderSync(staged.objects, durable),
    ]);
    if (written.status === 'rejected') {
      if (lock.status === 'fulfilled' && lock.value !== 'locked') await lock.value.release();
      throw written.reason;
    }
    // The pack stays kept (see ObjectStore) until the ref names its commit. When the ref was
    // locked or moved by another writer, the `.keep` stays too, until a later merge removes it as
    // a leftover (older than the stale-lock age): the retry (write/commit.ts) within the same second
    // stages the very same objects, hence a pack of the very same name, and a `git repack -a -d`
    // that listed that pack while it had no `.keep` deleted it after the retry had written it
    // again and moved the ref (acknowledged pushes were lost so, `git pack-refs` holding the lock).
    const placed = written.value;
    const keep = placed?.keep;
    let retried = false;
    try {
      if (lock.status === 'rejected') throw lock.reason;
      if (lock.value === 'locked') {
        retried = true;
        return { ok: false, why: 'locked' };
      }
      faultPoint('lock-taken');
      let update: RefUpdate;
      try {
        update =
          journal && placed
            ? await this.swapJournaled(lock.value, parent, journal, staged.commitId!, placed.pack)
            : await lock.value.swap(parent, keep ? [this.objects.packFolder] : []);
        retried = !update.ok;
      } finally {
        // Before the answer, not when inotify tells: the next read must see this commit.
        this.headWatch.invalidate();
        this.headMayHaveChanged();
      }
      if (update.ok) {
        faultPoint('lock-released');
        this.remember(staged.commitId!, Promise.resolve(staged.snapshot));
        this.built.set(staged.commitId!, staged.snapshot);
        this.makeLatest(staged.snapshot);
        this.maintenance.afterCommit();
      }
      return update;
    } finally {
      if (!retried) await keep?.release();
    }
  }

  /**
   * The ref's move made durable by a journal record (RefLock.swap); the files are fsynced by the
   * journal's checkpoint. In a cluster's leader the record is on the sync set's disks too before
   * the rename (the `replicate` hook); a refusal there voids the record and leaves the ref.
   */
  private async swapJournaled(
    lock: RefLock,
    parent: string,
    journal: JournalFile,
    commitId: string,
    pack: Pack,
  ): Promise<RefUpdate> {
    const replicate = this.options.replicate;
    let replicated: (() => void) | undefined;
    try {
      const update = await lock.swap(parent, async ({ before, after }) => {
        const entry: JournalEntry = {
          repository: relative(this.options.root ?? dirname(dirname(this.gitdir)), this.gitdir),
          ref: BRANCH_REF,
          old: parent,
          new: commitId,
          before,
          after,
          packName: pack.name,
          pack: pack.pack,
          index: pack.index,
        };
        if (!replicate) return journal.append(entry);
        // The record goes to the sync set while this node's own fdatasync runs, not after it: the
        // ref moves (and the push is answered) only once both are done. Should this node fail
        // meanwhile, the members hold a push no one acknowledged, as when it dies before their
        // answers: kept, or set aside when they next follow a leader without it (syncSet.ts).
        const [appended, sent] = await Promise.allSettled([journal.append(entry), replicate(entry)]);
        if (sent.status === 'fulfilled') replicated = sent.value;
        if (appended.status === 'rejected') throw appended.reason;
        if (sent.status === 'rejected') {
          appended.value.abandon();
          throw sent.reason;
        }
        return appended.value;
      });
      if (!update.ok) return update;
      update.ticket?.committed(
        [...this.objects.packPaths(pack.name), this.refPath],
        [this.objects.packFolder, dirname(this.refPath)],
      );
      return { ok: true };
    } finally {
      replicated?.();
    }
  }

  private headChecked: string | undefined;

  /** Why the last pack consolidation, the removal of the packs it merged, or the last repack failed, if one did. */
  get maintenanceProblem(): unknown {
    return this.maintenance.problem;
  }
}
