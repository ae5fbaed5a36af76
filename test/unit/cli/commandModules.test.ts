/**
 * The `cfghub` command loads only the module of the command it runs, found by name in
 * COMMAND_MODULES: a command a module adds but the table does not name would be unknown when run.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram, COMMAND_MODULES } from '../../../src/cli/program.js';

describe('the table of command modules', () => {
  it('names exactly the top-level commands each module adds', async () => {
    for (const { names, load } of COMMAND_MODULES) {
      const program = new Command('cfghub');
      (await load())(program);
      expect(program.commands.map((command) => command.name())).toEqual(names);
    }
  });

  it('lists the commands in the order the whole program (and its help) has them', async () => {
    const program = await buildProgram();
    expect(program.commands.map((command) => command.name())).toEqual(COMMAND_MODULES.flatMap(({ names }) => names));
  });

  it('gives a command line the one module of its command, and every module to help or an unknown command', async () => {
    expect((await buildProgram(['tag', 'list', 'acme/app'])).commands.map((command) => command.name())).toEqual([
      'tag',
    ]);
    expect((await buildProgram(['get', 'acme/app', 'key'])).commands.map((command) => command.name())).toEqual([
      'get',
      'set',
      'unset',
    ]);
    expect((await buildProgram(['--version'])).commands).toEqual([]);
    const all = COMMAND_MODULES.flatMap(({ names }) => names).length;
    for (const argv of [[], ['--help'], ['help', 'tag'], ['tga']])
      expect((await buildProgram(argv)).commands).toHaveLength(all);
  });
});
