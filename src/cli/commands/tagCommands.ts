/**
 * `cfghub tag create|list|delete`, in the style of the other commands: JSON on
 * stdout, one-line errors, exit 0 / 2 (usage, invalid argument) / 1 (anything else).
 */
import type { Command } from 'commander';
import { administrationOf, printJson, withTarget } from '../remote/adminTarget.js';

/** Adds the `tag` commands to the program; each works on a folder or, with --server, on a remote server. */
export function addTagCommands(program: Command): void {
  const tag = program.command('tag').description('annotated git tags of a repository');
  withTarget(
    tag
      .command('create')
      .description("tag the repository's current head; prints the tag as JSON")
      .argument('<account/name>')
      .argument('<tag>')
      .option('--comment <text>', "the tag's message"),
  ).action(async (fullName: string, name: string, options) => {
    printJson(await administrationOf(fullName, options).createTag(fullName, name, options.comment ?? ''));
  });
  withTarget(tag.command('list').description('the tags, sorted by name, as JSON').argument('<account/name>')).action(
    async (fullName: string, options) => {
      printJson(await administrationOf(fullName, options).listTags(fullName));
    },
  );
  withTarget(tag.command('delete').description('delete a tag').argument('<account/name>').argument('<tag>')).action(
    async (fullName: string, name: string, options) => {
      const deleted = await administrationOf(fullName, options).deleteTag(fullName, name);
      process.stderr.write(`cfghub: tag ${deleted.tag} of ${deleted.repository} deleted\n`);
    },
  );
}
