/**
 * `cfghub push`: a whole push body (JSON, as `POST /rest/push/{account}/{repository}` takes it)
 * from a file or standard input, in one commit; with `--dry-run` (here and on `set`/`unset`) what
 * it would do instead, context by context, for a terminal or as JSON (docs/schemas.md). A push
 * refused, or that would be refused, prints its reason and exits 1.
 */
import type { Command } from 'commander';
import type { DryRunAnswer, DryRunOptions } from '../../client/index.js';
import { ServiceError } from '../../service/errors.js';
import type { DryRunResult } from '../../service/write/dryRun.js';
import { pushBodyInput } from '../input.js';
import { remote, remoteClient, withRemoteOptions, type RemoteOptions } from '../remote/remote.js';

export interface DryRunCliOptions {
  readonly dryRun?: boolean;
  readonly contexts?: string;
  readonly json?: boolean;
}

/** Adds `--dry-run`, `--contexts` and `--json` to a command that writes (`what`: a push, a revert, a restore). */
export function withDryRunOptions(command: Command, what = 'push'): Command {
  return command
    .option('--dry-run', `write nothing: show what the ${what} would change, context by context`)
    .option(
      '--contexts <list>',
      'with --dry-run: contexts to weigh besides those the repository names, comma-separated (Production;Billing;node-7,...)',
    )
    .option('--json', "with --dry-run: the server's answer as JSON");
}

/** A dry run's answer: as the server sent it, or as the service made it (the command line on a repositories folder). */
type DryRunShown = DryRunAnswer | DryRunResult;

type Shown = { val?: unknown; type?: string; encryption?: string; truncated?: true } | undefined;
type ShownFile = { content?: string; encryption?: string; truncated?: true } | undefined;

function valueText(shown: Shown): string {
  if (shown === undefined) return '(none)';
  if (shown.encryption !== undefined && !('val' in shown)) return `(sealed in group ${shown.encryption})`;
  const text = typeof shown.val === 'string' ? shown.val : JSON.stringify(shown.val);
  return `${text}${shown.truncated ? '…' : ''}`;
}

/** The lines of a file that differ, around the part both renderings share at their start and end. */
function fileLines(before: ShownFile, after: ShownFile): string[] {
  if (before?.encryption !== undefined || after?.encryption !== undefined)
    return [`      (sealed in group ${before?.encryption ?? after?.encryption})`];
  const a = before?.content?.split('\n') ?? [];
  const b = after?.content?.split('\n') ?? [];
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return [
    ...a.slice(start, a.length - end).map((line) => `      - ${line}`),
    ...b.slice(start, b.length - end).map((line) => `      + ${line}`),
    ...(before?.truncated || after?.truncated ? ['      (cut: the file is longer than the dry run shows)'] : []),
  ];
}

/** A dry run's answer for a terminal; `what` the write is (a push, a revert, a restore). */
export function dryRunText(answer: DryRunShown, what = 'push'): string {
  if (answer.outcome === 'refused') return `the ${what} would be refused: ${answer.refusal ?? ''}\n`;
  if (answer.outcome === 'unchanged') return `the ${what} would change nothing (head ${answer.head.slice(0, 12)})\n`;
  const lines: string[] = [];
  const files = answer.changed.files.map((file) => `${file.path} (${file.context})`);
  lines.push(`the ${what} would commit on head ${answer.head.slice(0, 12)}, changing:`);
  if (answer.changed.keys.length) lines.push(`  keys: ${answer.changed.keys.join(', ')}`);
  if (files.length) lines.push(`  files: ${files.join(', ')}`);
  if (answer.changed.schemas) lines.push('  the schemas document');
  const { considered, changed, listed, more } = answer.contexts;
  lines.push(`${changed} of ${considered} contexts would read something else${changed ? ':' : ''}`);
  for (const context of listed) {
    lines.push('', context.context);
    for (const key of context.keys) {
      if (key.before === undefined) lines.push(`  + ${key.key} = ${valueText(key.after)}`);
      else if (key.after === undefined) lines.push(`  - ${key.key} (was ${valueText(key.before)})`);
      else lines.push(`  ~ ${key.key}: ${valueText(key.before)} -> ${valueText(key.after)}`);
    }
    for (const file of context.files) {
      const mark = file.before === undefined ? '+' : file.after === undefined ? '-' : '~';
      lines.push(`  ${mark} file ${file.path}`, ...fileLines(file.before, file.after));
    }
  }
  if (more) lines.push('', `(and ${more} more contexts, not shown)`);
  return `${lines.join('\n')}\n`;
}

/** Runs a write dry (a push by default) and prints what it would do; one that would be refused exits 1. */
export async function printDryRun(
  run: (options: DryRunOptions) => Promise<DryRunShown>,
  options: DryRunCliOptions,
  what = 'push',
): Promise<void> {
  const contexts = (options.contexts ?? '')
    .split(',')
    .map((text) => text.trim())
    .filter(Boolean);
  const answer = await remote(() => run({ contexts }));
  if (options.json) process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else if (answer.outcome !== 'refused') process.stdout.write(dryRunText(answer, what));
  if (answer.outcome === 'refused')
    throw new ServiceError('conflict', `the ${what} would be refused: ${answer.refusal ?? ''}`);
}

export function addPushCommands(program: Command): void {
  withDryRunOptions(
    withRemoteOptions(
      program
        .command('push')
        .description(
          'send a push body (JSON, as POST /rest/push takes it; - reads standard input) in one commit, or with --dry-run show what it would change',
        )
        .argument('<account/name>')
        .argument('<file>')
        .option('-m, --message <comment>', "the change comment (instead of the body's changeComment)"),
    ),
  )
    .addHelpText(
      'after',
      `\nExamples:\n  $ cfghub push acme/app change.json --dry-run\n  $ cfghub push acme/app change.json --dry-run --contexts 'Production;Billing;node-7' --json\n  $ cfghub push acme/app change.json -m 'New database host'`,
    )
    .action(
      async (fullName: string, file: string, options: RemoteOptions & DryRunCliOptions & { message?: string }) => {
        const read = pushBodyInput(file);
        const body = options.message !== undefined ? { ...read, changeComment: options.message } : read;
        const client = remoteClient(options);
        if (options.dryRun) return printDryRun((dry) => client.dryRunBody(fullName, body, dry), options);
        const result = await remote(() => client.pushBody(fullName, body));
        process.stdout.write(`${result.commit}\n`);
      },
    );
}
