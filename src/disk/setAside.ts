/**
 * Moving a bare repository out of the folder's listing by one rename, to
 * `<root>/.cfghub/deleted/<account>/<name>.git.<time>`, made durable (both folders fsynced).
 * How a repository is deleted (service/admin/repositoryDeletion.ts), and how a read replica
 * removes a mirror its primary no longer lists: nothing is destroyed on any node.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { fsyncFolder } from './durableFs.js';

/** Moves `gitdir` aside and returns where it went; `moved` runs right after the rename. */
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
