/**
 * `cfghub group create|list|passwd|delete` (issue 7). Passwords are read from standard input, one
 * per line, never from the command line, where other users of the machine could see them.
 */
import type { Command, Option } from 'commander';
import { createInterface } from 'node:readline';
import { ServiceError } from '../service/errors.js';
import { parseFullName, requireRepository } from '../service/repositories.js';
import { changePassword, createGroup, deleteGroup, listGroups } from '../service/securityGroups.js';
import { RepositoryRegistry } from '../store/registry.js';

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** The first `count` lines of standard input (without their line ends); a missing line is a usage error. */
export async function readPasswordLines(count: number, what: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  const input = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const line of input) {
    lines.push(line);
    if (lines.length === count) break;
  }
  input.close();
  for (let i = 0; i < count; i++) {
    if (lines[i] === undefined || lines[i] === '') {
      throw new ServiceError('invalid_argument', `expected ${what.join(', then ')} on standard input, one per line; line ${i + 1} is missing`);
    }
  }
  return lines.slice(0, count);
}

export function addGroupCommands(program: Command, reposOption: () => Option, reposDir: (option: string | undefined) => string): void {
  const repository = (fullName: string, repos: string | undefined) => {
    const { account, name } = parseFullName(fullName);
    return requireRepository(new RepositoryRegistry(reposDir(repos)), account, name);
  };

  const group = program.command('group').description('security groups of a repository (passwords on standard input)');
  group
    .command('create')
    .description("create a security group; reads its password (8-64 characters) as one line from standard input")
    .argument('<account/name>')
    .argument('<group>')
    .addOption(reposOption())
    .action(async (fullName: string, name: string, options) => {
      const target = repository(fullName, options.repos);
      const [password] = await readPasswordLines(1, ['the password']);
      printJson(await createGroup(target, name, password));
    });
  group
    .command('list')
    .description('the security groups, with how many keys and files each holds, as JSON')
    .argument('<account/name>')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      printJson(await listGroups(repository(fullName, options.repos)));
    });
  group
    .command('passwd')
    .description('change the password (reads the current one, then the new one, from standard input) and re-encrypt everything of the group in one commit')
    .argument('<account/name>')
    .argument('<group>')
    .addOption(reposOption())
    .action(async (fullName: string, name: string, options) => {
      const target = repository(fullName, options.repos);
      const [current, next] = await readPasswordLines(2, ['the current password', 'the new password']);
      printJson(await changePassword(target, name, current, next));
    });
  group
    .command('delete')
    .description('delete a security group that no key or file uses')
    .argument('<account/name>')
    .argument('<group>')
    .addOption(reposOption())
    .action(async (fullName: string, name: string, options) => {
      const target = repository(fullName, options.repos);
      const deleted = await deleteGroup(target, name);
      process.stderr.write(`cfghub: security group ${deleted.name} of ${target.fullName} deleted\n`);
    });
}
