/**
 * `cfghub history` and `cfghub diff` against a server: formatted for a
 * terminal by default, `--json` for scripts (the server's answer as it is).
 */
import type { Command } from 'commander';
import type { DiffAnswer, HistoryAnswer } from '../../client/index.js';
import { remote, remoteClient, withRemoteOptions, type RemoteOptions } from '../remote/remote.js';

const MARK: Record<string, string> = { added: '+', modified: '~', deleted: '-' };
const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null));

export function formatHistory(answer: HistoryAnswer): string {
  const lines: string[] = [];
  for (const commit of answer.commits) {
    const by = commit.applicationName ? `${commit.author.name} via ${commit.applicationName}` : commit.author.name;
    lines.push(`${commit.id.slice(0, 12)}  ${commit.date}  ${by}`);
    lines.push(`    ${commit.comment.split('\n')[0]}`);
    for (const key of commit.keys) {
      const values = (key.values ?? []).map((v) => `${MARK[v.change] ?? '?'}${v.context}`).join(' ');
      lines.push(`    ${MARK[key.change] ?? '?'} key ${key.key}${values ? `  ${values}` : ''}`);
    }
    for (const file of commit.files) lines.push(`    ${MARK[file.change] ?? '?'} file ${file.path}  ${file.context}`);
  }
  if (answer.nextBefore) lines.push(`(more: --before ${answer.nextBefore})`);
  return lines.length ? `${lines.join('\n')}\n` : 'no commits\n';
}

export function formatDiff(answer: DiffAnswer): string {
  const lines = [`from ${answer.from}`, `to   ${answer.to}`];
  for (const key of answer.keys) lines.push(`  ${MARK[key.change] ?? '?'} key ${key.key}`);
  for (const file of answer.files) lines.push(`  ${MARK[file.change] ?? '?'} file ${file.path}  ${file.context}`);
  if (answer.keys.length === 0 && answer.files.length === 0) lines.push('  no changes');
  const resolved = answer.resolved;
  if (resolved) {
    lines.push(`resolved for ${resolved.context}:`);
    const before = lines.length;
    for (const [name, value] of Object.entries(resolved.properties.added))
      lines.push(`  + ${name} = ${shown((value as { val?: unknown })?.val ?? value)}`);
    for (const [name, change] of Object.entries(resolved.properties.changed)) {
      const val = (side: unknown) => shown((side as { val?: unknown })?.val ?? side);
      lines.push(`  ~ ${name}: ${val(change.before)} -> ${val(change.after)}`);
    }
    for (const [name, value] of Object.entries(resolved.properties.removed))
      lines.push(`  - ${name} (was ${shown((value as { val?: unknown })?.val ?? value)})`);
    for (const path of Object.keys(resolved.files.added)) lines.push(`  + file ${path}`);
    for (const path of Object.keys(resolved.files.changed)) lines.push(`  ~ file ${path}`);
    for (const path of Object.keys(resolved.files.removed)) lines.push(`  - file ${path}`);
    if (lines.length === before) lines.push('  nothing this context sees changed');
  }
  return `${lines.join('\n')}\n`;
}

export function addHistoryCommands(program: Command): void {
  withRemoteOptions(
    program
      .command('history')
      .description('the commits of a repository, newest first, with what each changed')
      .argument('<account/name>')
      .option('--key <key>', 'only commits that changed this key')
      .option('--file <path>', 'only commits that changed this file')
      .option('--limit <n>', 'at most this many commits (default 50)')
      .option('--before <commit>', 'start below this commit (paging)')
      .option('--json', "the server's answer, as JSON"),
  )
    .addHelpText(
      'after',
      `\nExamples:\n  $ cfghub history acme/app --key db.host\n  $ cfghub history acme/app --limit 5 --json`,
    )
    .action(
      async (
        fullName: string,
        options: RemoteOptions & { key?: string; file?: string; limit?: string; before?: string; json?: boolean },
      ) => {
        const client = remoteClient(options);
        const answer = await remote(() =>
          client.history(fullName, {
            key: options.key,
            file: options.file,
            limit: options.limit === undefined ? undefined : Number(options.limit),
            before: options.before,
          }),
        );
        process.stdout.write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : formatHistory(answer));
      },
    );

  withRemoteOptions(
    program
      .command('diff')
      .description(
        'what changed between two points (commit, tag or ISO date; TO defaults to the head), and what a context sees change',
      )
      .argument('<account/name>')
      .argument('<from>')
      .argument('[to]')
      .option('--context <items>', 'also show what this context resolves differently')
      .option('--json', "the server's answer, as JSON"),
  )
    .addHelpText(
      'after',
      `\nExamples:\n  $ cfghub diff acme/app v1 --context 'Production;web;node1'\n  $ cfghub diff acme/app 2026-11-01T00:00:00Z v2 --json`,
    )
    .action(
      async (
        fullName: string,
        from: string,
        to: string | undefined,
        options: RemoteOptions & { context?: string; json?: boolean },
      ) => {
        const client = remoteClient(options);
        const answer = await remote(() => client.diff(fullName, from, { to, context: options.context }));
        process.stdout.write(options.json ? `${JSON.stringify(answer, null, 2)}\n` : formatDiff(answer));
      },
    );
}
