/**
 * Deleting a repository (`cfghub repo delete`, `DELETE /rest/admin/repositories/…`).
 * A deletion cannot be a commit, so nothing is destroyed: the bare repository is moved, by one
 * rename, to `<repos>/.cfghub/deleted/<account>/<name>.git.<time>`, outside the listing and every
 * route, from where an operator can move it back. Its client tokens are revoked first, so a
 * repository made later under the same name never accepts them. The move itself: disk/setAside.ts.
 */
import { setAside } from '../../disk/setAside.js';
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
