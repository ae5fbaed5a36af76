/**
 * The start-up recovery pass, as etcd does at boot: what crashed writers left
 * in the repositories folder is cleaned when the server starts, not left to `git gc` or to the
 * next writer of that repository. Each removal follows the rule its owner already uses, so the
 * pass never takes away something a live writer (another cfghub process, plain git) still uses:
 * - half-created repositories (`<account>/.creating-*`, see createRepository.ts) older than the
 *   stale-lock age on the file system's clock;
 * - cfghub's own `.keep` marks and `.cfghub-tmp-*` files in a pack folder, by the same age
 *   (removeLeftovers in consolidatePacks.ts; an operator's or git's `.keep` stays);
 * - stale locks of the branch and tag refs and of `packed-refs` (removeStaleLock in refs.ts: a
 *   lock whose cfghub holder is alive stays, however old).
 * The work is bounded: one folder at a time, only the folders named above, no recursion.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { removeLeftovers } from './objects/consolidatePacks.js';
import { ageOnFsClock } from './refs/fsClock.js';
import { removeIfStale, STALE_LOCK_MS } from './refs/refs.js';
import { problemOf } from './storageFaults.js';
import { subfolders } from './folders.js';

export interface RecoveryFinding {
  /** `account/name` of the repository, or `account` for a half-created one (never a path). */
  readonly repository: string;
  readonly halfCreatedRemoved: number;
  readonly leftoversRemoved: number;
  readonly staleLocksRemoved: number;
  /** Something that could not be cleaned (never a path). */
  readonly problem?: string;
}

/** The folders in `path`; none when it cannot be read (recovery cleans what it can). */
function folders(path: string): string[] {
  try {
    return subfolders(path);
  } catch {
    return [];
  }
}

function lockNames(path: string): string[] {
  try {
    return fs.readdirSync(path).filter((name) => name.endsWith('.lock') && !name.startsWith('.'));
  } catch {
    return [];
  }
}

async function removeHalfCreated(accountDir: string): Promise<number> {
  let removed = 0;
  for (const name of folders(accountDir).filter((folder) => folder.startsWith('.creating-'))) {
    const path = join(accountDir, name);
    const stat = fs.statSync(path, { throwIfNoEntry: false });
    if (!stat || (await ageOnFsClock(accountDir, stat)) < STALE_LOCK_MS) continue; // maybe being created right now
    await fs.promises.rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * Removes the stale locks of a repository's branch and tag refs and of `packed-refs` (see
 * removeStaleLock in refs.ts); how many. Also for a follower whose fetch a lock left by a crash
 * stops: git itself never takes a lock for stale.
 */
export async function removeStaleLocks(gitdir: string, repository: string): Promise<number> {
  const locks = [
    ...lockNames(join(gitdir, 'refs', 'heads')).map((name) => `refs/heads/${name}`),
    ...lockNames(join(gitdir, 'refs', 'tags')).map((name) => `refs/tags/${name}`),
    ...(fs.existsSync(join(gitdir, 'packed-refs.lock')) ? ['packed-refs.lock'] : []),
  ];
  let removed = 0;
  // Reported as any stale lock is (`stale-lock-removed` in the server's log), with its age.
  for (const lock of locks)
    if (await removeIfStale(join(gitdir, lock), lock.slice(0, -'.lock'.length), repository)) removed++;
  return removed;
}

/** Cleans what crashed writers left under `root`; one finding per repository where something was found. */
export async function recoverAtStart(root: string): Promise<RecoveryFinding[]> {
  const findings: RecoveryFinding[] = [];
  for (const account of folders(root).filter((name) => !name.startsWith('.'))) {
    const accountDir = join(root, account);
    try {
      const halfCreated = await removeHalfCreated(accountDir);
      if (halfCreated > 0)
        findings.push({
          repository: account,
          halfCreatedRemoved: halfCreated,
          leftoversRemoved: 0,
          staleLocksRemoved: 0,
        });
    } catch (error) {
      findings.push({
        repository: account,
        halfCreatedRemoved: 0,
        leftoversRemoved: 0,
        staleLocksRemoved: 0,
        problem: problemOf(error),
      });
    }
    for (const name of folders(accountDir).filter((folder) => folder.endsWith('.git'))) {
      const gitdir = join(accountDir, name);
      const repository = `${account}/${name.slice(0, -'.git'.length)}`;
      try {
        const packFolder = join(gitdir, 'objects', 'pack');
        const leftovers = fs.existsSync(packFolder) ? await removeLeftovers(packFolder) : 0;
        const locks = await removeStaleLocks(gitdir, repository);
        if (leftovers + locks > 0)
          findings.push({ repository, halfCreatedRemoved: 0, leftoversRemoved: leftovers, staleLocksRemoved: locks });
      } catch (error) {
        findings.push({
          repository,
          halfCreatedRemoved: 0,
          leftoversRemoved: 0,
          staleLocksRemoved: 0,
          problem: problemOf(error),
        });
      }
    }
  }
  return findings;
}
