/**
 * Keeps the number of packs small, as each push adds one: merges the smallest packs into one,
 * geometrically (each pack left holds at least twice the objects of all smaller ones together, as
 * `git repack --geometric=2` does), so the work per push stays small and the count stays about
 * logarithmic in the number of objects.
 *
 * Merging copies the stored entries of cfghub's packs (which hold no deltas) into one pack: no
 * object is inflated or deflated again. A merge never makes a pack larger than MERGED_PACK_LIMIT:
 * without a bound, the merges that take the largest pack grew with the history (a repository of
 * 160 MiB after five minutes of 16 clients merged 116 MiB in one piece of the event loop, held in
 * memory twice), so packs past the bound stay as they are, for `git gc` or `git repack` to
 * combine (and compress) whenever the operator wants fewer of them.
 *
 * Safe against crashes and other readers: the merged pack is durable before any old pack goes,
 * and an old pack's index is removed before its data, so no index ever names a missing pack.
 * Packs that git marks or indexes in other ways (`.keep`, `.promisor`, `.bitmap`, `.mtimes`) are
 * left alone, and so are pushes' packs still kept until their ref moves. A multi-pack-index does not stop merging: before a pack it names is deleted,
 * the index goes, under its lock, as `git repack -d` does (see multiPackIndex.ts).
 * Leftovers of crashed writers (a push's `.keep`, a temporary file) older than the stale-lock age
 * on the file system's clock are removed here too.
 * Run it inside the repository's queue, so no push of this process writes meanwhile.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { closeQuietly, createTemporary, fsyncFolder, removeIfPresent, syncFd, writeAll } from '../durableFs.js';
import { closeFile } from '../fileCalls.js';
import { fsNow } from '../refs/fsClock.js';
import {
  clearMultiPackIndex,
  packsNamedByIndex,
  removeIndexNamingMissingPacks,
  withIndexLock,
} from './multiPackIndex.js';
import { KEEP_TEXT, TEMPORARY_PREFIX, type ObjectStore } from './objectStore.js';
import { STALE_LOCK_MS } from '../refs/refs.js';
import { packHeader, packIndexSteps, type IndexedEntry } from '../../git/packWriter.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { isWholeObject, listPackEntriesSteps, type ListedEntry } from '../../git/packEntries.js';
import { indexedObjectCount, PackIndex } from '../../git/packIndex.js';
import { PackFormatError } from '../../git/errors.js';

/** Merging starts when there are more packs than this (of those small enough to merge). */
export const PACKS_BEFORE_MERGE = 16;
/**
 * The most bytes a merge writes (the packs it reads add up to this): the work and the memory of
 * one merge, and the size past which packs are no longer merged by cfghub. 16 MiB is about 4,000
 * pushes of one key at a time into 1,000 keys.
 */
export const MERGED_PACK_LIMIT = 16 * 1024 * 1024;

interface PackFile {
  readonly base: string;
  readonly objects: number;
  readonly bytes: number;
}

/** Packs that only have a `.pack` and an `.idx`. */
function mergeablePacks(folder: string): PackFile[] {
  const names = fs.readdirSync(folder);
  const siblings = new Map<string, string[]>();
  for (const name of names) {
    const match = /^(pack-[0-9a-f]{40})\.([a-z]+)$/.exec(name);
    if (!match) continue;
    siblings.set(match[1], [...(siblings.get(match[1]) ?? []), match[2]]);
  }
  const packs: PackFile[] = [];
  for (const [base, kinds] of siblings) {
    if (kinds.length !== 2 || !kinds.includes('pack') || !kinds.includes('idx')) continue;
    const header = Buffer.alloc(8 + 256 * 4);
    const handle = fs.openSync(join(folder, `${base}.idx`), 'r');
    try {
      fs.readSync(handle, header, 0, header.length, 0);
    } finally {
      fs.closeSync(handle);
    }
    const data = fs.statSync(join(folder, `${base}.pack`), { throwIfNoEntry: false }); // gone: git repacked it meanwhile
    if (data) packs.push({ base, objects: indexedObjectCount(header), bytes: data.size });
  }
  return packs;
}

/** The smallest packs to merge: a prefix where each next pack is at most twice the sum before it. */
export function geometricPrefix(sizes: readonly number[]): number {
  let sum = sizes[0] ?? 0;
  let count = 1;
  while (count < sizes.length && sizes[count] <= 2 * sum) sum += sizes[count++];
  return count;
}

/**
 * The packs to merge, when more than PACKS_BEFORE_MERGE of them are small enough to be merged (at
 * most half the limit each, so that any two fit: a large pack listed among the smallest, one
 * large file in few objects, cannot stop the others merging). Of those, by object count, the
 * geometric prefix, and at least two, as long as their bytes add up to no more than `limit`.
 */
