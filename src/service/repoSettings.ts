/**
 * Repository settings after creation (issue 17): `repo set` changes any of the flags and the
 * description in one commit of `repository.yaml`; `repo delete` moves the repository's folder
 * aside (never destroys it) and revokes its tokens, so a repository created later under the same
 * name does not honour them.
 */
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import type { RepoSettings } from '../domain/model.js';
import type { RepositoryRegistry } from '../store/registry.js';
import type { GitRepository } from '../store/repository.js';
import { commitOnHead } from './commitOnHead.js';
import { ServiceError } from './errors.js';
import type { TokenService } from './tokens.js';

/** The settings `repo set` may change: everything but the levels and the creation date. */
export type SettingsChange = Partial<Omit<RepoSettings, 'levels' | 'created'>>;

const MAX_DESCRIPTION = 10_000;

export async function changeSettings(repository: GitRepository, change: SettingsChange): Promise<{ settings: RepoSettings; commit: string; changed: string[] }> {
  if (change.description !== undefined && (change.description.length > MAX_DESCRIPTION || change.description.includes('\u0000'))) {
    throw new ServiceError('invalid_argument', `a description is at most ${MAX_DESCRIPTION} characters, without NUL`);
  }
  let settings: RepoSettings | undefined;
  let changed: string[] = [];
  const result = await commitOnHead(repository, (base) => {
    settings = { ...base.settings, ...change };
    changed = (Object.keys(change) as (keyof SettingsChange)[]).filter((field) => base.settings[field] !== settings![field]);
    return { ok: true, changes: { keys: new Map(), files: new Map(), settings }, message: `Change settings: ${changed.join(', ') || 'none'}\n` };
  });
  if (result.kind === 'refused') throw new ServiceError('conflict', result.reason);
  return { settings: settings!, commit: result.commitId, changed };
}

/** Moves the repository to `<repos>/.cfghub/deleted/`; returns the new folder, relative to the repositories folder. */
export async function deleteRepository(registry: RepositoryRegistry, tokens: TokenService, repository: GitRepository, confirmed: boolean): Promise<{ movedTo: string; revokedTokens: number }> {
  if (!confirmed) throw new ServiceError('invalid_argument', `deleting ${repository.fullName} needs --yes (its folder is moved aside, not destroyed)`);
  const folder = join(registry.root, '.cfghub', 'deleted');
  await fs.promises.mkdir(folder, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const target = join(folder, `${repository.account}+${repository.name}-${stamp}.git`);
  // A lock held by a writer is waited for, so no commit is cut in half by the move.
  await repository.exclusive(() => fs.promises.rename(repository.gitdir, target));
  const revokedTokens = await tokens.revokeAll(repository);
  return { movedTo: relative(registry.root, target), revokedTokens };
}
