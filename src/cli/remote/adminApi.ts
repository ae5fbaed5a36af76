/**
 * The admin API as the CLI calls it: the one admin client (src/client/admin.ts) with a server's
 * URL and an admin token, and the server's JSON errors turned back into the ServiceErrors the
 * folder would raise, so a command prints and exits alike both ways. Passwords go only in
 * request bodies. remoteAdministration (adminClient.ts) and the commands' own remote calls build on it.
 */
import { AdminClient, ClientError } from '../../client/admin.js';
import { ServiceError, type ServiceErrorCode } from '../../service/errors.js';
import { serverUrl } from './remote.js';

const SERVICE_CODES = new Set<string>([
  'invalid_argument',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'precondition_failed',
  'unavailable',
]);

/** How long the CLI waits for one answer. */
const REQUEST_TIMEOUT_MS = 60_000;

/** An error of the admin client as the CLI shows it: a ServiceError when it is one (same exit status), else a plain Error. */
function errorOf(error: unknown): Error {
  if (!(error instanceof ClientError)) return new Error((error as Error).message);
  if (SERVICE_CODES.has(error.code)) return new ServiceError(error.code as ServiceErrorCode, error.message);
  // A body that breaks the API's shape is what a bad argument does locally: a usage error.
  if (error.code === 'bad_request') return new ServiceError('invalid_argument', error.message);
  return new Error(error.message);
}

/** The admin client of a server, its answers and errors as the CLI's commands take them. */
export class AdminApi {
  protected readonly client: AdminClient;

  constructor(server: string, token: string | undefined) {
    const url = serverUrl(server);
    if (!token)
      throw new ServiceError(
        'invalid_argument',
        'a remote server needs an admin token in CFGHUB_ADMIN_TOKEN (cfghub admin-token create on its host makes one)',
      );
    this.client = new AdminClient({ server: url.href, token, timeoutMs: REQUEST_TIMEOUT_MS });
  }

  /** An operation of the admin client, its errors turned into the ones the folder would raise. */
  async call<T>(operation: (client: AdminClient) => Promise<T>): Promise<T> {
    try {
      return await operation(this.client);
    } catch (error) {
      throw errorOf(error);
    }
  }
}
