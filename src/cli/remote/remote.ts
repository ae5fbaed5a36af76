/**
 * The options every command that talks to a cfghub server shares (reused by
 * the admin commands): `--server URL` (else CFGHUB_SERVER) and `--token TOKEN`
 * (else CFGHUB_TOKEN, so a token never has to appear on a command line, where `ps` shows it).
 */
import { Option, type Command } from 'commander';
import { Client, ClientError, ConnectionError, PushRefusedError } from '../../client/index.js';
import { ServiceError } from '../../service/errors.js';
import { ErrorCode } from '../../domain/errors.js';
import { isHttp, urlOf } from '../../lib/urls.js';

export interface RemoteOptions {
  readonly server?: string;
  readonly token?: string;
}

/** Adds `--server` and `--token` to a command. */
export function withRemoteOptions(command: Command): Command {
  return command
    .addOption(new Option('--server <url>', 'the cfghub server, e.g. http://127.0.0.1:8080 (else CFGHUB_SERVER)'))
    .addOption(
      new Option(
        '--token <token>',
        'a client token of the repository (else CFGHUB_TOKEN; prefer the variable: a command line is visible to others)',
      ),
    );
}

/** `--server`'s value as a URL: http or https, else a clear usage error. */
export function serverUrl(server: string): URL {
  const url = urlOf(server);
  if (!url)
    throw new ServiceError(
      'invalid_argument',
      `--server must be a URL like http://127.0.0.1:8080, got ${JSON.stringify(server)}`,
    );
  if (!isHttp(url))
    throw new ServiceError(
      'invalid_argument',
      `--server must be an http:// or https:// URL, got ${JSON.stringify(server)}`,
    );
  return url;
}

/** The server's URL from the options or the environment; a clear usage error without one. */
export function serverOf(options: RemoteOptions): string {
  const server = options.server ?? process.env.CFGHUB_SERVER;
  if (!server) throw new ServiceError('invalid_argument', 'no server: pass --server URL or set CFGHUB_SERVER');
  serverUrl(server);
  return server;
}

export function remoteClient(options: RemoteOptions): Client {
  const token = options.token ?? process.env.CFGHUB_TOKEN;
  return new Client({ server: serverOf(options), token: token || undefined, applicationName: 'cfghub-cli' });
}

/** A client's error as the CLI reports it: one line on stderr, exit 1 (2 for a bad argument). */
export function asCliError(error: unknown): unknown {
  if (error instanceof PushRefusedError) return new ServiceError('conflict', `push refused: ${error.reason}`);
  if (error instanceof ClientError)
    return new ServiceError(
      error.code === ErrorCode.InvalidArgument && error.status === 0 ? 'invalid_argument' : 'unavailable',
      error.status ? `${error.message} (${error.status} ${error.code})` : error.message,
    );
  if (error instanceof ConnectionError) return new ServiceError('unavailable', error.message);
  return error;
}

/** Runs a command's work, reporting client errors as CLI errors. */
export async function remote<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asCliError(error);
  }
}
