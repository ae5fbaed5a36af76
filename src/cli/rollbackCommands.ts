/**
 * `cfghub revert ACCOUNT/NAME COMMIT` and `cfghub restore ACCOUNT/NAME POINT` (issue 6, item 4):
 * each makes one new commit, through the same commit path as a push, safe while a server uses the
 * same folder. Prints `{"commit": …, "outcome": "applied"|"unchanged"}`; a conflict is exit 1.
 */
import type { Command } from 'commander';
import { parseFullName } from '../service/repositories.js';
import { administrationFor, withTarget } from './adminTarget.js';

/** What the commits made from the command line record as their `Application-Name`. */
const APPLICATION = 'cfghub-cli';

export function addRollbackCommands(program: Command): void {
  const add = (name: 'revert' | 'restore', description: string, argument: string) =>
    withTarget(
      program
        .command(name)
        .description(description)
        .argument('<account/name>')
        .argument(argument)
        .option('--comment <text>', 'the change comment of the new commit'),
    ).action(async (fullName: string, target: string, options) => {
      parseFullName(fullName);
      const result = await administrationFor(options)[name](fullName, target, { comment: options.comment, applicationName: APPLICATION });
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    });

  add('revert', 'make a new commit that undoes one commit', '<commit>');
  add('restore', 'make a new commit whose keys and files equal those of a tag, commit or date', '<tag-or-commit>');
}
