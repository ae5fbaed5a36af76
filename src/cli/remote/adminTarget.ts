/**
 * Where an administrative command works: on a repositories folder (`--repos`, else
 * CFGHUB_REPOS, else ./repos), or on a remote server through its admin API (`--server URL`, else
 * CFGHUB_SERVER, with the admin token in CFGHUB_ADMIN_TOKEN). A flag wins over the environment:
 * `--repos` given works on that folder even when CFGHUB_SERVER is set.
 */
import { Option, type Command } from 'commander';
import { LocalAdministration, type Administration } from '../../service/admin/administration.js';
import { ServiceError } from '../../service/errors.js';
import { parseFullName } from '../../service/admin/repositories.js';
import { TokenService } from '../../service/admin/tokens.js';
import { RepositoryRegistry } from '../../disk/registry.js';
import { TokenStore } from '../../disk/records/tokenStore.js';
import { remoteAdministration } from './adminClient.js';
import { notAFolder, reposDir, reposPath } from '../reposFolder.js';

export { reposDir };

export const reposOption = () => new Option('--repos <dir>', 'repositories folder (else CFGHUB_REPOS, else ./repos)');

export const serverOption = () =>
  new Option(
    '--server <url>',
    'administer a remote cfghub through its admin API (else CFGHUB_SERVER); the admin token comes from CFGHUB_ADMIN_TOKEN',
  );

/** Adds `--repos` and `--server` to an administrative command. */
export function withTarget(command: Command): Command {
  return command.addOption(reposOption()).addOption(serverOption());
}

/** The Administration the options name; `create`: the folder may be missing (repo create makes it), not a file. */
export type Where = { repos?: string; server?: string };

export function administrationFor(options: Where, create = false): Administration {
  if (options.repos !== undefined && options.server !== undefined) {
    throw new ServiceError('invalid_argument', 'give --repos or --server, not both');
  }
  const server = options.server ?? (options.repos === undefined ? process.env.CFGHUB_SERVER || undefined : undefined);
  if (server !== undefined) return remoteAdministration(server, process.env.CFGHUB_ADMIN_TOKEN);
  const root = create ? reposPath(options.repos) : reposDir(options.repos);
  const refusal = notAFolder(root, options.repos);
  if (refusal) throw refusal;
  return new LocalAdministration(new RepositoryRegistry(root), new TokenService(new TokenStore(root)));
}

/** The Administration the options name, for a repository name checked first: a malformed name is told before any other work. */
export function administrationOf(fullName: string, options: Where): Administration {
  parseFullName(fullName);
  return administrationFor(options);
}

/** A command's answer on stdout: JSON, indented. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