export function packsToMerge<P extends { readonly objects: number; readonly bytes: number }>(
  packs: readonly P[],
  limit: number,
): P[] {
  const candidates = packs.filter((pack) => pack.bytes <= limit / 2).sort((a, b) => a.objects - b.objects);
  if (candidates.length <= PACKS_BEFORE_MERGE) return [];
  let count = Math.max(2, geometricPrefix(candidates.map((pack) => pack.objects)));
  let bytes = candidates.slice(0, count).reduce((sum, pack) => sum + pack.bytes, 0);
  while (bytes > limit) bytes -= candidates[--count].bytes;
  return candidates.slice(0, count);
}

/** The size of the pieces a merge reads its packs in and writes the merged pack in. */
const PIECE = 64 * 1024;

/** A pack to merge, with the entries its index lists (those of an earlier pack left out). */
interface Source {
  readonly pack: PackFile;
  readonly entries: readonly ListedEntry[];
}

/** A pack to merge turned out to hold deltas (which git writes): the merge goes on without it. */
class HoldsDeltas extends Error {
  constructor(readonly pack: PackFile) {
    super(`${pack.base} holds deltas`);
  }
}

/**
 * Merges small packs if there are too many; returns how many packs were merged into one. The
 * merged pack is copied from the packs' files to its own in pieces of PIECE bytes, never held
 * whole: read whole and assembled in one buffer, a merge took twice its size in memory for a
 * moment, blocks of a few MiB growing with the history that the C heap kept as the server's
 * resident memory after they were freed. Between pieces other requests are served
 * (timeSlices.ts).
 */
export async function consolidatePacks(store: ObjectStore, limit = MERGED_PACK_LIMIT): Promise<number> {
  const folder = store.packFolder;
  if (!fs.existsSync(folder)) return 0;
  await store.settled(); // packs an earlier merge is still removing are not merged again
  await removeIndexNamingMissingPacks(folder);
  await removeLeftovers(folder);
  const slices = new TimeSlices();
  const listed: { pack: PackFile; entries: ListedEntry[] }[] = [];
  for (const pack of packsToMerge(mergeablePacks(folder), limit)) {
    const index = new PackIndex(await fs.promises.readFile(join(folder, `${pack.base}.idx`)), pack.bytes);
    const entries = await slices.run(listPackEntriesSteps(index));
    if (entries) listed.push({ pack, entries }); // else: offsets past 2 GiB, or a version 1 index
  }
  for (;;) {
    if (listed.length < 2) return 0;
    const sources = await withoutRepeats(listed, slices);
    let merged: { name: string; temporary: string; index: Buffer };
    try {
      merged = await writeMergedPack(folder, sources, slices);
    } catch (error) {
      if (!(error instanceof HoldsDeltas)) throw error;
      listed.splice(
        listed.findIndex((source) => source.pack === error.pack),
        1,
      );
      continue;
    }
    await store.placeWrittenPack(merged.name, merged.temporary, merged.index);
    // The old packs' objects are all in the merged pack now, so removing them can wait: it runs
    // beside the next pushes rather than before them (an unlink can take milliseconds on a disk
    // mounted with discard). Each index goes before its data, so no index names a missing pack.
    const old = listed.map((source) => source.pack.base).filter((base) => base !== merged.name);
    store.removeLater(removePacks(folder, old));
    store.packsMerged(merged, old);
    store.packsWritten = 0;
    return listed.length;
  }
}

/** The packs' entries, each object once (the first pack listing it keeps it). */
async function withoutRepeats(
  listed: readonly { pack: PackFile; entries: readonly ListedEntry[] }[],
  slices: TimeSlices,
): Promise<Source[]> {
  const seen = new Set<string>();
  const sources: Source[] = [];
  for (const { pack, entries } of listed) {
    const kept: ListedEntry[] = [];
    for (const entry of entries) {
      const id = entry.oid.toString('hex');
      if (!seen.has(id)) kept.push(entry);
      seen.add(id);
      const paused = slices.pause();
      if (paused) await paused;
    }
    sources.push({ pack, entries: kept });
  }
  return sources;
}

/**
 * The merged pack written to a temporary file of `folder` (fsynced, closed) and its index; the
 * stored entries copied as they are, in pieces, through one buffer for reading and one for
 * writing. Throws HoldsDeltas for a pack holding a delta (its bases are found by offset, which
 * copying would change), having removed the temporary file.
 */
