/**
 * The `cfghub` command. Exit status 0 on success, 2 on a usage error or an
 * invalid argument value, 1 on any other error; errors are one line on stderr.
 */
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { parseIsoInstant } from '../lib/dates.js';
import { withoutPaths } from '../domain/reasons.js';
import { ServiceError } from '../service/errors.js';
import { parseFullName } from '../service/admin/repositories.js';
import type { SettingsChange } from '../service/admin/repositorySettings.js';
import { unreadableLines } from './unreadable.js';
import { searchedFolder } from './reposFolder.js';
import { resolveServeOptions } from '../server/serveConfig.js';
import { administrationFor, reposOption, withTarget } from './remote/adminTarget.js';
import { addAdminTokenCommands } from './commands/adminTokenCommands.js';
import { serve } from '../server/serve.js';
import { createReplicationToken, promoteFolder, replicaOfOption, revokeReplicationToken } from '../server/replica.js';
import { reposDir } from './remote/adminTarget.js';
import { addTagCommands } from './commands/tagCommands.js';
import { addChangeCommands } from './commands/changeCommands.js';
import { addRollbackCommands } from './commands/rollbackCommands.js';
import { addGroupCommands, readPasswordLines } from './commands/groupCommands.js';
import { addClientCommands } from './commands/clientCommands.js';
import { addAccessCommands } from './commands/accessCommands.js';
import { addReaderCommands } from './commands/readerCommands.js';
import { addWebhookCommands } from './commands/webhookCommands.js';
import { addHaCommands } from './commands/haCommands.js';
import { addSchemaCommands } from './commands/schemaCommands.js';
import { addPushCommands } from './commands/pushCommands.js';
import { FolderError } from '../disk/errors.js';
import { ErrorCode } from '../domain/errors.js';

/** The version of package.json, for `cfghub --version` (dist/cli/ and src/cli/ are both two levels down). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `YYYY-MM-DDTHH:MM:SSZ`, or the same with a `+hh:mm` offset; a day that does not exist is refused. */
function parseDate(text: string): Date {
  const date = parseIsoInstant(text);
  if (!date)
    throw new ServiceError(
      'invalid_argument',
      `--expires must be an ISO 8601 date like 2030-01-31T00:00:00Z or 2030-01-31, got ${JSON.stringify(text)}`,
    );
  return date;
}

function positiveCount(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new ServiceError('invalid_argument', `${name} must be a whole number above 0`);
  return n;
}

/** A settings switch: bare (true), `--no-…` (false) or with the value true or false. */
function switchValue(value: unknown, flag: string): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value as boolean | undefined;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ServiceError('invalid_argument', `${flag} is true or false, got ${JSON.stringify(value)}`);
}

