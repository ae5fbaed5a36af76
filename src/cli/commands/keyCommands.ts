/**
 * `cfghub get`, `cfghub set` and `cfghub unset` against a server: one key in
 * one line, like `etcdctl get/put`. `set` and `unset` are each one push (one commit); a refused
 * push prints its reason and exits 1.
 */
import type { Command } from 'commander';
import { ServiceError } from '../../service/errors.js';
import { remote, remoteClient, withRemoteOptions, type RemoteOptions } from '../remote/remote.js';
import { printDryRun, withDryRunOptions, type DryRunCliOptions } from './pushCommands.js';

const asLine = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A value as given on the command line, as the push takes it: List and Map values are JSON. */
function valueOf(text: string, type: string | undefined): unknown {
  if (type !== 'List' && type !== 'Map') return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new ServiceError(
      'invalid_argument',
      `a ${type} value is JSON, e.g. ${type === 'List' ? '["a","b"]' : '{"a":"1"}'}; got ${JSON.stringify(text)}`,
    );
  }
}

export function addKeyCommands(program: Command): void {
  withRemoteOptions(
    program
      .command('get')
      .description("a key's value resolved for a context, or with --all every value of the key")
      .argument('<account/name>')
      .argument('<key>')
      .option('--context <items>', 'one item per context level, separated by ; (needed without --all)')
      .option('--all', 'every value of the key, with its context, one per line')
      .option('--json', 'as JSON'),
  )
    .addHelpText(
      'after',
      `\nExamples:\n  $ cfghub get acme/app db.host --context 'Production;web;node1'\n  $ cfghub get acme/app db.host --all --json`,
    )
    .action(
      async (
        fullName: string,
        key: string,
        options: RemoteOptions & { context?: string; all?: boolean; json?: boolean },
      ) => {
        const client = remoteClient(options);
        if (options.all) {
          const exported = await remote(() => client.export(fullName, { omitFiles: true }));
          const found = exported.data.find(
            (element) => typeof element.key === 'string' && element.key.toLowerCase() === key.toLowerCase(),
          );
          if (!found) throw new ServiceError('not_found', `${fullName} has no key ${key}`);
          const values = (found.values ?? []) as { context: string; value: unknown; active: boolean }[];
          if (options.json) process.stdout.write(`${JSON.stringify(values, null, 2)}\n`);
          else
            for (const v of values)
              process.stdout.write(`${v.context}\t${asLine(v.value)}${v.active ? '' : '\t(inactive)'}\n`);
          return;
        }
        if (options.context === undefined) throw new ServiceError('invalid_argument', 'get needs --context (or --all)');
        const { body } = await remote(() =>
          client.pull(fullName, { context: options.context!, includeValueContext: true }),
        );
        const name = Object.keys(body?.properties ?? {}).find((k) => k.toLowerCase() === key.toLowerCase());
        if (name === undefined)
          throw new ServiceError('not_found', `key ${key} has no value for context ${options.context} in ${fullName}`);
        const property = body!.properties![name];
        if (options.json) process.stdout.write(`${JSON.stringify({ key: name, ...property }, null, 2)}\n`);
        else process.stdout.write(`${asLine(property.val)}\n`);
      },
    );

  withDryRunOptions(
    withRemoteOptions(
      program
        .command('set')
        .description("set a key's value for a context, in one push (creates the key if needed)")
        .argument('<account/name>')
        .argument('<key>')
        .argument('<value>')
        .requiredOption('--context <items>', "the value's context: one item per level, * for any")
        .option(
          '--type <type>',
          'value data type: Text, Code, Boolean, Integer, Long, Float, Double, FileEmbed, FileRef, Map, List, JSON',
        )
        .requiredOption('-m, --message <comment>', 'the change comment (the commit message)'),
    ),
  )
    .addHelpText(
      'after',
      `\nExamples:\n  $ cfghub set acme/app db.port 5433 --context 'Production;*;*' --type Integer -m 'New database port' --dry-run\n  $ cfghub set acme/app db.port 5433 --context 'Production;*;*' --type Integer -m 'New database port'`,
    )
    .action(
      async (
        fullName: string,
        key: string,
        value: string,
        options: RemoteOptions & DryRunCliOptions & { context: string; type?: string; message: string },
      ) => {
        const push = remoteClient(options)
          .push(fullName)
          .set(key, valueOf(value, options.type), { context: options.context, type: options.type });
        if (options.dryRun) return printDryRun((dry) => push.dryRun(options.message, dry), options);
        const result = await remote(() => push.send(options.message));
        process.stdout.write(`${result.commit}\n`);
      },
    );

  withDryRunOptions(
    withRemoteOptions(
      program
        .command('unset')
        .description("remove a key's value for a context, in one push (the key and its other values stay)")
        .argument('<account/name>')
        .argument('<key>')
        .requiredOption('--context <items>', "the value's context, as it was set")
        .requiredOption('-m, --message <comment>', 'the change comment (the commit message)'),
    ),
  )
    .addHelpText(
      'after',
      `\nExample:\n  $ cfghub unset acme/app db.port --context 'Production;*;*' -m 'Back to the default port'`,
    )
    .action(
      async (
        fullName: string,
        key: string,
        options: RemoteOptions & DryRunCliOptions & { context: string; message: string },
      ) => {
        const push = remoteClient(options).push(fullName).unset(key, { context: options.context });
        if (options.dryRun) return printDryRun((dry) => push.dryRun(options.message, dry), options);
        const result = await remote(() => push.send(options.message));
        process.stdout.write(`${result.commit}\n`);
      },
    );
}
