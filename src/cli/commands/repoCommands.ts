/** `cfghub repo create|settings|delete|list`, on a repositories folder or, with --server, on a remote server. */
import type { Command } from 'commander';
import { ServiceError } from '../../service/errors.js';
import { parseFullName } from '../../service/admin/repositories.js';
import type { SettingsChange } from '../../service/admin/repositorySettings.js';
import { unreadableLines } from '../unreadable.js';
import { administrationFor, printJson, withTarget } from '../remote/adminTarget.js';

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

export function addRepoCommands(program: Command): void {
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
    .option('--no-require-approvals', 'no context needs approvals')
    .option(
      '--alias <name>',
      "another name of the repository, read as the Spring application: letters and digits joined by single '-' or '_', unique on the server",
    )
    .option('--no-alias', 'remove the alias');
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
    if (options.alias === false) change.alias = null;
    else if (typeof options.alias === 'string') change.alias = options.alias;
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
}
