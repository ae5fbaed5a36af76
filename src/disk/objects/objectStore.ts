/**
 * The object database of one bare repository.
 *
 * Reads: packs first (read directly by `PackFile`, each pack's index parsed once), then loose
 * objects, which plain git writes; when neither holds an object, the pack folder is listed again,
 * as another process may have added or replaced packs. (isomorphic-git read objects here before:
 * it lists the pack folder and inflates in JavaScript on every read, which made the first pull of
 * a 10,000-key repository after a restart take about 1 s instead of 0.3 s.)
 *
 * Writes: each push is written as one pack and its index, each file atomically (temporary file,
 * rename) and durably: by the server's push journal (pushJournal.ts), whose record holds their
 * bytes, or else by fsyncs of their own (the files, then their folder), where durable loose
 * objects would cost two per object.
 * `consolidatePacks` keeps the number of packs small.
 *
 * Composing with git's own maintenance (`git repack -a -d`, `gc --prune=now`, multi-pack-index):
 * - A push's pack gets a `.keep` file before its `.pack` and `.idx` appear, held until its ref is
 *   moved (git's receive-pack does the same). `git repack -a -d` lists the packs it will delete
 *   before walking the refs, and never deletes a kept pack: without the `.keep`, a repack that
 *   walked the refs just before the ref moved deleted the push's only copy of its objects.
 * - Temporary files are named `.cfghub-tmp-*`, which `git prune` (part of `git gc`) leaves alone:
 *   it removes every `tmp_*` file of the pack folder older than its expiry, so `gc --prune=now`
 *   removed a push's files while it wrote them.
 * - A read that finds no object lists the pack folder again, a few times: `git repack` writes its
 *   new pack before deleting the old ones, so a second look always finds an object that moved.
 */
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { unlinkFile, writeSmallFile } from '../fileCalls.js';
import { fsyncFolder, renameIntoPlace, renameIntoPlaceNext, writeTemporary } from '../durableFs.js';
import { faultPoint } from '../faultPoints.js';
import type { EncodedObject, ObjectType } from '../../git/gitObjects.js';
import { PackFile, type StoredObject } from './packFile.js';
import { PackHolder } from './heldPacks.js';
import { buildPack, buildPackSteps, type Pack } from '../../git/packWriter.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { GitFormatError } from '../../git/errors.js';
import { repositoryNameOf } from '../storageFaults.js';
import { ObjectNotFoundError, RepositoryDamagedError } from '../errors.js';

export type { StoredObject } from './packFile.js';

/** Prefix of the temporary files of packs being written (not `tmp_`: `git prune` removes those). */
export const TEMPORARY_PREFIX = '.cfghub-tmp-';

/** The first line of the `.keep` file of a pack whose ref is not moved yet (git's receive-pack writes `receive-pack <pid> on <host>`). */
export const KEEP_TEXT = `cfghub ${process.pid} on ${hostname()}\n`;

/** The `.keep` of a push's pack, held until its ref is moved: `release` removes it. */
export interface PackKeep {
  release(): Promise<void>;
}

/** A push's pack in place, with its `.keep`. */
export interface PlacedPack {
  readonly keep: PackKeep;
  readonly pack: Pack;
}

/** How often a read that finds nothing lists the pack folder again before the object counts as missing. */
const RESCANS = 3;

/** Node's error codes of zlib and of reading past a buffer: a stored object's bytes are damaged. */
const DAMAGE_CODES: readonly string[] = ['ERR_OUT_OF_RANGE', 'ERR_BUFFER_OUT_OF_BOUNDS'];

/** Errors of reading a stored object that mean its bytes are damaged: git's formats broken, zlib's stream, a read past the end. */
function isDamage(error: unknown): boolean {
  if (error instanceof GitFormatError || error instanceof RangeError) return true;
  const code = (error as { code?: unknown })?.code;
  return (
    typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_ZLIB') || DAMAGE_CODES.includes(code))
  );
}

