/**
 * `cfghub group create|list|passwd|delete`. Passwords are read from standard input, one
 * per line, never from the command line, where other users of the machine could see them.
 */
import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { ServiceError } from '../../service/errors.js';
import { administrationOf, printJson, withTarget, type Where } from '../remote/adminTarget.js';

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
      throw new ServiceError(
        'invalid_argument',
        `expected ${what.join(', then ')} on standard input, one per line; line ${i + 1} is missing`,
      );
    }
  }
  return lines.slice(0, count);
}

/** Adds the `group` commands; each works on a folder or, with --server, on a remote server. */
export function addGroupCommands(program: Command): void {
  /** The administration and the checked name; an unknown repository is told before a password is asked for. */
  const target = async (fullName: string, options: Where, askingPassword: boolean) => {
    const admin = administrationOf(fullName, options);
    if (askingPassword) await admin.repositoryRecord(fullName);
    return admin;
  };

  const group = program.command('group').description('security groups of a repository (passwords on standard input)');
  withTarget(
    group
      .command('create')
      .description('create a security group; reads its password (8-64 characters) as one line from standard input')
      .argument('<account/name>')
      .argument('<group>'),
  ).action(async (fullName: string, name: string, options) => {
    const admin = await target(fullName, options, true);
    const [password] = await readPasswordLines(1, ['the password']);
    printJson(await admin.createGroup(fullName, name, password));
  });
  withTarget(
    group
      .command('list')
      .description('the security groups, with how many keys and files each holds, as JSON')
      .argument('<account/name>'),
  ).action(async (fullName: string, options) => {
    printJson(await (await target(fullName, options, false)).listGroups(fullName));
  });
  withTarget(
    group
      .command('passwd')
      .description(
        'change the password (reads the current one, then the new one, from standard input) and re-encrypt everything of the group in one commit',
      )
      .argument('<account/name>')
      .argument('<group>'),
  ).action(async (fullName: string, name: string, options) => {
    const admin = await target(fullName, options, true);
    const [current, next] = await readPasswordLines(2, ['the current password', 'the new password']);
    printJson(await admin.changePassword(fullName, name, current, next));
  });
  withTarget(
    group
      .command('delete')
      .description('delete a security group that no key or file uses')
      .argument('<account/name>')
      .argument('<group>'),
  ).action(async (fullName: string, name: string, options) => {
    const deleted = await (await target(fullName, options, false)).deleteGroup(fullName, name);
    process.stderr.write(`cfghub: security group ${deleted.name} of ${deleted.repository} deleted\n`);
  });
}
