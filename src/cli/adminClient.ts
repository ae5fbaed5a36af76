/**
 * The CLI against a remote server (issue 19): the same Administration as on a folder, done
 * through the server's admin API (src/http/adminRoutes.ts) with an admin token. The server runs
 * the same operations, and its JSON errors are turned back into the same ServiceErrors, so a
 * command prints and exits alike both ways. Passwords go only in request bodies.
 */
import { checkTagName, type Administration, type NewClientToken, type Rollback } from '../service/administration.js';
import { ServiceError, type ServiceErrorCode } from '../service/errors.js';
import type { RepositoryRecord, UnreadableRecord } from '../service/listing.js';
import type { NewRepository } from '../service/repositories.js';
import type { SettingsChange } from '../service/repositorySettings.js';
import type { GroupInfo } from '../service/securityGroups.js';
import type { TagRecord } from '../service/tags.js';
import type { TokenInfo } from '../service/tokens.js';

const SERVICE_CODES = new Set<string>(['invalid_argument', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'precondition_failed', 'unavailable']);

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
function repoPath(fullName: string): string {
  const [account, name] = fullName.split('/');
  return `/rest/admin/repositories/${encodeURIComponent(account)}/${encodeURIComponent(name)}`;
}

export class RemoteAdministration implements Administration {
  private readonly base: string;

  constructor(
    server: string,
    private readonly token: string | undefined,
  ) {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new ServiceError('invalid_argument', `--server must be a URL like http://cfghub.example:8080, got ${JSON.stringify(server)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ServiceError('invalid_argument', `--server must be an http or https URL, got ${JSON.stringify(server)}`);
    }
    if (!token) throw new ServiceError('invalid_argument', 'a remote server needs an admin token in CFGHUB_ADMIN_TOKEN (cfghub admin-token create on its host makes one)');
    this.base = url.href.replace(/\/+$/, '');
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new Error(`cannot reach the server at ${this.base}: ${cause}`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new Error(`the server at ${this.base} answered ${response.status} with something that is not JSON: is it a cfghub server?`);
    }
    if (!response.ok) throw errorOf(response.status, parsed);
    return parsed as T;
  }

  createRepository(input: NewRepository): Promise<RepositoryRecord> {
    const { levels, ...rest } = input;
    return this.call('POST', '/rest/admin/repositories', { ...rest, context: levels });
  }

  listRepositories(): Promise<{ records: RepositoryRecord[]; unreadable: UnreadableRecord[] }> {
    return this.call('GET', '/rest/admin/repositories');
  }

  changeSettings(fullName: string, change: SettingsChange): Promise<RepositoryRecord | UnreadableRecord> {
    return this.call('PATCH', repoPath(fullName), change);
  }

  deleteRepository(fullName: string): Promise<{ repository: string; revokedTokens: number }> {
    return this.call('DELETE', repoPath(fullName));
  }

  repositoryRecord(fullName: string): Promise<RepositoryRecord | UnreadableRecord> {
    return this.call('GET', repoPath(fullName));
  }

  createToken(fullName: string, input: NewClientToken): Promise<{ token: string; label: string; repository: string }> {
    return this.call('POST', `${repoPath(fullName)}/tokens`, input);
  }

  listTokens(fullName: string): Promise<TokenInfo[]> {
    return this.call('GET', `${repoPath(fullName)}/tokens`);
  }

  revokeToken(fullName: string, label: string): Promise<{ label: string; repository: string }> {
    return this.call('DELETE', `${repoPath(fullName)}/tokens/${encodeURIComponent(label)}`);
  }

  createTag(fullName: string, tag: string, comment?: string): Promise<TagRecord> {
    checkTagName(tag);
    return this.call('POST', `${repoPath(fullName)}/tags`, { name: tag, ...(comment === undefined ? {} : { comment }) });
  }

  listTags(fullName: string): Promise<TagRecord[]> {
    return this.call('GET', `${repoPath(fullName)}/tags`);
  }

  deleteTag(fullName: string, tag: string): Promise<{ tag: string; repository: string }> {
    checkTagName(tag); // before it becomes a URL segment, where `..` would not survive
    return this.call('DELETE', `${repoPath(fullName)}/tags/${encodeURIComponent(tag)}`);
  }

  createGroup(fullName: string, group: string, password: string): Promise<{ name: string; commit: string }> {
    return this.call('POST', `${repoPath(fullName)}/groups`, { name: group, password });
  }

  listGroups(fullName: string): Promise<GroupInfo[]> {
    return this.call('GET', `${repoPath(fullName)}/groups`);
  }

  changePassword(fullName: string, group: string, current: string, next: string): Promise<{ name: string; commit: string }> {
    return this.call('POST', `${repoPath(fullName)}/groups/${encodeURIComponent(group)}/password`, { current, new: next });
  }

  deleteGroup(fullName: string, group: string): Promise<{ name: string; commit: string; repository: string }> {
    return this.call('DELETE', `${repoPath(fullName)}/groups/${encodeURIComponent(group)}`);
  }

  revert(fullName: string, commit: string, rollback: Rollback): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call('POST', `${repoPath(fullName)}/revert`, { commit, ...(rollback.comment === undefined ? {} : { comment: rollback.comment }) }, applicationHeader(rollback));
  }

  restore(fullName: string, to: string, rollback: Rollback): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call(
      'POST',
      `${repoPath(fullName)}/restore`,
      {
        to,
        ...(rollback.comment === undefined ? {} : { comment: rollback.comment }),
        ...(rollback.securityGroup === undefined ? {} : { securityGroup: rollback.securityGroup, password: rollback.password }),
      },
      applicationHeader(rollback),
    );
  }
}

function applicationHeader(rollback: Rollback): Record<string, string> {
  return rollback.applicationName ? { 'Application-Name': rollback.applicationName } : {};
}
