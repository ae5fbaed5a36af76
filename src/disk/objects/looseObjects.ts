/**
 * Loose objects, which plain-git writers leave (cfghub itself writes packs): counted the way
 * `git gc --auto` counts them, from one of the 256 object folders, and packed with
 * `git repack -d`, which also removes the loose copies. Reads are unaffected: an object read
 * while it moves from loose to packed is looked up again (ObjectStore.read).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runGit } from '../gitCli/gitCommand.js';

/** git's own default for `gc.auto`: about this many loose objects trigger a repack. */
export const DEFAULT_LOOSE_OBJECT_LIMIT = 6700;

/** The folder git samples (`objects/17`), as its objects are spread evenly over 256 folders. */
const SAMPLE_FOLDER = '17';

/** Loose objects in the sampled folder. */
export function looseObjectSample(gitdir: string): number {
  try {
    return readdirSync(join(gitdir, 'objects', SAMPLE_FOLDER)).filter((name) => /^[0-9a-f]{38}$/.test(name)).length;
  } catch {
    return 0;
  }
}

/** The sampled count above which a repository holds more than `limit` loose objects, as git reckons. */
export function samplePerLimit(limit: number): number {
  return Math.ceil(limit / 256);
}

/** Packs the loose objects reachable from any ref and removes the loose copies. */
export async function packLooseObjects(gitdir: string): Promise<void> {
  await runGit(gitdir, ['repack', '-d', '-q']);
}
