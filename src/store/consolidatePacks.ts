/**
 * Keeps the number of packs small, as each push adds one: merges the smallest packs into one,
 * geometrically (each pack left holds at least twice the objects of all smaller ones together, as
 * `git repack --geometric=2` does), so the work per push stays small and the count stays about
 * logarithmic in the number of objects.
 *
 * Safe against crashes and other readers: the merged pack, built from every object the old packs'
 * indexes list (each checked against its id), is durable before any old pack goes; an old pack's
 * index is removed before its data, so no index ever names a missing pack. Packs that git marks or
 * indexes in other ways (`.keep`, `.promisor`, `.bitmap`, a multi-pack-index) are left alone.
 * Run it inside the repository's queue, so no push of this process writes meanwhile.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fsyncFolder } from './durableFs.js';
import { encodeObject, type EncodedObject } from './gitObjects.js';
import type { ObjectStore } from './objectStore.js';

/** Merging starts when there are more packs than this. */
export const PACKS_BEFORE_MERGE = 8;

interface PackFile {
  readonly base: string;
  readonly objects: number;
}

/** The object ids an index (version 2) lists. */
export function packIndexIds(index: Buffer): string[] {
  if (index.readUInt32BE(0) !== 0xff744f63 || index.readUInt32BE(4) !== 2) throw new Error('not a version 2 pack index');
  const count = index.readUInt32BE(8 + 255 * 4);
  const ids: string[] = [];
  for (let i = 0, at = 8 + 256 * 4; i < count; i++, at += 20) ids.push(index.toString('hex', at, at + 20));
  return ids;
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
    packs.push({ base, objects: header.readUInt32BE(8 + 255 * 4) });
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
  const packs = mergeablePacks(folder);
  if (packs.length <= PACKS_BEFORE_MERGE) return 0;
  const chosen = packs.slice(0, Math.max(2, geometricPrefix(packs.map((p) => p.objects))));
  const ids = new Set<string>();
  for (const pack of chosen) for (const id of packIndexIds(fs.readFileSync(join(folder, `${pack.base}.idx`)))) ids.add(id);
  const objects: EncodedObject[] = [];
  for (const id of ids) {
    const { type, content } = await store.read(id);
    const object = encodeObject(type, content);
    if (object.oid !== id) throw new Error(`object ${id} reads back as ${object.oid}`);
    objects.push(object);
  }
  const merged = await store.writeDurably(objects);
  for (const pack of chosen) {
    if (pack.base === merged) continue;
    fs.rmSync(join(folder, `${pack.base}.idx`), { force: true });
    fs.rmSync(join(folder, `${pack.base}.pack`), { force: true });
  }
  await fsyncFolder(folder);
  store.resetCache();
  store.packsWritten = 0;
  return chosen.length;
}
