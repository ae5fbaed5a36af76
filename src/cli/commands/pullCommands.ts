/**
 * `cfghub pull ACCOUNT/NAME --context C [--format F] [--output FILE] [--watch [--exec CMD]]`
 *: the resolved configuration of a context, from a server, for a person or an
 * application's start script.
 *
 * With `--output`, the file is replaced atomically (a temporary file beside it, fsynced, renamed),
 * so a reader never sees half a file, and it is left as it is when the server cannot be reached:
 * the last good copy stays, and stderr says so. With `--watch` the command keeps the file current
 * (the server holds each request until the context's answer changes, see service/answers/watchHub.ts), and
 * runs `--exec`'s command through the shell after each write, one at a time.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { PullFormat } from '../../client/index.js';
import { PULL_FORMATS } from '../../domain/renderings.js';
import { ServiceError } from '../../service/errors.js';
import { asCliError, remote, remoteClient, serverOf, withRemoteOptions } from '../remote/remote.js';
import { ErrorCode } from '../../domain/errors.js';

/** Writes `text` to `path` through a temporary file beside it: readers see the old file or the new one, never a mix. */
export async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = join(
    dirname(path),
    `.${basename(path)}.cfghub-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  // Configuration often holds secrets: a new file is readable by its owner only; an existing one keeps its mode.
  const mode = fs.statSync(path, { throwIfNoEntry: false })?.mode ?? 0o600;
  const handle = await fs.promises.open(temporary, 'wx', mode & 0o777);
  try {
    await handle.writeFile(text);
    await handle.sync();
    await handle.close();
    await fs.promises.rename(temporary, path);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

function currentContent(path: string): string | undefined {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Runs a command through the shell, its output passed through; resolves with its exit status. */
function runCommand(command: string): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, { shell: true, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', () => done(127));
    child.on('close', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

interface PullCommandOptions {
  readonly context: string;
  readonly format: PullFormat;
  readonly output?: string;
  readonly watch?: boolean;
  readonly exec?: string;
  readonly server?: string;
  readonly token?: string;
}

async function pullOnce(fullName: string, options: PullCommandOptions): Promise<void> {
  const client = remoteClient(options);
  const output = options.output && resolve(options.output);
  try {
    const answer = await remote(() => client.pull(fullName, { context: options.context, format: options.format }));
    if (!output) process.stdout.write(answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`);
    else await writeAtomically(output, answer.text);
  } catch (error) {
    if (
      output &&
      error instanceof ServiceError &&
      error.code === ErrorCode.Unavailable &&
      currentContent(output) !== undefined
    ) {
      throw new ServiceError('unavailable', `${error.message}; keeping the last good copy in ${options.output}`);
    }
    throw error;
  }
}

async function pullWatching(fullName: string, options: PullCommandOptions): Promise<void> {
  const client = remoteClient(options);
  const output = options.output && resolve(options.output);
  const stop = new AbortController();
  const stopOn = () => stop.abort();
  process.once('SIGINT', stopOn);
  process.once('SIGTERM', stopOn);
  let unreachable = false;
  try {
    const answers = client.watch(fullName, {
      context: options.context,
      format: options.format,
      signal: stop.signal,
      onRetry: (error) => {
        if (unreachable) return;
        unreachable = true;
        const kept =
          output && currentContent(output) !== undefined ? `; keeping the last good copy in ${options.output}` : '';
        process.stderr.write(`cfghub: ${error.message}${kept}; trying again\n`);
      },
    });
    for await (const answer of answers) {
      if (unreachable) process.stderr.write(`cfghub: ${serverOf(options)} is back\n`);
      unreachable = false;
      if (!output) {
        process.stdout.write(answer.text.endsWith('\n') ? answer.text : `${answer.text}\n`);
      } else {
        if (currentContent(output) === answer.text) continue; // the copy is current already: no write, no command
        await writeAtomically(output, answer.text);
        process.stderr.write(`cfghub: wrote ${options.output} (${answer.etag})\n`);
      }
      if (options.exec) {
        const status = await runCommand(options.exec);
        if (status !== 0) process.stderr.write(`cfghub: --exec command exited ${status}\n`);
      }
    }
  } catch (error) {
    if (!stop.signal.aborted) throw asCliError(error);
  } finally {
    process.off('SIGINT', stopOn);
    process.off('SIGTERM', stopOn);
  }
}

export function addPullCommand(program: Command): void {
  withRemoteOptions(
    program
      .command('pull')
      .description("a context's resolved configuration from a server; --watch keeps --output current")
      .argument('<account/name>')
      .requiredOption('--context <items>', 'one item per context level, separated by ;')
      .addOption(
        new Option('--format <format>', 'json, yaml, properties or env').choices([...PULL_FORMATS]).default('json'),
      )
      .option(
        '--output <file>',
        'write to this file atomically (else stdout); kept as it is when the server cannot be reached',
      )
      .option('--watch', 'keep going: rewrite on every change of the context, until interrupted')
      .option('--exec <command>', 'with --watch: run this shell command after each write'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ CFGHUB_SERVER=http://127.0.0.1:8080 cfghub pull acme/app --context 'Production;web;node1' --format env --output .env
  $ cfghub pull acme/app --context 'Production;web;node1' --format env --output .env --watch --exec 'kill -HUP $(cat app.pid)'`,
    )
    .action(async (fullName: string, options: PullCommandOptions) => {
      if (options.exec && !options.watch) throw new ServiceError('invalid_argument', '--exec needs --watch');
      await (options.watch ? pullWatching(fullName, options) : pullOnce(fullName, options));
    });
}
