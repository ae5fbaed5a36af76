/**
 * `cfghub revert ACCOUNT/NAME COMMIT` and `cfghub restore ACCOUNT/NAME POINT` (issue 6, item 4):
 * each makes one new commit, through the same commit path as a push, safe while a server uses the
 * same folder. Prints `{"commit": …, "outcome": "applied"|"unchanged"}`; a conflict is exit 1.
 */
import type { Command, Option } from 'commander';
import { parseFullName, requireRepository } from '../service/repositories.js';
import { KeyRing } from '../service/keyRing.js';
import { restore } from '../service/restore.js';
import { groupKeyWithPassword } from '../service/securityGroups.js';
import { readPasswordLines } from './groupCommands.js';
import { revert, type RollbackCaller, type RollbackResult } from '../service/revert.js';
import { RepositoryRegistry } from '../store/registry.js';
import type { GitRepository } from '../store/repository.js';

/** What the commits made from the command line record as their `Application-Name`. */
const APPLICATION = 'cfghub-cli';

export function addRollbackCommands(program: Command, reposOption: () => Option, reposDir: (option: string | undefined) => string): void {
  const add = (
    name: string,
    description: string,
    argument: string,
    run: (repository: GitRepository, target: string, caller: RollbackCaller) => Promise<RollbackResult>,
  ) =>
    program
      .command(name)
      .description(description)
      .argument('<account/name>')
      .argument(argument)
      .option('--comment <text>', 'the change comment of the new commit')
      .addOption(reposOption())
      .action(async (fullName: string, target: string, options) => {
        const { account, name: repositoryName } = parseFullName(fullName);
        const repository = requireRepository(new RepositoryRegistry(reposDir(options.repos)), account, repositoryName);
        let ring = KeyRing.EMPTY;
        if (options.securityGroup !== undefined) {
          // Issue 14, item 6: changing secured keys and files needs the group's key, as a push does.
          const [password] = await readPasswordLines(1, [`the password of security group ${options.securityGroup}`]);
          const key = await groupKeyWithPassword(repository, options.securityGroup, password);
          ring = KeyRing.of((await repository.headSnapshot()).securityGroups, [key]);
        }
        const result = await run(repository, target, { comment: options.comment, applicationName: APPLICATION, ring });
        process.stdout.write(`${JSON.stringify({ commit: result.commitId, outcome: result.kind }, null, 2)}\n`);
      });

  add('revert', 'make a new commit that undoes one commit', '<commit>', revert);
  add('restore', 'make a new commit whose keys and files equal those of a tag, commit or date', '<tag-or-commit>', restore).option(
    '--security-group <group>',
    "a group whose secured keys and files the restore may change; reads the group's password from standard input",
  );
}
