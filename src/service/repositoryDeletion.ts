/**
 * Deleting a repository (`cfghub repo delete`, `DELETE /rest/admin/repositories/…`, issue 19).
 * A deletion cannot be a commit, so nothing is destroyed: the bare repository is moved, by one
 * rename, to `<repos>/.cfghub/deleted/<account>/<name>.git.<time>`, outside the listing and every
 * route, from where an operator can move it back. Its client tokens are revoked first, so a
 * repository made later under the same name never accepts them.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fsyncFolder } from '../disk/durableFs.js';
import type { GitRepository } from '../disk/repository.js';
import type { RepositoryRegistry } from '../disk/registry.js';
import type { TokenService } from './tokens.js';

export async function deleteRepository(registry: RepositoryRegistry, tokens: TokenService, repository: GitRepository): Promise<{ repository: string; revokedTokens: number }> {
  return repository.exclusive(async () => {
    const revokedTokens = await tokens.revokeAll(repository);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const folder = join(registry.root, '.cfghub', 'deleted', repository.account);
    await fs.promises.mkdir(folder, { recursive: true, mode: 0o700 });
    await fs.promises.rename(repository.gitdir, join(folder, `${repository.name}.git.${stamp}`));
    // This process's registry looks for it afresh from now on (other processes notice the folder gone).
    repository.gone = true;
    repository.close();
    await Promise.all([fsyncFolder(folder), fsyncFolder(join(registry.root, repository.account))]);
    return { repository: repository.fullName, revokedTokens };
  });
}