/** `--require-approvals 'Production;*;*=2'`, repeatable: a context pattern and the approvals it needs. */
function approvalRule(text: string, rules: { context: string; approvals: number }[] = []) {
  const match = /^(.+)=(\d{1,3})$/.exec(text);
  if (!match)
    throw new ServiceError(
      'invalid_argument',
      `--require-approvals is CONTEXT=N, like 'Production;*;*=2', got ${text}`,
    );
  return [...rules, { context: match[1], approvals: Number(match[2]) }];
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
    .option(
      '--replica-of <url>',
      'serve as a read replica of the primary at this URL (token in CFGHUB_REPLICATION_TOKEN)',
    )
    .option(
      '--accept-new-primary',
      "with --replica-of: apply the primary's next state even from another folder, a lower generation, with many removals or branches moved backwards (kept under refs/cfghub/rewound/)",
    )
    .option(
      '--loose-objects <n>',
      'repack a repository when plain git left more loose objects than this; 0: never (else CFGHUB_LOOSE_OBJECTS, else 6700)',
    )
    .option('--max-watchers <n>', 'watches (Wait) held at once; more get 503 (else CFGHUB_MAX_WATCHERS, else 20000)')
    .option(
      '--hide-private',
      'list and serve a private repository only to callers holding a token of it; to others it answers as an unknown one',
    )
    .option(
      '--metrics-token <token>',
      'GET /metrics answers only with Authorization: Bearer <token> (else CFGHUB_METRICS_TOKEN; unset: open)',
    )
    .option(
      '--log-format <format>',
      'json (one object per line, the default) or pretty (for a terminal) (else CFGHUB_LOG_FORMAT)',
    )
    .option(
      '--workers <n>',
      'processes serving requests: 1 (the default) is a single process, auto one per core (else CFGHUB_WORKERS)',
    )
    .option(
      '--cluster <name>',
      'run as a node of this HA cluster (with --etcd and --advertise; token in CFGHUB_REPLICATION_TOKEN)',
    )
    .option('--etcd <urls>', "the HA cluster's etcd members, comma-separated client URLs")
    .option('--advertise <url>', "this node's URL as the cluster's other nodes reach it")
    .option('--ha-strict', 'refuse writes (503) rather than acknowledge a push that lives on one node only')
    .option('--lease-seconds <n>', "the leader's lease: a lost leader is replaced within about this long (default 5)")
    .option(
      '--config <file>',
      'a YAML file with any of the settings above as fields; flags and environment win over it',
    )
    .addOption(reposOption())
    .action(async (options) => {
      if (options.acceptNewPrimary && options.replicaOf === undefined)
        throw new ServiceError('invalid_argument', '--accept-new-primary goes with --replica-of');
      await serve({
        ...resolveServeOptions(options),
        maxWatchers: positiveCount(options.maxWatchers ?? process.env.CFGHUB_MAX_WATCHERS, '--max-watchers'),
        hidePrivate: Boolean(options.hidePrivate),
        replicaOf:
          options.replicaOf === undefined
            ? undefined
            : replicaOfOption(
                options.replicaOf,
                process.env.CFGHUB_REPLICATION_TOKEN,
                Boolean(options.acceptNewPrimary),
              ),
      });
    });

  program
    .command('promote')
    .description(
      "make a stopped read replica's folder a primary's: its generation one above every one it has seen (then: cfghub serve without --replica-of)",
    )
    .addOption(reposOption())
    .action(async (options: { repos?: string }) => promoteFolder(reposDir(options.repos)));

  const repo = program.command('repo').description('create, list, change and delete repositories');
  withTarget(
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
      .option('--token-free-pull', 'allow pull without a token'),
  ).action(async (fullName: string, options) => {
    const { account, name } = parseFullName(fullName);
    printJson(
      await administrationFor(options, true).createRepository({
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
      }),
    );
  });
  // `repo settings` and its alias `repo set`: one command, one service
  // function. A switch is given bare (`--private`), negated (`--no-private`) or with a value
  // (`--private true|false`), so both issues' spellings work.
  const settingSwitches: readonly (readonly [string, string, keyof SettingsChange, string?])[] = [
    ['private', '--private', 'isPrivate'],
    ['personal', '--personal', 'isPersonal'],
    ['accessControls', '--access-controls', 'accessControlsEnabled'],
    ['vdt', '--vdt', 'vdtEnabled', 'value data types (off is refused while a key has a type other than Text)'],
    ['security', '--security', 'securityEnabled', 'security groups (off is refused while a group exists)'],
    ['contextGroups', '--context-groups', 'contextGroupsEnabled'],
    ['tokenFreePush', '--token-free-push', 'tokenFreePush'],
    ['tokenFreePull', '--token-free-pull', 'tokenFreePull'],
  ];
  const settings = repo
    .command('settings')
    .alias('set')
    .description("change a repository's settings in one commit (the context levels never change); prints its record")
    .argument('<account/name>')
    .option('--description <text>')
    .option(
      '--require-approvals <context=n>',
      'changes to contexts matching the pattern need a change request with n approvals by others than its author (repeat for more; replaces the list; docs/changes.md)',
      approvalRule,
    )
    .option('--no-require-approvals', 'no context needs approvals');
  for (const [, flag, , help] of settingSwitches) {
    settings
      .option(`${flag} [bool]`, `turn on (or give true|false)${help ? `: ${help}` : ''}`)
      .option(`--no-${flag.slice(2)}`, 'turn off');
  }
  withTarget(settings).action(async (fullName: string, options) => {
    parseFullName(fullName);
    const change: Record<string, unknown> = { description: options.description };
    if (options.requireApprovals === false) change.requiredApprovals = [];
    else if (Array.isArray(options.requireApprovals)) change.requiredApprovals = options.requireApprovals;
    for (const [option, flag, field] of settingSwitches) change[field] = switchValue(options[option], flag);
    printJson(await administrationFor(options).changeSettings(fullName, change as SettingsChange));
  });
  withTarget(
    repo
      .command('delete')
      .description(
        'move a repository out of service to <repos>/.cfghub/deleted/ (from where it can be moved back) and revoke its tokens',
      )
      .argument('<account/name>')
      .option('--yes', 'yes, delete it'),
  ).action(async (fullName: string, options) => {
    parseFullName(fullName);
    if (!options.yes) throw new ServiceError('invalid_argument', `deleting repository ${fullName} needs --yes`);
    const deleted = await administrationFor(options).deleteRepository(fullName);
    process.stderr.write(
      `cfghub: repository ${deleted.repository} deleted (moved aside); ${deleted.revokedTokens} token(s) revoked\n`,
    );
  });
  withTarget(repo.command('list').description('the records of every repository, as JSON')).action(async (options) => {
    const listing = await administrationFor(options).listRepositories();
    printJson(listing.records);
    // Left out of the records, as from the HTTP listing; named here, where an operator looks.
    for (const line of unreadableLines(listing.unreadable)) process.stderr.write(`${line}\n`);
  });

  const token = program.command('token').description('client tokens of a repository');
  withTarget(
    token
      .command('create')
      .description('print a new client token on stdout, once')
      .argument('[account/name]', 'the repository (left out with --replication)')
      .option('--replication', "a replica's token: clones every repository, reads the replication endpoints")
      .option('--name <label>', 'label of the token (else token-N)')
      .option('--expires <iso-8601>', 'when the token stops working')
      .option('--force-key-push', 'the token may write keys whose push flag is false')
      .option(
        '--security-group <group>',
        "the token reads and writes this group on its own; reads the group's password from standard input",
      )
      .option('--read-only', 'the token may read but never push, revert or restore')
      .option('--rules <set>', 'the access rule set the token is assigned to (applies with access controls on)'),
  ).action(async (fullName: string | undefined, options) => {
    if (options.replication) return createReplicationToken(administrationFor(options), fullName, options);
    if (fullName === undefined)
      throw new ServiceError('invalid_argument', 'name the repository (account/name), or give --replication');
    parseFullName(fullName);
    if (options.expires !== undefined) parseDate(options.expires);
    const admin = administrationFor(options);
    let password: string | undefined;
    if (options.securityGroup !== undefined) {
      await admin.repositoryRecord(fullName); // an unknown repository is told before a password is asked for
      [password] = await readPasswordLines(1, [`the password of security group ${options.securityGroup}`]);
    }
    const created = await admin.createToken(fullName, {
      label: options.name,
      expires: options.expires,
      forceKeyPush: Boolean(options.forceKeyPush),
      securityGroup: options.securityGroup,
      password,
      readOnly: Boolean(options.readOnly),
      ruleSet: options.rules,
    });
    process.stdout.write(`${created.token}\n`);
    process.stderr.write(`cfghub: token ${created.label} for ${created.repository}; it is shown only this once\n`);
  });
  withTarget(
    token
      .command('list')
      .description('label, created, expires and flags of each token; never the token')
      .argument('<account/name>'),
  ).action(async (fullName: string, options) => {
    parseFullName(fullName);
    printJson(await administrationFor(options).listTokens(fullName));
  });
  withTarget(
    token
      .command('revoke')
      .description('the token stops working at once')
      .argument('<account/name>', 'the repository (with --replication: the label)')
      .argument('[label]')
      .option('--replication', 'revoke the replication token of this label'),
  ).action(async (fullName: string, label: string | undefined, options) => {
    if (options.replication) return revokeReplicationToken(administrationFor(options), fullName, label);
    if (label === undefined) throw new ServiceError('invalid_argument', 'name the label of the token to revoke');
    const { account, name } = parseFullName(fullName);
    await administrationFor(options).revokeToken(fullName, label);
    process.stderr.write(`cfghub: token ${label} of ${account}/${name} revoked\n`);
  });
  addAdminTokenCommands(program);
  addTagCommands(program);
  addChangeCommands(program);
  addSchemaCommands(program);
  addPushCommands(program);
  addRollbackCommands(program);
  addGroupCommands(program);
  addClientCommands(program);
  addAccessCommands(program);
  addHaCommands(program);
  addReaderCommands(program);
  addWebhookCommands(program);

  for (const command of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    command.exitOverride().configureOutput({
      writeErr: (text) => process.stderr.write(text.startsWith('error') ? `cfghub: ${text}` : text),
    });
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
