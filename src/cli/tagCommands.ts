/**
 * `cfghub tag create|list|delete` (issue 3, item 6), in the style of the other commands: JSON on
 * stdout, one-line errors, exit 0 / 2 (usage, invalid argument) / 1 (anything else).
 */
import type { Command, Option } from 'commander';
import { ServiceError } from '../service/errors.js';
import { parseFullName, requireRepository } from '../service/repositories.js';
import { createTag, deleteTag, listTags, tagNameProblem } from '../service/tags.js';
import { RepositoryRegistry } from '../store/registry.js';

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Adds the `tag` commands to the program. `reposOption` makes the shared `--repos` option and
 * `reposDir` resolves it (else CFGHUB_REPOS, else ./repos), as for the other commands.
 */
export function addTagCommands(program: Command, reposOption: () => Option, reposDir: (option: string | undefined) => string): void {
  /** The named repository; with a tag name, that is checked first, so a bad one is exit 2 whatever the repository. */
  const repository = (fullName: string, repos: string | undefined, tagName?: string) => {
    const { account, name } = parseFullName(fullName);
    const problem = tagName === undefined ? undefined : tagNameProblem(tagName);
    if (problem) throw new ServiceError('invalid_argument', problem);
    return requireRepository(new RepositoryRegistry(reposDir(repos)), account, name);
  };

  const tag = program.command('tag').description('annotated git tags of a repository');
  tag
    .command('create')
    .description("tag the repository's current head; prints the tag as JSON")
    .argument('<account/name>')
    .argument('<tag>')
    .option('--comment <text>', "the tag's message")
    .addOption(reposOption())
    .action(async (fullName: string, name: string, options) => {
      printJson(await createTag(repository(fullName, options.repos, name), name, options.comment ?? ''));
    });
  tag
    .command('list')
    .description('the tags, sorted by name, as JSON')
    .argument('<account/name>')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      printJson(await listTags(repository(fullName, options.repos)));
    });
  tag
    .command('delete')
    .description('delete a tag')
    .argument('<account/name>')
    .argument('<tag>')
    .addOption(reposOption())
    .action(async (fullName: string, name: string, options) => {
      const target = repository(fullName, options.repos, name);
      const deleted = await deleteTag(target, name);
      process.stderr.write(`cfghub: tag ${deleted} of ${target.fullName} deleted\n`);
    });
}