function unwrap(wrapped: Buffer): StoredObject {
  const space = wrapped.indexOf(0x20);
  const nul = wrapped.indexOf(0, space);
  return { type: wrapped.toString('latin1', 0, space) as ObjectType, content: wrapped.subarray(nul + 1) };
}

async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlinkFile(path);
  } catch {
    // removed already (a merge took the pack)
  }
}

const PACK_INDEX = /^(pack-[0-9a-f]{40})\.idx$/;

export class ObjectStore {
  /** Open packs by name; undefined until the first read lists the pack folder. */
  private packs: Map<string, PackFile> | undefined;
  /** Packs this process wrote since the last consolidation. */
  packsWritten = 0;
  /** What the open packs hold in memory, within the process's budget: closed when others need the room (heldPacks.ts). */
  private readonly holder = new PackHolder(() => this.resetCache());
  private readonly grew = (bytes: number): void => this.holder.hold(bytes);

  /** `account/name`, for errors (never a path). */
  readonly repository: string;

  /**
   * `objectsFolder` is the repository's `objects` folder unless another is named: a push's
   * quarantine (git's `objects/incoming-*`), read before its objects may enter the repository.
   */
  constructor(
    readonly gitdir: string,
    private readonly objectsFolder = join(gitdir, 'objects'),
  ) {
    this.repository = repositoryNameOf(gitdir);
  }

  /** What this store's open packs hold in memory, in bytes (heldPacks.ts). */
  get packBytesHeld(): number {
    return this.holder.heldBytes;
  }

  get packFolder(): string {
    return join(this.objectsFolder, 'pack');
  }

  /** An object by id (40 hex digits). */
  async read(oid: string): Promise<StoredObject> {
    const id = Buffer.from(oid, 'hex');
    this.holder.used();
    try {
      let found = this.fromPacks(id) ?? this.fromLoose(oid);
      for (let rescan = 0; !found && rescan < RESCANS; rescan++) {
        this.rescanPacks();
        found = this.fromPacks(id) ?? this.fromLoose(oid);
      }
      if (!found) throw new ObjectNotFoundError(this.repository, oid);
      return found;
    } catch (error) {
      if (error instanceof RepositoryDamagedError || !isDamage(error)) throw error;
      throw new RepositoryDamagedError(
        this.repository,
        oid,
        `cannot be read (${(error as Error).message.replace(/\/[^\s]*/g, '…')})`,
      );
    }
  }

  /** Whether this store holds an object (an open pack's index lists it, or its loose file is there): nothing is read. */
  holds(oid: string): boolean {
    if (!this.packs) this.rescanPacks();
    const id = Buffer.from(oid, 'hex');
    for (const pack of this.packs!.values()) if (pack.has(id)) return true;
    return fs.existsSync(join(this.objectsFolder, oid.slice(0, 2), oid.slice(2)));
  }

  /** The pack folder's mtime when it was last listed: a change means git added or removed packs. */
  private listedStamp: number | undefined;

  /** Lists the pack folder again if packs were added or removed since (git repack, gc): frees the memory of deleted packs. */
  refreshIfChanged(): void {
    if (!this.packs) return;
    const stamp = fs.statSync(this.packFolder, { throwIfNoEntry: false })?.mtimeMs;
    if (stamp === this.listedStamp) return;
    try {
      this.rescanPacks();
    } catch {
      this.resetCache(); // a damaged pack: the read that needs it answers with the object it could not read
    }
  }

