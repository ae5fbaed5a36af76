/** Creating repositories and reading their records (the listing). */
import { join } from 'node:path';
import { isValidLevelName, MAX_LEVELS, MIN_LEVELS } from '../../domain/context.js';
import { isoSeconds } from '../../lib/dates.js';
import type { RepoSettings } from '../../domain/model.js';
import { nameProblem } from '../../domain/names.js';
import { createBareRepository } from '../../disk/createRepository.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { ServiceError } from '../errors.js';
import type { SettingsChange } from './repositorySettings.js';
import { signature } from '../write/push.js';
import { RepositoryExistsError } from '../../disk/errors.js';

/** A new repository: its names, its levels (fixed for good) and the settings that may change later. */
export interface NewRepository extends SettingsChange {
  readonly account: string;
  readonly name: string;
  readonly levels: readonly string[];
}

/** `ACCOUNT/NAME` as the CLI takes it. */
export function parseFullName(text: string): { account: string; name: string } {
  const parts = text.split('/');
  if (parts.length !== 2)
    throw new ServiceError('invalid_argument', `expected ACCOUNT/NAME, got ${JSON.stringify(text)}`);
  const [account, name] = parts;
  const problem = nameProblem('account name', account) ?? nameProblem('repository name', name);
  if (problem) throw new ServiceError('invalid_argument', problem);
  return { account, name };
}

function checkLevels(levels: readonly string[]): void {
  if (levels.length < MIN_LEVELS || levels.length > MAX_LEVELS) {
    throw new ServiceError(
      'invalid_argument',
      `a repository has ${MIN_LEVELS} to ${MAX_LEVELS} context levels, got ${levels.length}`,
    );
  }
  const seen = new Set<string>();
  for (const level of levels) {
    if (!isValidLevelName(level)) {
      throw new ServiceError(
        'invalid_argument',
        `context level ${JSON.stringify(level)} must be letters and digits joined by single '-', '.' or '_'`,
      );
    }
    if (seen.has(level.toLowerCase()))
      throw new ServiceError('invalid_argument', `context level ${level} appears twice`);
    seen.add(level.toLowerCase());
  }
}

export async function createRepository(registry: RepositoryRegistry, input: NewRepository): Promise<GitRepository> {
  const problem = nameProblem('account name', input.account) ?? nameProblem('repository name', input.name);
  if (problem) throw new ServiceError('invalid_argument', problem);
  checkLevels(input.levels);
  if (registry.find(input.account, input.name, { fresh: true })) {
    throw new ServiceError('conflict', `repository ${input.account}/${input.name} already exists`);
  }
  const author = signature();
  const settings: RepoSettings = {
    levels: [...input.levels],
    description: input.description ?? '',
    isPrivate: input.isPrivate ?? false,
    isPersonal: input.isPersonal ?? false,
    accessControlsEnabled: input.accessControlsEnabled ?? false,
    vdtEnabled: input.vdtEnabled ?? true,
    securityEnabled: input.securityEnabled ?? true,
    contextGroupsEnabled: input.contextGroupsEnabled ?? false,
    tokenFreePush: input.tokenFreePush ?? false,
    tokenFreePull: input.tokenFreePull ?? false,
    created: isoSeconds(new Date(author.timestamp * 1000)),
  };
  const account = registry.accountFolder(input.account) ?? input.account;
  try {
    await createBareRepository(
      join(registry.root, account),
      input.name,
      settings,
      author,
      `Create repository ${account}/${input.name}\n`,
    );
  } catch (error) {
    if (error instanceof RepositoryExistsError) {
      throw new ServiceError('conflict', `repository ${input.account}/${input.name} already exists`);
    }
    throw error;
  }
  return registry.find(account, input.name, { fresh: true })!;
}

/** Finds a repository or raises not_found. */
export function requireRepository(registry: RepositoryRegistry, account: string, name: string): GitRepository {
  const problem = nameProblem('account name', account) ?? nameProblem('repository name', name);
  if (problem) throw new ServiceError('invalid_argument', problem);
  const repository = registry.find(account, name);
  if (!repository) throw unknownRepository(account, name);
  return repository;
}

/** The answer for a repository that does not exist, by the names as the request spelled them. */
export function unknownRepository(account: string, name: string): ServiceError {
  return new ServiceError('not_found', `repository ${account}/${name} does not exist`);
}
