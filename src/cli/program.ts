/**
 * The `cfghub` command (contract section 3). Exit status 0 on success, 2 on a usage error or an
 * invalid argument value, 1 on any other error; errors are one line on stderr.
 */
import { Command, CommanderError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { parseIsoInstant } from '../domain/dates.js';
import { withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { listRepositories } from '../service/listing.js';
import { unreadableLines } from './unreadable.js';
import { createRepository, parseFullName, requireRepository } from '../service/repositories.js';
import { TokenService } from '../service/tokens.js';
import { FolderError } from '../store/folders.js';
import { DEFAULT_LOOSE_OBJECT_LIMIT } from '../store/looseObjects.js';
import { RepositoryRegistry } from '../store/registry.js';
import { TokenStore } from '../store/tokenStore.js';
import { notAFolder, reposDir, reposPath, searchedFolder } from './reposFolder.js';
import { serve } from './serve.js';
import { createReplicationToken, replicaOfOption, revokeReplicationToken } from './replica.js';
import { addTagCommands } from './tagCommands.js';
import { addRollbackCommands } from './rollbackCommands.js';
import { addGroupCommands, readPasswordLines } from './groupCommands.js';
import { groupKeyWithPassword } from '../service/securityGroups.js';
import { addClientCommands } from './clientCommands.js';
import { addAccessCommands, requireRuleSetName } from './accessCommands.js';

/** `create`: the folder may be missing (repo create makes it), not a file. */
function stores(repos: string | undefined, create = false) {
  const root = create ? reposPath(repos) : reposDir(repos);
  const refusal = notAFolder(root, repos);
  if (refusal) throw refusal;
  return { root, registry: new RepositoryRegistry(root), tokens: new TokenService(new TokenStore(root)) };
}

/** The version of package.json, for `cfghub --version` (dist/cli/ and src/cli/ are both two levels down). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** A whole number within bounds from an option, else its variable, else a default; the message names whichever was used. */
function numberSetting(option: string | undefined, variable: string, fallback: number, min: number, max: number, what: string): number {
  const [name, text] = option !== undefined ? [`--${what}`, option] : process.env[variable] ? [variable, process.env[variable]!] : [undefined, undefined];
  if (name === undefined) return fallback;
  const value = Number(text);
  if (!/^\d{1,15}$/.test(text!.trim()) || !Number.isInteger(value) || value < min || value > max) {
    throw new ServiceError('invalid_argument', `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return value;
}

const reposOption = () => new Option('--repos <dir>', 'repositories folder (else CFGHUB_REPOS, else ./repos)');

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `YYYY-MM-DDTHH:MM:SSZ`, or the same with a `+hh:mm` offset; a day that does not exist is refused. */
function parseDate(text: string): Date {
  const date = parseIsoInstant(text);
  if (!date) throw new ServiceError('invalid_argument', `--expires must be an ISO 8601 date like 2030-01-31T00:00:00Z or 2030-01-31, got ${JSON.stringify(text)}`);
  return date;
}

function positiveCount(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ServiceError('invalid_argument', `${name} must be a whole number above 0`);
  return n;
}

function parseLevels(text: string): string[] {
  return text.split(',').map((level) => level.trim());
}

export function buildProgram(): Command {
  const program = new Command('cfghub')
    .description('A configuration service where every repository is a bare git repository')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError(false)
    .exitOverride();

  program
    .command('serve')
    .description('serve the HTTP API')
    .option('--port <n>', 'port (else PORT, else 8080)')
    .option('--host <h>', 'address to listen on (else HOST, else 127.0.0.1)')
    .option('--demo', 'create the demo repository demo/HowItWorks if it does not exist')
    .option('--body-limit <bytes>', 'largest request body (else CFGHUB_BODY_LIMIT, else 16 MiB)')
    .option('--replica-of <url>', 'serve as a read replica of the primary at this URL (token in CFGHUB_REPLICATION_TOKEN)')
    .option('--loose-objects <n>', 'repack a repository when plain git left more loose objects than this; 0: never (else CFGHUB_LOOSE_OBJECTS, else 6700)')
    .option('--max-watchers <n>', 'watches (Wait) held at once; more get 503 (else CFGHUB_MAX_WATCHERS, else 20000)')
    .option('--hide-private', 'list and serve a private repository only to callers holding a token of it; to others it answers as an unknown one')
    .addOption(reposOption())
    .action(async (options) => {
      const port = numberSetting(options.port, 'PORT', 8080, 0, 65535, 'port');
      const bodyLimit = numberSetting(options.bodyLimit, 'CFGHUB_BODY_LIMIT', 16 * 1024 * 1024, 1, Number.MAX_SAFE_INTEGER, 'body-limit');
      const looseObjects = numberSetting(options.looseObjects, 'CFGHUB_LOOSE_OBJECTS', DEFAULT_LOOSE_OBJECT_LIMIT, 0, Number.MAX_SAFE_INTEGER, 'loose-objects');
      await serve({
        reposDir: reposPath(options.repos),
        port,
        host: options.host ?? process.env.HOST ?? '127.0.0.1',
        demo: Boolean(options.demo),
        bodyLimit,
        looseObjectLimit: looseObjects === 0 ? undefined : looseObjects,
        maxWatchers: positiveCount(options.maxWatchers ?? process.env.CFGHUB_MAX_WATCHERS, '--max-watchers'),
        hidePrivate: Boolean(options.hidePrivate),
        replicaOf: options.replicaOf === undefined ? undefined : replicaOfOption(options.replicaOf, process.env.CFGHUB_REPLICATION_TOKEN),
      });
    });

  const repo = program.command('repo').description('create, list, change and delete repositories');
  repo
    .command('create')
    .description('create a repository with a first commit holding its settings')
    .argument('<account/name>')
    .requiredOption('--context <levels>', 'context level names, widest first, separated by commas')
    .option('--description <text>')
    .option('--private')
    .option('--personal')
    .option('--access-controls')
    .option('--no-vdt', 'turn value data types off')
    .option('--no-security', 'turn security groups off')
    .option('--context-groups')
    .option('--token-free-push', 'allow push without a token')
    .option('--token-free-pull', 'allow pull without a token')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      const { account, name } = parseFullName(fullName);
      const { registry, tokens } = stores(options.repos, true);
      const repository = await createRepository(registry, {
        account,
        name,
        levels: parseLevels(options.context),
        description: options.description,
        isPrivate: Boolean(options.private),
        isPersonal: Boolean(options.personal),
        accessControlsEnabled: Boolean(options.accessControls),
        vdtEnabled: options.vdt,
        securityEnabled: options.security,
        contextGroupsEnabled: Boolean(options.contextGroups),
        tokenFreePush: Boolean(options.tokenFreePush),
        tokenFreePull: Boolean(options.tokenFreePull),
      });
      const { records } = await listRepositories(registry, tokens, () => undefined);
      printJson(records.find((r) => r.account === repository.account && r.name === repository.name));
    });
  repo
    .command('list')
    .description('the records of every repository, as JSON')
    .addOption(reposOption())
    .action(async (options) => {
      const { registry, tokens } = stores(options.repos);
      const listing = await listRepositories(registry, tokens, () => undefined);
      printJson(listing.records);
      // Left out of the records, as from the HTTP listing; named here, where an operator looks.
      for (const line of unreadableLines(listing.unreadable)) process.stderr.write(`${line}\n`);
    });

  const token = program.command('token').description('client tokens of a repository');
  token
    .command('create')
    .description('print a new client token on stdout, once')
    .argument('[account/name]', 'the repository (left out with --replication)')
    .option('--replication', "a replica's token: clones every repository, reads the replication endpoints")
    .option('--name <label>', 'label of the token (else token-N)')
    .option('--expires <iso-8601>', 'when the token stops working')
    .option('--force-key-push', 'the token may write keys whose push flag is false')
    .option('--security-group <group>', "the token reads and writes this group on its own; reads the group's password from standard input")
    .option('--read-only', 'the token may read but never push, revert or restore')
    .option('--rules <set>', 'the access rule set the token is assigned to (applies with access controls on)')
    .addOption(reposOption())
    .action(async (fullName: string | undefined, options) => {
      if (options.replication) return createReplicationToken(stores(options.repos).tokens, fullName, options);
      if (fullName === undefined) throw new ServiceError('invalid_argument', 'name the repository (account/name), or give --replication');
      const { account, name } = parseFullName(fullName);
      const { registry, tokens } = stores(options.repos);
      const expires = options.expires === undefined ? undefined : parseDate(options.expires);
      const repository = requireRepository(registry, account, name);
      const groupKeys = [];
      if (options.securityGroup !== undefined) {
        const [password] = await readPasswordLines(1, [`the password of security group ${options.securityGroup}`]);
        groupKeys.push(await groupKeyWithPassword(repository, options.securityGroup, password));
      }
      const ruleSet = options.rules === undefined ? undefined : await requireRuleSetName(repository, options.rules);
      const created = await tokens.create(repository, { label: options.name, expires, forceKeyPush: Boolean(options.forceKeyPush), groupKeys, readOnly: Boolean(options.readOnly), ruleSet });
      process.stdout.write(`${created.token}\n`);
      process.stderr.write(`cfghub: token ${created.label} for ${repository.fullName}; it is shown only this once\n`);
    });
  token
    .command('list')
    .description('label, created, expires and flags of each token; never the token')
    .argument('<account/name>')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      const { account, name } = parseFullName(fullName);
      const { registry, tokens } = stores(options.repos);
      printJson(tokens.list(requireRepository(registry, account, name)));
    });
  token
    .command('revoke')
    .description('the token stops working at once')
    .argument('<account/name>', 'the repository (with --replication: the label)')
    .argument('[label]')
    .option('--replication', 'revoke the replication token of this label')
    .addOption(reposOption())
    .action(async (fullName: string, label: string | undefined, options) => {
      if (options.replication) return revokeReplicationToken(stores(options.repos).tokens, fullName, label);
      if (label === undefined) throw new ServiceError('invalid_argument', 'name the label of the token to revoke');
      const { account, name } = parseFullName(fullName);
      const { registry, tokens } = stores(options.repos);
      await tokens.revoke(requireRepository(registry, account, name), label);
      process.stderr.write(`cfghub: token ${label} of ${account}/${name} revoked\n`);
    });
  addTagCommands(program, reposOption, reposDir);
  addRollbackCommands(program, reposOption, reposDir);
  addGroupCommands(program, reposOption, reposDir);
  addClientCommands(program);
  addAccessCommands(program, repo, reposOption, reposDir);

  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    command.exitOverride().configureOutput({ writeErr: (text) => process.stderr.write(text.startsWith('error') ? `cfghub: ${text}` : text) });
  }
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return error.exitCode === 0 ? 0 : 2;
    }
    if (error instanceof ServiceError) {
      // What was not found was looked for in a folder that depends on the options and the current folder: name it.
      const folder = searchedFolder();
      const where = error.code === 'not_found' && /^repository \S+ does not exist$/.test(error.message) && folder ? ` in the repositories folder ${folder}` : '';
      process.stderr.write(`cfghub: ${error.message}${where}\n`);
      return error.code === 'invalid_argument' ? 2 : 1;
    }
    if (error instanceof FolderError) {
      process.stderr.write(`cfghub: ${error.message}\n`); // the user's own folder: named whole
      return 1;
    }
    process.stderr.write(`cfghub: ${withoutPaths((error as Error)?.message ?? String(error))}\n`);
    return 1;
  }
}
