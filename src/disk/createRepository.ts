/**
 * Bare repositories made whole or not at all: each is assembled in a temporary folder (the skeleton
 * git needs, then what fills it) and renamed into place, so a half-made repository is never
 * visible. A new repository is filled with a first commit holding its settings; a replica's new
 * mirror is filled by a fetch from its primary (service/replication/mirror.ts).
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { RepoSettings } from '../domain/model.js';
import { fsyncFolder, writeFileAtomic } from './durableFs.js';
import { BLOB_MODE, encodeObject, serializeCommit, serializeTree, type Signature } from '../git/gitObjects.js';
import { BRANCH_REF, serializeSettings, SETTINGS_FILE } from '../layout/layout.js';
import { makeFolders } from './folders.js';
import { ObjectStore } from './objects/objectStore.js';
import { RepositoryExistsError } from './errors.js';

const GIT_CONFIG = `[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = true
`;

/** The skeleton of an empty bare repository, in a new folder: objects, refs, HEAD on the branch, a bare config. */
async function writeSkeleton(folder: string): Promise<void> {
  await fs.promises.mkdir(join(folder, 'objects', 'pack'), { recursive: true });
  await fs.promises.mkdir(join(folder, 'refs', 'heads'), { recursive: true });
  await fs.promises.mkdir(join(folder, 'refs', 'tags'), { recursive: true });
  await writeFileAtomic(join(folder, 'HEAD'), `ref: ${BRANCH_REF}\n`, 0o644);
  await writeFileAtomic(join(folder, 'config'), GIT_CONFIG, 0o644);
}

/**
 * Makes the bare repository `gitdir`: the skeleton in `temporary` (a folder on the same file
 * system, not there yet; its parent is made if missing, private), filled by `fill` (durably), then renamed into place and the move made
 * durable. The temporary folder is gone afterwards, whatever happened. A repository already at
 * `gitdir` is a RepositoryExistsError.
 */
export async function assembleBareRepository(
  gitdir: string,
  temporary: string,
  fill: (folder: string) => Promise<void>,
): Promise<void> {
  const accountDir = dirname(gitdir);
  const name = basename(gitdir, '.git');
  makeFolders(dirname(temporary), 0o700);
  try {
    await writeSkeleton(temporary);
    await fill(temporary);
    await Promise.all([fsyncFolder(join(temporary, 'objects')), fsyncFolder(temporary)]);
    // Not fs.mkdir's recursive form, which never returns under /proc; a new account folder is made durable too.
    if (makeFolders(accountDir)) await fsyncFolder(dirname(accountDir));
    if (fs.existsSync(gitdir)) throw new RepositoryExistsError(`repository ${name} already exists`);
    try {
      await fs.promises.rename(temporary, gitdir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST')
        throw new RepositoryExistsError(`repository ${name} already exists`);
      throw error;
    }
    await fsyncFolder(accountDir);
  } finally {
    await fs.promises.rm(temporary, { recursive: true, force: true });
  }
}

/** A name for a temporary folder in `folder`, unique enough to never meet another: `<prefix><12 hex>`. */
export function temporaryIn(folder: string, prefix: string): string {
  return join(folder, `${prefix}${randomBytes(6).toString('hex')}`);
}

export async function createBareRepository(
  accountDir: string,
  name: string,
  settings: RepoSettings,
  signature: Signature,
  message: string,
): Promise<string> {
  makeFolders(accountDir); // not fs.mkdir's recursive form, which never returns under /proc
  const settingsBlob = encodeObject('blob', Buffer.from(serializeSettings(settings)));
  const tree = encodeObject('tree', serializeTree([{ name: SETTINGS_FILE, mode: BLOB_MODE, oid: settingsBlob.oid }]));
  const commit = encodeObject(
    'commit',
    serializeCommit({ tree: tree.oid, parents: [], author: signature, committer: signature, message }),
  );
  await assembleBareRepository(
    join(accountDir, `${name}.git`),
    temporaryIn(accountDir, '.creating-'),
    async (folder) => {
      await new ObjectStore(folder).writeDurably([settingsBlob, tree, commit]);
      await writeFileAtomic(join(folder, BRANCH_REF), `${commit.oid}\n`, 0o644);
      await fsyncFolder(join(folder, 'refs', 'heads'));
    },
  );
  return commit.oid;
}

/** Removes a folder of temporary ones and what is in it: what assemblies stopped midway (a process killed) left there. */
export async function removeUnfinished(folder: string): Promise<void> {
  await fs.promises.rm(folder, { recursive: true, force: true });
}
