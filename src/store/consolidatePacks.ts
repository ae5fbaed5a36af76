/**
 * Keeps the number of packs small, as each push adds one: merges the smallest packs into one,
 * geometrically (each pack left holds at least twice the objects of all smaller ones together, as
 * `git repack --geometric=2` does), so the work per push stays small and the count stays about
 * logarithmic in the number of objects.
 *
 * Merging copies the stored entries of cfghub's packs (which hold no deltas) into one pack: no
 * object is inflated or deflated again. Safe against crashes and other readers: the merged pack is
 * durable before any old pack goes, and an old pack's index is removed before its data, so no
 * index ever names a missing pack. Packs that git marks or
 * indexes in other ways (`.keep`, `.promisor`, `.bitmap`, a multi-pack-index) are left alone.
 * Run it inside the repository's queue, so no push of this process writes meanwhile.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fsyncFolder } from './durableFs.js';
import type { ObjectStore } from './objectStore.js';
import { assemblePack, packIndexCount, readPackEntries, type PackEntry } from './packWriter.js';

/** Merging starts when there are more packs than this. */
export const PACKS_BEFORE_MERGE = 8;

interface PackFile {
  readonly base: string;
  readonly objects: number;
}

/** Packs that only have a `.pack` and an `.idx`, by object count, smallest first. */
function mergeablePacks(folder: string): PackFile[] {
  const names = fs.readdirSync(folder);
  if (names.includes('multi-pack-index')) return [];
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
    packs.push({ base, objects: packIndexCount(header) });
  }
  return packs.sort((a, b) => a.objects - b.objects);
}

/** The smallest packs to merge: a prefix where each next pack is at most twice the sum before it. */
export function geometricPrefix(sizes: readonly number[]): number {
  let sum = sizes[0] ?? 0;
  let count = 1;
  while (count < sizes.length && sizes[count] <= 2 * sum) sum += sizes[count++];
  return count;
}

/** Merges small packs if there are too many; returns how many packs were merged into one. */
export async function consolidatePacks(store: ObjectStore): Promise<number> {
  const folder = store.packFolder;
  if (!fs.existsSync(folder)) return 0;
  await store.settled(); // packs an earlier merge is still removing are not merged again
  const packs = mergeablePacks(folder);
  if (packs.length <= PACKS_BEFORE_MERGE) return 0;
  const chosen = packs.slice(0, Math.max(2, geometricPrefix(packs.map((p) => p.objects))));
  // Entries are copied as they are stored: no inflating or deflating, so merging is a copy.
  const seen = new Set<string>();
  const entries: PackEntry[] = [];
  const merging: PackFile[] = [];
  for (const pack of chosen) {
    const packEntries = readPackEntries(fs.readFileSync(join(folder, `${pack.base}.pack`)), fs.readFileSync(join(folder, `${pack.base}.idx`)));
    if (!packEntries) continue;
    merging.push(pack);
    for (const entry of packEntries) {
      const id = entry.oid.toString('hex');
      if (!seen.has(id)) entries.push(entry);
      seen.add(id);
    }
  }
  if (merging.length < 2) return 0;
  const merged = await store.writePackDurably(assemblePack(entries));
  // The old packs' objects are all in the merged pack now, so removing them can wait: it runs
  // beside the next pushes rather than before them (an unlink can take milliseconds on a disk
  // mounted with discard). Each index goes before its data, so no index names a missing pack.
  const old = merging.filter((pack) => pack.base !== merged);
  store.removeLater(
    (async () => {
      for (const pack of old) {
        await fs.promises.rm(join(folder, `${pack.base}.idx`), { force: true });
        await fs.promises.rm(join(folder, `${pack.base}.pack`), { force: true });
      }
      await fsyncFolder(folder);
    })(),
  );
  store.resetCache();
  store.packsWritten = 0;
  return merging.length;
}
