/**
 * Creates a bare repository with a first commit holding its settings. It is assembled in a
 * temporary folder and renamed into place, so a half-made repository is never visible.
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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

export async function createBareRepository(
  accountDir: string,
  name: string,
  settings: RepoSettings,
  signature: Signature,
  message: string,
): Promise<string> {
  makeFolders(accountDir); // not fs.mkdir's recursive form, which never returns under /proc
  const gitdir = join(accountDir, `${name}.git`);
  const temporary = join(accountDir, `.creating-${randomBytes(6).toString('hex')}`);
  await fs.promises.mkdir(join(temporary, 'objects'), { recursive: true });
  await fs.promises.mkdir(join(temporary, 'refs', 'heads'), { recursive: true });
  await fs.promises.mkdir(join(temporary, 'refs', 'tags'), { recursive: true });
  try {
    await writeFileAtomic(join(temporary, 'HEAD'), `ref: ${BRANCH_REF}\n`, 0o644);
    await writeFileAtomic(join(temporary, 'config'), GIT_CONFIG, 0o644);
    const settingsBlob = encodeObject('blob', Buffer.from(serializeSettings(settings)));
    const tree = encodeObject('tree', serializeTree([{ name: SETTINGS_FILE, mode: BLOB_MODE, oid: settingsBlob.oid }]));
    const commit = encodeObject(
      'commit',
      serializeCommit({ tree: tree.oid, parents: [], author: signature, committer: signature, message }),
    );
    await new ObjectStore(temporary).writeDurably([settingsBlob, tree, commit]);
    await writeFileAtomic(join(temporary, BRANCH_REF), `${commit.oid}\n`, 0o644);
    await Promise.all([fsyncFolder(join(temporary, 'refs', 'heads')), fsyncFolder(temporary)]);
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
    return commit.oid;
  } finally {
    await fs.promises.rm(temporary, { recursive: true, force: true });
  }
}
