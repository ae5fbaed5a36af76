/**
 * The admin API as the CLI calls it: a server's URL and an admin token, one JSON
 * request per operation, and the server's JSON errors turned back into the ServiceErrors the
 * folder would raise, so a command prints and exits alike both ways. Passwords go only in
 * request bodies. RemoteAccessAdministration and RemoteAdministration build on it.
 */
import { NO_REDIRECTS, redirectRefusal } from '../../client/redirects.js';
import { ServiceError, type ServiceErrorCode } from '../../service/errors.js';

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

/** An answer's error as the CLI shows it: a ServiceError when it is one (same exit status), else a plain Error. */
function errorOf(status: number, body: unknown): Error {
  const { error, message } = (body ?? {}) as { error?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : `the server answered ${status}`;
  if (typeof error === 'string' && SERVICE_CODES.has(error)) return new ServiceError(error as ServiceErrorCode, text);
  // A body that breaks the API's shape is what a bad argument does locally: a usage error.
  if (error === 'bad_request') return new ServiceError('invalid_argument', text);
  return new Error(text);
}

/** `ACCOUNT/NAME` as URL path segments (the CLI checked both names before). */
export function repoPath(fullName: string): string {
  const [account, name] = fullName.split('/');
  return `/rest/admin/repositories/${encodeURIComponent(account)}/${encodeURIComponent(name)}`;
}

export class AdminApi {
  private readonly base: string;

  constructor(
    server: string,
    private readonly token: string | undefined,
  ) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new ServiceError(
        'invalid_argument',
        `--server must be a URL like http://cfghub.example:8080, got ${JSON.stringify(server)}`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ServiceError(
        'invalid_argument',
        `--server must be an http or https URL, got ${JSON.stringify(server)}`,
      );
    }
    if (!token)
      throw new ServiceError(
        'invalid_argument',
        'a remote server needs an admin token in CFGHUB_ADMIN_TOKEN (cfghub admin-token create on its host makes one)',
      );
    this.base = url.href.replace(/\/+$/, '');
  }

  protected async call<T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        ...NO_REDIRECTS,
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new Error(`cannot reach the server at ${this.base}: ${cause}`);
    }
    const redirect = redirectRefusal(response, this.base);
    if (redirect !== undefined) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(redirect);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new Error(
        `the server at ${this.base} answered ${response.status} with something that is not JSON: is it a cfghub server?`,
      );
    }
    if (!response.ok) throw errorOf(response.status, parsed);
    return parsed as T;
  }
}
