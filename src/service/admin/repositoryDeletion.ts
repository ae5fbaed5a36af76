/**
 * Deleting a repository (`cfghub repo delete`, `DELETE /rest/admin/repositories/…`).
 * A deletion cannot be a commit, so nothing is destroyed: the bare repository is moved, by one
 * rename, to `<repos>/.cfghub/deleted/<account>/<name>.git.<time>`, outside the listing and every
 * route, from where an operator can move it back. Its client tokens are revoked first, so a
 * repository made later under the same name never accepts them.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fsyncFolder } from '../../disk/durableFs.js';
import type { GitRepository } from '../../disk/repository.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { TokenService } from './tokens.js';

export async function deleteRepository(
  registry: RepositoryRegistry,
  tokens: TokenService,
  repository: GitRepository,
): Promise<{ repository: string; revokedTokens: number }> {
  return repository.exclusive(async () => {
    const revokedTokens = await tokens.revokeAll(repository);
    await setAside(registry.root, repository.account, repository.name, repository.gitdir, () => {
      // This process's registry looks for it afresh from now on (other processes notice the folder gone).
      repository.gone = true;
      repository.close();
    });
    return { repository: repository.fullName, revokedTokens };
  });
}

/**
 * Moves a bare repository out of the folder's listing by one rename, to
 * `<root>/.cfghub/deleted/<account>/<name>.git.<time>`, and makes the move durable (both folders
 * fsynced). Also how a read replica removes a mirror its primary no longer lists: nothing is
 * destroyed on any node. `moved` runs right after the rename.
 */
export async function setAside(
  root: string,
  account: string,
  name: string,
  gitdir: string,
  moved: () => void = () => undefined,
): Promise<string> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const folder = join(root, '.cfghub', 'deleted', account);
  await fs.promises.mkdir(folder, { recursive: true, mode: 0o700 });
  let target = join(folder, `${name}.git.${stamp}`);
  for (let n = 2; fs.existsSync(target); n++) target = join(folder, `${name}.git.${stamp}-${n}`); // twice in one second
  await fs.promises.rename(gitdir, target);
  moved();
  await Promise.all([fsyncFolder(folder), fsyncFolder(join(root, account))]);
  return target;
}
