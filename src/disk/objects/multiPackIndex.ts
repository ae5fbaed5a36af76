/**
 * git's multi-pack-index (`objects/pack/multi-pack-index`), which names packs: git cannot read a
 * repository whose index names a pack that is gone (`git fsck`, `cat-file`, path lookups fail
 * until the file is removed). git's own rule when it deletes a pack (`git repack -d`,
 * `remove_redundant_pack`): if the index names it, the index goes first, with its bitmaps and
 * reverse indexes (`clear_midx_file`). cfghub follows it when its pack merge deletes packs, under
 * `multi-pack-index.lock` (the lock git takes to write the index), and removes an index found
 * naming a missing pack, which a `git multi-pack-index write` that listed the packs before a
 * deletion and finished after it leaves (git has that race between its own commands too).
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { LockFile } from '../refs/refs.js';
import { repositoryNameOf } from '../storageFaults.js';

export const MULTI_PACK_INDEX = 'multi-pack-index';

const PACK_NAMES_CHUNK = 0x504e414d; // "PNAM"

/** The packs (`pack-<id>` base names) the multi-pack-index in `folder` names; undefined when there is none. */
export function packsNamedByIndex(folder: string): Set<string> | undefined {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(join(folder, MULTI_PACK_INDEX));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const names = new Set<string>();
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'MIDX') return names;
  const chunks = bytes[6];
  const packs = bytes.readUInt32BE(8);
  for (let i = 0; i < chunks && 12 + 12 * (i + 1) + 12 <= bytes.length; i++) {
    const at = 12 + 12 * i;
    if (bytes.readUInt32BE(at) !== PACK_NAMES_CHUNK) continue;
    const start = Number(bytes.readBigUInt64BE(at + 4));
    const end = Math.min(Number(bytes.readBigUInt64BE(at + 16)), bytes.length);
    let position = start;
    for (let p = 0; p < packs && position < end; p++) {
      const nul = bytes.indexOf(0, position);
      if (nul < 0 || nul > end) break;
      names.add(bytes.toString('latin1', position, nul).replace(/\.(idx|pack)$/, ''));
      position = nul + 1;
    }
  }
  return names;
}

/** Removes the multi-pack-index and its bitmaps and reverse indexes, as git's `clear_midx_file` does. */
export async function clearMultiPackIndex(folder: string): Promise<void> {
  await fs.promises.rm(join(folder, MULTI_PACK_INDEX), { force: true });
  for (const name of await fs.promises.readdir(folder)) {
    if (/^multi-pack-index-[0-9a-f]+\.(bitmap|rev)$/.test(name))
      await fs.promises.rm(join(folder, name), { force: true });
  }
}

/**
 * Runs `work` holding `multi-pack-index.lock`, so no git writes the index meanwhile; undefined
 * (and `work` not run) if git holds it now. The lock is the one primitive (LockFile), never
 * written, only held: a git that died holding it goes by the same rule as a ref's lock (stale on
 * the file system's clock), or it would stop every deletion for good.
 */
export async function withIndexLock<T>(folder: string, work: () => Promise<T>): Promise<T | undefined> {
  const lock = await LockFile.acquire(folder, MULTI_PACK_INDEX, { owner: repositoryNameOf(dirname(dirname(folder))) });
  if (lock === 'locked') return undefined;
  try {
    return await work();
  } finally {
    await lock.release();
  }
}

function packPresent(folder: string, pack: string): boolean {
  return fs.existsSync(join(folder, `${pack}.idx`)) && fs.existsSync(join(folder, `${pack}.pack`));
}

/** Removes the multi-pack-index if it names a pack that is not there; true if it did. */
export async function removeIndexNamingMissingPacks(folder: string): Promise<boolean> {
  const named = packsNamedByIndex(folder);
  if (!named || [...named].every((pack) => packPresent(folder, pack))) return false;
  const removed = await withIndexLock(folder, async () => {
    const again = packsNamedByIndex(folder);
    if (!again || [...again].every((pack) => packPresent(folder, pack))) return false;
    await clearMultiPackIndex(folder);
    return true;
  });
  return removed ?? false;
}