async function writeMergedPack(
  folder: string,
  sources: readonly Source[],
  slices: TimeSlices,
): Promise<{ name: string; temporary: string; index: Buffer }> {
  const count = sources.reduce((sum, source) => sum + source.entries.length, 0);
  const { temporary, fd } = await createTemporary(folder, TEMPORARY_PREFIX, 0o444);
  try {
    const out = new PieceWriter(fd);
    await out.append(packHeader(count));
    const indexed: IndexedEntry[] = [];
    const input = Buffer.allocUnsafeSlow(PIECE);
    for (const { pack, entries } of sources) {
      const file = await fs.promises.open(join(folder, `${pack.base}.pack`), 'r');
      try {
        // `input` holds the file's bytes from `held` to `heldEnd`.
        let held = 0;
        let heldEnd = 0;
        for (const entry of entries) {
          indexed.push({ oid: entry.oid, offset: out.offset, crc: entry.crc });
          for (let at = entry.offset; at < entry.end;) {
            if (at < held || at >= heldEnd) {
              const { bytesRead } = await file.read(input, 0, PIECE, at);
              if (bytesRead === 0) throw new PackFormatError(`${pack.base} is shorter than its index says`);
              held = at;
              heldEnd = at + bytesRead;
            }
            if (at === entry.offset && !isWholeObject(input[at - held])) throw new HoldsDeltas(pack);
            const end = Math.min(entry.end, heldEnd);
            await out.append(input.subarray(at - held, end - held));
            at = end;
          }
          const paused = slices.pause();
          if (paused) await paused;
        }
      } finally {
        await file.close();
      }
    }
    const checksum = await out.end();
    await syncFd(fd);
    await closeFile(fd);
    const index = await slices.run(packIndexSteps(indexed, checksum));
    return { name: `pack-${checksum.toString('hex')}`, temporary, index };
  } catch (error) {
    closeQuietly(fd);
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Bytes written to a file through one buffer of PIECE bytes, hashed as they go: a pack's SHA-1 checksum ends it. */
class PieceWriter {
  private readonly piece = Buffer.allocUnsafeSlow(PIECE);
  private used = 0;
  private readonly hash = createHash('sha1');
  /** Bytes appended so far: where the next entry starts. */
  offset = 0;

  constructor(private readonly fd: number) {}

  async append(bytes: Buffer): Promise<void> {
    for (let at = 0; at < bytes.length;) {
      const taken = bytes.copy(this.piece, this.used, at);
      this.used += taken;
      at += taken;
      if (this.used === PIECE) await this.flush();
    }
    this.offset += bytes.length;
  }

  /** Writes what is left and the checksum of all the bytes; the checksum. */
  async end(): Promise<Buffer> {
    await this.flush();
    const checksum = this.hash.digest();
    await writeAll(this.fd, checksum);
    return checksum;
  }

  private async flush(): Promise<void> {
    const bytes = this.piece.subarray(0, this.used);
    this.hash.update(bytes);
    await writeAll(this.fd, bytes);
    this.used = 0;
  }
}

/**
 * Deletes merged packs, holding `multi-pack-index.lock` and removing the index first if it names
 * one of them (git's rule). While git holds the lock the packs stay (their objects are in the
 * merged pack too) and the next merge takes them again. A `git multi-pack-index write` that
 * listed the packs before the lock and finishes after it leaves an index naming a deleted pack:
 * it is looked for again a little later (and before every merge) and removed.
 */
async function removePacks(folder: string, packs: readonly string[]): Promise<void> {
  const done = await withIndexLock(folder, async () => {
    const named = packsNamedByIndex(folder);
    if (named && packs.some((pack) => named.has(pack))) await clearMultiPackIndex(folder);
    for (const pack of packs) {
      await removeIfPresent(join(folder, `${pack}.idx`));
      await removeIfPresent(join(folder, `${pack}.pack`));
    }
    await fsyncFolder(folder);
    return true;
  });
  if (!done) return;
  for (const delay of INDEX_RECHECKS_MS) {
    const timer = setTimeout(() => void removeIndexNamingMissingPacks(folder).catch(() => undefined), delay);
    timer.unref();
  }
}

/** When to look again for a multi-pack-index naming a deleted pack, after deleting packs. */
const INDEX_RECHECKS_MS = [500, 3_000];

/** A push's `.keep` whose writer died, and temporary files of crashed writers, older than the stale-lock age on the file system's clock. */
export async function removeLeftovers(folder: string): Promise<number> {
  const names = fs.readdirSync(folder).filter((name) => name.startsWith(TEMPORARY_PREFIX) || name.endsWith('.keep'));
  if (names.length === 0) return 0;
  let removed = 0;
  const now = await fsNow(folder);
  for (const name of names) {
    const path = join(folder, name);
    const stat = fs.statSync(path, { throwIfNoEntry: false });
    if (!stat || now - stat.mtimeMs < STALE_LOCK_MS) continue;
    if (name.endsWith('.keep')) {
      // Only cfghub's own marks: an operator's or git's `.keep` stays forever, as git intends.
      const text = fs.readFileSync(path, 'utf8');
      if (!text.startsWith(KEEP_TEXT.split(' ')[0] + ' ')) continue;
    }
    await fs.promises.rm(path, { force: true });
    removed++;
  }
  return removed;
}
