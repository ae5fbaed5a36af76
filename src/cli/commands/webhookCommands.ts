/**
 * `cfghub webhook add|list|remove|deliveries|redeliver`: a repository's webhooks, through a
 * running server's admin API only (its deliveries and their log are the serving process's). A
 * hook's secret is read from standard input, never from the command line, and never printed.
 */
import type { Command } from 'commander';
import { parseFullName } from '../../service/admin/repositories.js';
import type { AdminClient } from '../../client/admin.js';
import { AdminApi } from '../remote/adminApi.js';
import { printJson, serverOption } from '../remote/adminTarget.js';
import { readPasswordLines } from './groupCommands.js';
import { serverOnly } from './readerCommands.js';

const apiOf = (options: { server?: string }) =>
  new AdminApi(serverOnly(options, 'a webhook and its deliveries'), process.env.CFGHUB_ADMIN_TOKEN);

/** A webhook call of the admin client on the repository named, after its name is checked. */
function onRepository<T>(api: AdminApi, fullName: string, operation: (client: AdminClient) => Promise<T>): Promise<T> {
  parseFullName(fullName);
  return api.call(operation);
}

/**
 * The subcommands that take the repository and at most one more argument, and print what one
 * admin client method answers.
 */
interface WebhookCall {
  readonly name: string;
  readonly argument?: string;
  readonly method: 'listWebhooks' | 'removeWebhook' | 'webhookDeliveries' | 'redeliver';
  readonly description: string;
}

const WEBHOOK_CALLS: readonly WebhookCall[] = [
  { name: 'list', method: 'listWebhooks', description: 'the webhooks of a repository (never their secrets), as JSON' },
  { name: 'remove', argument: '<id>', method: 'removeWebhook', description: 'remove a webhook' },
  {
    name: 'deliveries',
    method: 'webhookDeliveries',
    description: "the server's delivery log of the repository's webhooks, newest first, as JSON",
  },
  {
    name: 'redeliver',
    argument: '<delivery>',
    method: 'redeliver',
    description: "deliver a logged delivery's commit again, as a new delivery; prints it",
  },
];

export function addWebhookCommands(program: Command): void {
  const webhook = program
    .command('webhook')
    .description("a repository's webhooks: a signed POST to a URL after each commit (on a running server)");
  webhook
    .command('add')
    .description(
      "add a webhook; its secret (16-256 characters) is read as one line from standard input; prints the hook's id",
    )
    .argument('<account/name>')
    .argument('<url>')
    .addOption(serverOption())
    .action(async (fullName: string, url: string, options) => {
      parseFullName(fullName);
      const api = apiOf(options);
      const [secret] = await readPasswordLines(1, ['the secret']);
      printJson(await onRepository(api, fullName, (client) => client.addWebhook(fullName, { url, secret })));
    });
  for (const { name, description, argument, method } of WEBHOOK_CALLS) {
    const command = webhook.command(name).description(description).argument('<account/name>');
    if (argument) command.argument(argument);
    command.addOption(serverOption()).action(async (fullName: string) => {
      const api = apiOf(command.opts());
      const [, second] = command.args;
      printJson(
        await onRepository(api, fullName, (client): Promise<unknown> => client[method](fullName, second as string)),
      );
    });
  }
}
