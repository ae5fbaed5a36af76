/** `cfghub token create|list|revoke`: client tokens of a repository, and replicas' tokens. */
import type { Command } from 'commander';
import { parseIsoInstant } from '../../lib/dates.js';
import { ServiceError } from '../../service/errors.js';
import { parseFullName } from '../../service/admin/repositories.js';
import { createReplicationToken, revokeReplicationToken } from '../../server/replica.js';
import { administrationFor, printJson, withTarget } from '../remote/adminTarget.js';
import { readPasswordLines } from './groupCommands.js';

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

export function addTokenCommands(program: Command): void {
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
}
