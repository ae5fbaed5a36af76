/**
 * `cfghub webhook add|list|remove|deliveries|redeliver`: a repository's webhooks, through a
 * running server's admin API only (its deliveries and their log are the serving process's). A
 * hook's secret is read from standard input, never from the command line, and never printed.
 */
import type { Command } from 'commander';
import { parseFullName } from '../../service/admin/repositories.js';
import { AdminApi } from '../remote/adminApi.js';
import { printJson, serverOption } from '../remote/adminTarget.js';
import { readPasswordLines } from './groupCommands.js';
import { serverOnly } from './readerCommands.js';

/** The webhook routes of a server's admin API, each after the repository's name is checked. */
class WebhookApi extends AdminApi {
  add(fullName: string, body: { url: string; secret: string }) {
    parseFullName(fullName);
    return this.call((client) => client.addWebhook(fullName, body));
  }
  list(fullName: string) {
    parseFullName(fullName);
    return this.call((client) => client.listWebhooks(fullName));
  }
  remove(fullName: string, id: string) {
    parseFullName(fullName);
    return this.call((client) => client.removeWebhook(fullName, id));
  }
  deliveries(fullName: string) {
    parseFullName(fullName);
    return this.call((client) => client.webhookDeliveries(fullName));
  }
  redeliver(fullName: string, delivery: string) {
    parseFullName(fullName);
    return this.call((client) => client.redeliver(fullName, delivery));
  }
}

const apiOf = (options: { server?: string }) =>
  new WebhookApi(serverOnly(options, 'a webhook and its deliveries'), process.env.CFGHUB_ADMIN_TOKEN);

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
      printJson(await api.add(fullName, { url, secret }));
    });
  webhook
    .command('list')
    .description('the webhooks of a repository (never their secrets), as JSON')
    .argument('<account/name>')
    .addOption(serverOption())
    .action(async (fullName: string, options) => printJson(await apiOf(options).list(fullName)));
  webhook
    .command('remove')
    .description('remove a webhook')
    .argument('<account/name>')
    .argument('<id>')
    .addOption(serverOption())
    .action(async (fullName: string, id: string, options) => printJson(await apiOf(options).remove(fullName, id)));
  webhook
    .command('deliveries')
    .description("the server's delivery log of the repository's webhooks, newest first, as JSON")
    .argument('<account/name>')
    .addOption(serverOption())
    .action(async (fullName: string, options) => printJson(await apiOf(options).deliveries(fullName)));
  webhook
    .command('redeliver')
    .description("deliver a logged delivery's commit again, as a new delivery; prints it")
    .argument('<account/name>')
    .argument('<delivery>')
    .addOption(serverOption())
    .action(async (fullName: string, delivery: string, options) =>
      printJson(await apiOf(options).redeliver(fullName, delivery)),
    );
}
