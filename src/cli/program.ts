/**
 * The `cfghub` command. Exit status 0 on success, 2 on a usage error or an
 * invalid argument value, 1 on any other error; errors are one line on stderr.
 *
 * Each command's module is loaded only when that command runs: a run of `cfghub tag list` does
 * not load the server, nor `cfghub --version` anything but this file (every test spawns the
 * command, and loading the whole program cost most of a short command's time). Help and an
 * unknown command load them all, in the order the help lists them.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { searchedFolder } from './reposFolder.js';
import { FolderError } from '../disk/errors.js';
import { ErrorCode } from '../domain/errors.js';

/** The version of package.json, for `cfghub --version` (dist/cli/ and src/cli/ are both two levels down). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

type AddCommands = (program: Command) => void;

/** Every top-level command by name, with the module that adds it (a module may add several), in help order. */
export const COMMAND_MODULES: readonly {
  readonly names: readonly string[];
  readonly load: () => Promise<AddCommands>;
}[] = [
  { names: ['serve', 'promote'], load: async () => (await import('./commands/serveCommands.js')).addServeCommands },
  { names: ['repo'], load: async () => (await import('./commands/repoCommands.js')).addRepoCommands },
  { names: ['token'], load: async () => (await import('./commands/tokenCommands.js')).addTokenCommands },
  {
    names: ['admin-token'],
    load: async () => (await import('./commands/adminTokenCommands.js')).addAdminTokenCommands,
  },
  { names: ['tag'], load: async () => (await import('./commands/tagCommands.js')).addTagCommands },
  { names: ['change'], load: async () => (await import('./commands/changeCommands.js')).addChangeCommands },
  { names: ['schemas'], load: async () => (await import('./commands/schemaCommands.js')).addSchemaCommands },
  { names: ['push'], load: async () => (await import('./commands/pushCommands.js')).addPushCommands },
  {
    names: ['revert', 'restore'],
    load: async () => (await import('./commands/rollbackCommands.js')).addRollbackCommands,
  },
  { names: ['group'], load: async () => (await import('./commands/groupCommands.js')).addGroupCommands },
  { names: ['pull'], load: async () => (await import('./commands/pullCommands.js')).addPullCommand },
  { names: ['get', 'set', 'unset'], load: async () => (await import('./commands/keyCommands.js')).addKeyCommands },
  {
    names: ['history', 'diff'],
    load: async () => (await import('./commands/historyCommands.js')).addHistoryCommands,
  },
  {
    names: ['rules', 'context-group'],
    load: async () => (await import('./commands/accessCommands.js')).addAccessCommands,
  },
  { names: ['ha'], load: async () => (await import('./commands/haCommands.js')).addHaCommands },
  { names: ['clients'], load: async () => (await import('./commands/readerCommands.js')).addReaderCommands },
  { names: ['webhook'], load: async () => (await import('./commands/webhookCommands.js')).addWebhookCommands },
];

/**
 * The modules a command line needs: the one adding its command; none for the version alone (it
 * is printed before any command is looked at); all of them for help, no command or an unknown one.
 */
function modulesFor(argv: readonly string[] | undefined): typeof COMMAND_MODULES {
  const first = argv?.[0];
  if (first === '-V' || first === '--version') return [];
  const named = COMMAND_MODULES.filter(({ names }) => first !== undefined && names.includes(first));
  return named.length ? named : COMMAND_MODULES;
}

/** The program with the commands `argv` needs; without `argv`, every command. */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('cfghub')
    .description('A configuration service where every repository is a bare git repository')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError(false)
    .exitOverride();
  const adders = await Promise.all(modulesFor(argv).map(({ load }) => load()));
  for (const add of adders) add(program);

  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    command.exitOverride().configureOutput({
      writeErr: (text) => process.stderr.write(text.startsWith('error') ? `cfghub: ${text}` : text),
    });
  }
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await (await buildProgram(argv)).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof ServiceError) {
      // What was not found was looked for in a folder that depends on the options and the current folder: name it.
      const folder = searchedFolder();
      const where =
        error.code === ErrorCode.NotFound && /^repository \S+ does not exist$/.test(error.message) && folder
          ? ` in the repositories folder ${folder}`
          : '';
      process.stderr.write(`cfghub: ${error.message}${where}\n`);
      return error.code === ErrorCode.InvalidArgument ? 2 : 1;
    }
    if (error instanceof FolderError) {
      process.stderr.write(`cfghub: ${error.message}\n`); // the user's own folder: named whole
      return 1;
    }
    process.stderr.write(`cfghub: ${withoutPaths((error as Error)?.message ?? String(error))}\n`);
    return 1;
  }
}
