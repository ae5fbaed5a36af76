/**
 * `cfghub revert ACCOUNT/NAME COMMIT` and `cfghub restore ACCOUNT/NAME POINT`:
 * each makes one new commit, through the same commit path as a push, safe while a server uses the
 * same folder. Prints `{"commit": …, "outcome": "applied"|"unchanged"}`; a conflict is exit 1.
 * With `--dry-run`, what it would do instead, context by context, as `cfghub push --dry-run` prints
 * it (`--json`: the dry run's answer); one that would be refused prints the reason and exits 1.
 */
import type { Command } from 'commander';
import { administrationOf, printJson, withTarget } from '../remote/adminTarget.js';
import { readPasswordLines } from './groupCommands.js';
import { printDryRun, withDryRunOptions } from './pushCommands.js';

/** What the commits made from the command line record as their `Application-Name`. */
const APPLICATION = 'cfghub-cli';

export function addRollbackCommands(program: Command): void {
  const add = (name: 'revert' | 'restore', description: string, argument: string) =>
    withTarget(
      withDryRunOptions(
        program
          .command(name)
          .description(description)
          .argument('<account/name>')
          .argument(argument)
          .option('--comment <text>', 'the change comment of the new commit'),
        name,
      ),
    ).action(async (fullName: string, target: string, options) => {
      const admin = administrationOf(fullName, options);
      let password: string | undefined;
      if (options.securityGroup !== undefined) {
        // Changing secured keys and files needs the group's key, as a push does.
        await admin.repositoryRecord(fullName); // an unknown repository is told before a password is asked for
        [password] = await readPasswordLines(1, [`the password of security group ${options.securityGroup}`]);
      }
      const rollback = {
        comment: options.comment,
        applicationName: APPLICATION,
        securityGroup: options.securityGroup,
        password,
      };
      if (options.dryRun) {
        const preview = name === 'revert' ? admin.previewRevert.bind(admin) : admin.previewRestore.bind(admin);
        return printDryRun(({ contexts }) => preview(fullName, target, rollback, contexts), options, name);
      }
      printJson(await admin[name](fullName, target, rollback));
    });

  add('revert', 'make a new commit that undoes one commit', '<commit>');
  add(
    'restore',
    'make a new commit whose keys and files equal those of a tag, commit or date',
    '<tag-or-commit>',
  ).option(
    '--security-group <group>',
    "a group whose secured keys and files the restore may change; reads the group's password from standard input",
  );
}
