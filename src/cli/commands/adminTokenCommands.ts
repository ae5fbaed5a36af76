/**
 * `cfghub admin-token create|list|revoke`: the tokens that guard the admin API. Made
 * only on the server's host, on its repositories folder (never through the API: an admin token
 * cannot mint another). `create` prints the token once on stdout.
 */
import type { Command } from 'commander';
import { AdminTokenService } from '../../service/admin/adminTokens.js';
import { AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { reposOption } from '../remote/adminTarget.js';
import { notAFolder, reposDir, reposPath } from '../reposFolder.js';

/** `create`: the folder may be missing (the server makes it at start), not a file. */
function service(repos: string | undefined, create = false): AdminTokenService {
  const root = create ? reposPath(repos) : reposDir(repos);
  const refusal = notAFolder(root, repos);
  if (refusal) throw refusal;
  return new AdminTokenService(new AdminTokenStore(root));
}

export function addAdminTokenCommands(program: Command): void {
  const adminToken = program
    .command('admin-token')
    .description('admin tokens, which guard the admin API (/rest/admin/...)');
  adminToken
    .command('create')
    .description('print a new admin token on stdout, once')
    .option('--name <label>', 'label of the token (else admin-N)')
    .addOption(reposOption())
    .action(async (options) => {
      const created = await service(options.repos, true).create(options.name);
      process.stdout.write(`${created.token}\n`);
      process.stderr.write(`cfghub: admin token ${created.label}; it is shown only this once\n`);
    });
  adminToken
    .command('list')
    .description('label, created and revoked of each admin token; never the token')
    .addOption(reposOption())
    .action((options) => {
      process.stdout.write(`${JSON.stringify(service(options.repos).list(), null, 2)}\n`);
    });
  adminToken
    .command('revoke')
    .description('the admin token stops working at once')
    .argument('<label>')
    .addOption(reposOption())
    .action(async (label: string, options) => {
      await service(options.repos).revoke(label);
      process.stderr.write(`cfghub: admin token ${label} revoked\n`);
    });
}
