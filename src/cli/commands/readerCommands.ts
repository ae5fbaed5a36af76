/**
 * `cfghub clients ACCOUNT/NAME`: who reads what, from a running server (the read record is kept
 * in the serving process's memory, so there is no folder form): per Application-Name and context,
 * the commit last served, when, and how many reads, as JSON.
 */
import type { Command } from 'commander';
import { ServiceError } from '../../service/errors.js';
import { parseFullName } from '../../service/admin/repositories.js';
import { AdminApi } from '../remote/adminApi.js';
import { printJson, serverOption } from '../remote/adminTarget.js';

class ReadRecordApi extends AdminApi {
  readRecord(fullName: string): Promise<unknown> {
    parseFullName(fullName);
    return this.call((client) => client.readRecord(fullName));
  }
}

/** The server a server-only command asks: `--server`, else CFGHUB_SERVER. */
export function serverOnly(options: { server?: string }, what: string): string {
  const server = options.server ?? (process.env.CFGHUB_SERVER || undefined);
  if (server === undefined)
    throw new ServiceError(
      'invalid_argument',
      `${what} is kept by the serving process: give --server URL (or CFGHUB_SERVER), with CFGHUB_ADMIN_TOKEN`,
    );
  return server;
}

export function addReaderCommands(program: Command): void {
  program
    .command('clients')
    .description(
      "who reads a repository: per Application-Name and context, the commit last served, when, and how many reads (a running server's record)",
    )
    .argument('<account/name>')
    .addOption(serverOption())
    .action(async (fullName: string, options: { server?: string }) => {
      parseFullName(fullName);
      const api = new ReadRecordApi(serverOnly(options, 'the read record'), process.env.CFGHUB_ADMIN_TOKEN);
      printJson(await api.readRecord(fullName));
    });
}