  /**
   * Up to `limit` ids of stored objects that start with `prefix` (lower-case hex, 2 to 40 digits),
   * from the packs (listed again first, as another process may have added some) and the loose
   * objects of the prefix's folder: what a short commit id names, as `git rev-parse` finds it.
   */
  idsWithPrefix(prefix: string, limit: number): string[] {
    try {
      this.rescanPacks();
    } catch (error) {
      if (!isDamage(error)) throw error;
      throw new RepositoryDamagedError(this.repository, prefix, `cannot be looked up (${(error as Error).message})`);
    }
    const found = new Set<string>();
    for (const pack of this.packs!.values()) {
      for (const id of pack.idsWithPrefix(prefix, limit)) found.add(id);
    }
    let loose: string[] = [];
    try {
      loose = fs.readdirSync(join(this.objectsFolder, prefix.slice(0, 2)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const name of loose) {
      const id = prefix.slice(0, 2) + name;
      if (id.length === 40 && id.startsWith(prefix)) found.add(id);
    }
    return [...found].sort().slice(0, limit);
  }

  /**
   * Writes objects as one pack and its index so that they survive a crash once this resolves.
   * The index is renamed into place last, as readers find packs by their index.
   */
  async writeDurably(objects: readonly EncodedObject[]): Promise<void> {
    if (objects.length === 0) return;
    const pack = buildPack(objects);
    await this.placePack(pack, false);
    await fsyncFolder(this.packFolder);
  }

  /**
   * Writes objects as one pack and its index, each fsynced and renamed into place, all but the
   * fsync of the pack folder, which the caller owes before relying on them: the commit path does
   * it beside the ref folder's fsync (see GitRepository.commit). The pack is kept (`.keep`) until
   * the caller releases it, once the ref is moved (a pack whose ref was locked or moved stays
   * kept: its retry may write the very same pack; see GitRepository.commit). Undefined if there
   * was no pack to write. `durable: false` for a journaled commit (pushJournal.ts): neither file
   * is fsynced, the journal's record holds their bytes.
   */
  async writeUntilFolderSync(objects: readonly EncodedObject[], durable = true): Promise<PlacedPack | undefined> {
    if (objects.length === 0) return undefined;
    const pack = await new TimeSlices().run(buildPackSteps(objects)); // a large push's pack, in slices
    const keep = (await this.placePack(pack, true, durable))!;
    faultPoint('objects-synced');
    this.openWritten(pack);
    this.packsWritten++;
    return { keep, pack };
  }

  /**
   * Places a pack built elsewhere (a cluster member's copy of its leader's pack, see
   * disk/applyReplicated.ts) as a push's own pack is placed: kept (`.keep`) until the caller's ref
   * has moved, each file fsynced (the folder's fsync is the caller's, before its ref moves), and
   * opened by this store. `durable: false` when a journal's record holds their bytes (as for a
   * journaled commit).
   */
  async placeKept(pack: Pack, durable = true): Promise<PlacedPack> {
    const keep = (await this.placePack(pack, true, durable))!;
    this.openWritten(pack);
    this.packsWritten++;
    return { keep, pack };
  }

  /** The paths of a pack's data and index. */
  packPaths(name: string): [string, string] {
    const base = join(this.packFolder, name);
    return [`${base}.pack`, `${base}.idx`];
  }

  /** Writes a pack and its index, each atomically and durably; returns the pack's name. */
  async writePackDurably(pack: Pack): Promise<string> {
    await this.placePack(pack, false);
    await fsyncFolder(this.packFolder);
    return pack.name;
  }

  /**
   * Places a pack written and fsynced to a temporary file of the pack folder (a merge's, written
   * in pieces: consolidatePacks.ts) with its index, as `writePackDurably` places a pack: the index
   * written and fsynced, both renamed into place (the index last), the folder fsynced.
   */
  async placeWrittenPack(name: string, temporary: string, index: Buffer): Promise<void> {
    let indexFile: string;
    try {
      indexFile = await writeTemporary(join(this.packFolder, `${name}.idx`), index, 0o444, TEMPORARY_PREFIX);
    } catch (error) {
      await fs.promises.unlink(temporary).catch(() => undefined);
      throw error;
    }
    await this.renameIntoPlace(join(this.packFolder, name), temporary, indexFile, undefined);
    await fsyncFolder(this.packFolder);
  }

  /**
   * The pack and its index in place, each fsynced; their folder not yet. With `keep`, a `.keep`
   * file is written before either appears (git lists packs by their `.pack` and checks for the
   * `.keep` then), returned for the caller to release. On a failure nothing of it is left behind.
   */
  private async placePack(pack: Pack, keep: boolean, durable = true): Promise<PackKeep | undefined> {
    const folder = this.packFolder;
    if (!fs.existsSync(folder)) {
      await fs.promises.mkdir(folder, { recursive: true });
      await fsyncFolder(this.objectsFolder);
    }
    const base = join(folder, pack.name);
    const written = await Promise.allSettled([
      writeTemporary(`${base}.pack`, pack.pack, 0o444, TEMPORARY_PREFIX, durable),
      writeTemporary(`${base}.idx`, pack.index, 0o444, TEMPORARY_PREFIX, durable),
    ]);
    const temporaries = written.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = written.find((result) => result.status === 'rejected');
    if (failed) {
      await Promise.all(temporaries.map((file) => fs.promises.unlink(file).catch(() => undefined)));
      throw failed.reason;
    }
    const [packFile, indexFile] = temporaries;
    const keepFile = `${base}.keep`;
    const held: PackKeep | undefined = keep ? { release: async () => unlinkIfThere(keepFile) } : undefined;
    await this.renameIntoPlace(base, packFile, indexFile, held && keepFile);
    return held;
  }

  /** A pack's written temporary files renamed into place, the index last; after a `.keep` when `keepFile` is named. On a failure nothing of it is left behind. */
  private async renameIntoPlace(
    base: string,
    packFile: string,
    indexFile: string,
    keepFile: string | undefined,
  ): Promise<void> {
    faultPoint('objects-written');
    try {
      if (keepFile) await writeSmallFile(keepFile, KEEP_TEXT, 0o644);
      await renameIntoPlace(packFile, `${base}.pack`);
      await renameIntoPlaceNext(indexFile, `${base}.idx`);
    } catch (error) {
      await Promise.all([packFile, indexFile].map((file) => fs.promises.unlink(file).catch(() => undefined)));
      if (keepFile) await unlinkIfThere(keepFile);
      throw error;
    }
  }

  /** Removals of merged packs still running (see consolidatePacks); a failure is kept, not thrown. */
  private removals: Promise<void> = Promise.resolve();
  removalProblem: unknown;

  removeLater(removal: Promise<void>): void {
    const done = removal.then(
      () => (this.removalProblem = undefined),
      (error: unknown) => (this.removalProblem = error),
    );
    this.removals = Promise.all([this.removals, done]).then(() => undefined);
  }

  /** Resolves when every removal started so far has ended. */
  settled(): Promise<void> {
    return this.removals;
  }

  /**
   * After this process merged packs (consolidatePacks.ts): the merged pack is opened from its file
   * and the packs merged into it are forgotten, while every other pack stays open.
   * (Forgetting them all made the next read open every pack again, reading the largest whole:
   * after every merge of every repository taking pushes.)
   */
  packsMerged(merged: { readonly name: string; readonly index: Buffer }, old: readonly string[]): void {
    if (!this.packs) return;
    for (const name of old) this.closePack(name);
    try {
      this.open(merged.name, () =>
        PackFile.withIndex(join(this.packFolder, merged.name), merged.name, merged.index, { grew: this.grew }),
      );
    } catch (error) {
      // The merged pack is opened from its file, which a `git repack -a -d` may have taken
      // already (it is not kept): the next read lists the folder again.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.resetCache();
    }
  }

  /**
   * Opens a pack this process has just written, in place of one of the same name already open (a
   * retried push writes the very same pack; a read may have listed the folder meanwhile), which
   * is closed: a pack read from its file holds a descriptor.
   */
  private openWritten(pack: Pack): void {
    this.open(pack.name, () =>
      PackFile.written(join(this.packFolder, pack.name), pack.name, pack.pack, pack.index, { grew: this.grew }),
    );
  }

  /** Opens a pack (`opening`) in place of one of the same name already open, which is closed. */
  private open(name: string, opening: () => PackFile): void {
    if (!this.packs) return;
    const opened = opening();
    this.closePack(name);
    this.packs.set(name, opened);
    this.holder.hold(opened.heldBytes);
  }

  /** Closes an open pack (gone from the folder, merged, or written again) and lets go of what it held. */
  private closePack(name: string): void {
    const pack = this.packs?.get(name);
    if (!pack) return;
    this.holder.release(pack.heldBytes);
    pack.close();
    this.packs!.delete(name);
    if (this.lastFound === pack) this.lastFound = undefined; // would keep its bytes
  }

  /** Forget open packs, after the set of packs changed; the next read lists the folder again. */
  resetCache(): void {
    for (const pack of this.packs?.values() ?? []) pack.close();
    this.packs = undefined;
    this.lastFound = undefined; // would keep its bytes
    this.holder.releaseAll();
  }

  /**
   * The pack the last object was found in, tried first, as git does: reads come in runs from one
   * pack (a commit's trees and key documents, a snapshot's shards), and with many packs open (a
   * long history past the merge's bound, see consolidatePacks.ts) trying each in turn cost about
   * 0.1 µs per pack per read. Checked against the open packs by name, so a pack closed since is
   * never read.
   */
  private lastFound: PackFile | undefined;

  private fromPacks(id: Buffer): StoredObject | undefined {
    if (!this.packs) this.rescanPacks();
    const last = this.lastFound;
    if (last && this.packs!.get(last.name) === last) {
      const object = last.read(id, this.readBase);
      if (object) return object;
    }
    for (const pack of this.packs!.values()) {
      if (pack === last) continue;
      const object = pack.read(id, this.readBase);
      if (object) {
        this.lastFound = pack;
        return object;
      }
    }
    return undefined;
  }

  /** The base of a REF_DELTA entry, which may live in another pack or loose. */
  private readonly readBase = (id: Buffer): StoredObject | undefined => {
    for (const pack of this.packs!.values()) if (pack.has(id)) return pack.read(id, this.readBase);
    return this.fromLoose(id.toString('hex'));
  };

  private fromLoose(oid: string): StoredObject | undefined {
    let deflated: Buffer;
    try {
      deflated = fs.readFileSync(join(this.objectsFolder, oid.slice(0, 2), oid.slice(2)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    let wrapped: Buffer;
    try {
      wrapped = inflateSync(deflated);
    } catch (error) {
      throw new RepositoryDamagedError(
        this.repository,
        oid,
        `cannot be read (its loose file is damaged: ${(error as Error).message})`,
      );
    }
    const object = unwrap(wrapped);
    if (object.content.length !== Number(wrapped.toString('latin1', wrapped.indexOf(0x20) + 1, wrapped.indexOf(0)))) {
      throw new RepositoryDamagedError(this.repository, oid, 'cannot be read (its loose file is truncated)');
    }
    return object;
  }

  /** Opens packs that appeared since the last listing and closes those that are gone. */
  private rescanPacks(): void {
    this.listedStamp = fs.statSync(this.packFolder, { throwIfNoEntry: false })?.mtimeMs;
    const listed = new Set<string>();
    try {
      for (const file of fs.readdirSync(this.packFolder)) {
        const name = PACK_INDEX.exec(file)?.[1];
        if (name) listed.add(name);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const packs = (this.packs ??= new Map<string, PackFile>());
    for (const name of packs.keys()) if (!listed.has(name)) this.closePack(name);
    for (const name of listed) {
      if (packs.has(name)) continue;
      try {
        const pack = PackFile.open(join(this.packFolder, name), name, { grew: this.grew });
        packs.set(name, pack);
        this.holder.hold(pack.heldBytes);
      } catch (error) {
        // An index whose pack is gone (removed by another process between listing and opening).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }
}
