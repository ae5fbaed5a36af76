/**
 * `cfghub change create|list|show|approve|apply|close` against a server (docs/changes.md): the
 * token's label is who creates, approves or applies. Formatted for a terminal by default,
 * `--json` for scripts (the server's answer as it is); `create` prints the new id alone.
 */
import type { Command } from 'commander';
import type { ChangeRequestAnswer, Client } from '../../client/index.js';
import { ServiceError } from '../../service/errors.js';
import { printJson } from '../remote/adminTarget.js';
import { pushBodyInput } from '../input.js';
import { remote, remoteClient, withRemoteOptions, type RemoteOptions } from '../remote/remote.js';

type Options = RemoteOptions & { json?: boolean };

const shown = (side: unknown) => {
  const value = (side as { val?: unknown } | undefined)?.val;
  return side === undefined ? '(none)' : JSON.stringify(value ?? null);
};

/** A change request for a terminal: its record, what it needs, and the preview context by context. */
export function formatChange(change: ChangeRequestAnswer): string {
  const lines = [
    `change request ${change.id}: ${change.title}`,
    `  ${change.status}, by ${change.author}, ${change.created}`,
  ];
  if (change.comment) lines.push(...change.comment.split('\n').map((line) => `  | ${line}`));
  const approvals = change.approvals.map((a) => a.by).join(', ');
  lines.push(`  approvals: ${approvals || 'none'}`);
  const needed = change.requiredApprovals;
  if (needed?.rules.length)
    lines.push(`  required: ${needed.rules.join(', ')}: ${needed.approved ? 'approved' : `needs ${needed.needed}`}`);
  if (change.applied) lines.push(`  applied as ${change.applied.commit} by ${change.applied.by}`);
  if (change.closed) lines.push(`  closed by ${change.closed.by}`);
  const preview = change.preview;
  if (preview) {
    if (preview.outcome === 'refused') lines.push(`  cannot be applied now: ${preview.refusal}`);
    else if (preview.outcome === 'unchanged') lines.push('  applying it now changes nothing');
    else {
      lines.push(`  applied on ${preview.head.slice(0, 12)} it changes ${preview.contexts.changed} context(s):`);
      for (const context of preview.contexts.listed) {
        lines.push(`    ${context.context}`);
        for (const key of context.keys) lines.push(`      ${key.key}: ${shown(key.before)} -> ${shown(key.after)}`);
        for (const file of context.files) lines.push(`      file ${file.path} changes`);
      }
      if (preview.contexts.more) lines.push(`    and ${preview.contexts.more} more`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function changeNumber(text: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text))
    throw new ServiceError('invalid_argument', `a change request id is a positive whole number, not ${text}`);
  return Number(text);
}

interface CreateOptions {
  readonly title: string;
  readonly body?: string;
  readonly revert?: string;
  readonly restore?: string;
  readonly comment?: string;
}

export function addChangeCommands(program: Command): void {
  const change = program
    .command('change')
    .description('change requests: a push reviewed, approved by others and applied (docs/changes.md)');
  withRemoteOptions(
    change
      .command('create')
      .description("store a push body as a change request; prints its id (the token's label is the author)")
      .argument('<account/name>')
      .requiredOption('--title <text>', 'one line naming the change')
      .option('--body <file>', 'the push body, as /rest/push takes it (- for standard input)')
      .option('--revert <commit>', 'instead of a body: the revert of this commit')
      .option('--restore <point>', 'instead of a body: the restore of this commit, tag or date')
      .option('--comment <text>', "the comment (else the body's changeComment)")
      .option('--json', "the server's answer, as JSON"),
  ).action(async (fullName: string, options: Options & CreateOptions) => {
    const given = [options.body, options.revert, options.restore].filter((one) => one !== undefined).length;
    if (given !== 1)
      throw new ServiceError('invalid_argument', 'change create takes one of --body, --revert and --restore');
    const client = remoteClient(options);
    const made = await remote(() => {
      if (options.body === undefined) {
        const rollback = options.revert !== undefined ? { revert: options.revert } : { restore: options.restore! };
        return client.createRollbackChange(fullName, options.title, rollback, options.comment);
      }
      const body = pushBodyInput(options.body);
      return client.createChange(
        fullName,
        options.title,
        options.comment ? { ...body, changeComment: options.comment } : body,
      );
    });
    if (options.json) printJson(made);
    else process.stdout.write(`${made.id}\n`);
  });
  withRemoteOptions(
    change
      .command('list')
      .description('the change requests, newest first')
      .argument('<account/name>')
      .option('--status <status>', 'only those open, applied or closed')
      .option('--json', "the server's answer, as JSON"),
  ).action(async (fullName: string, options: Options & { status?: string }) => {
    const client = remoteClient(options);
    const changes = await remote(() => client.listChanges(fullName, options.status));
    if (options.json) return printJson(changes);
    const lines = changes.map(
      (c) => `${c.id}\t${c.status}\t${c.author}\t${c.approvals.length} approval(s)\t${c.title}`,
    );
    process.stdout.write(lines.length ? `${lines.join('\n')}\n` : 'no change requests\n');
  });
  onOneChange(
    change,
    'show',
    'a change request, with what applying it would do now, context by context',
    (client, fullName, id) => client.showChange(fullName, id),
    formatChange,
  );
  onOneChange(
    change,
    'approve',
    "approve a change request as the token's label (not the author's own)",
    (client, fullName, id) => client.reviewChange(fullName, id, 'approve'),
    (approved) =>
      `change request ${approved.id} approved (approvals: ${approved.approvals.map((a) => a.by).join(', ') || 'none'})\n`,
  );
  onOneChange(
    change,
    'close',
    'close a change request without applying it',
    (client, fullName, id) => client.reviewChange(fullName, id, 'close'),
    (closed) => `change request ${closed.id} closed\n`,
  );
  onOneChange(
    change,
    'apply',
    'apply a change request: merged onto the head, committed with its Approved-By trailers',
    (client, fullName, id) => client.applyChange(fullName, id),
    (applied) => `change request ${applied.change.id} applied as ${applied.commit}\n`,
  );
}

/** A command on one change request, `<account/name> <id>`: the server's answer for a terminal (`text`), or as JSON. */
function onOneChange<T>(
  change: Command,
  name: string,
  description: string,
  call: (client: Client, fullName: string, id: number) => Promise<T>,
  text: (answer: T) => string,
): void {
  withRemoteOptions(
    change
      .command(name)
      .description(description)
      .argument('<account/name>')
      .argument('<id>')
      .option('--json', "the server's answer, as JSON"),
  ).action(async (fullName: string, id: string, options: Options) => {
    const client = remoteClient(options);
    const answer = await remote(() => call(client, fullName, changeNumber(id)));
    if (options.json) printJson(answer);
    else process.stdout.write(text(answer));
  });
}
