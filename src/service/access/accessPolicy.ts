/**
 * Who may read, write or clone a repository: the one place that
 * decides it, for every route. The adapters only say which repository the request names (by its
 * path, or by its token when the path names none), which token it presented, and the operation;
 * they map the answer (a grant, or a refusal with its reason and status class) to their protocol.
 *
 * - read (pull, the other read endpoints, history, diff) and clone (git over HTTP): a token of the
 *   repository, or none when the repository is not private and allows token-free pull.
 * - write (push, revert, restore): a token of the repository that is not read-only, or none when
 *   the repository allows token-free push. Which elements a token of a rule set may change is
 *   decided per element when the write is planned (domain/accessRules.ts); the grant carries the set.
 *
 * Settings are read alone when the head breaks the layout rules, so history can still show what
 * went wrong and a restore can still repair it.
 */
import { afterQueuedWatchEvents } from '../../disk/refs/changeWatch.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { readSettings, settingsAt, settingsWithoutSnapshot } from '../../layout/readSettings.js';
import type { TokenRecord } from '../../disk/records/tokenStore.js';
import { ServiceError } from '../errors.js';
import { requireRepository, unknownRepository } from '../admin/repositories.js';
import type { GroupKey } from '../security/sealing.js';
import type { TokenService } from '../admin/tokens.js';
import type { RepositoryRecord } from '../read/listing.js';
import { tokenBelongsTo, tokenGroupKeys, tokenRepository } from '../admin/tokens.js';
import { ErrorCode } from '../../domain/errors.js';

export type AccessOperation = 'read' | 'write' | 'clone';

export interface AccessRequest {
  readonly operation: AccessOperation;
  /** The repository the path names; absent on the token form (`/rest/push`), where the token names it. */
  readonly account?: string;
  readonly repository?: string;
  /** The token the request presented, if any. */
  readonly token?: string;
  /** How the request is named in a refusal (`POST /rest/push`). */
  readonly what: string;
  /** The read needs no key of the head (history): its settings are then read without building its snapshot. */
  readonly settingsOnly?: boolean;
}

export interface AccessGrant {
  readonly allowed: true;
  readonly repository: GitRepository;
  /** The head as read once for this request. */
  readonly head: string;
  /** The token's record, when one was presented. */
  readonly token?: TokenRecord;
  /** Keys of the security groups the token is bound to. */
  readonly groupKeys?: readonly GroupKey[];
}

/** The status class of a refusal; the HTTP adapter maps it to 401, 403 or 404, git's route to a 401 challenge. */
export type RefusalClass = 'unauthorized' | 'forbidden' | 'not_found';

export interface AccessRefusal {
  readonly allowed: false;
  readonly status: RefusalClass;
  readonly reason: string;
}

export type AccessDecision = AccessGrant | AccessRefusal;

const refuse = (status: RefusalClass, reason: string): AccessRefusal => ({ allowed: false, status, reason });

/** How a token is given on each route: named in refusals so the user knows what to send. */
const CREDENTIAL: Record<AccessOperation, string> = {
  read: 'a Client-Token',
  write: 'a Client-Token',
  clone: 'a token (as the password)',
};

export interface AccessPolicyOptions {
  /**
   * `serve --hide-private`: private repositories are hidden from callers who hold no token of them.
   * A request naming one by its path without a valid token of its own, and a refusal about one, are
   * answered as a repository that does not exist, word for word, so no route tells such a caller
   * whether the name is taken; the listing leaves them out (visibleRecords). Off by default: the
   * seed lists everything.
   */
  readonly hidePrivate?: boolean;
}

export class AccessPolicy {
  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly tokens: TokenService,
    private readonly options: AccessPolicyOptions = {},
  ) {}

  /** The decision for one request. Faults (a repository that cannot be read) are thrown, not refused. */
  async decide(request: AccessRequest): Promise<AccessDecision> {
    let decision: AccessDecision;
    try {
      decision = await this.decideOrThrow(request);
    } catch (error) {
      if (!(
        error instanceof ServiceError &&
        (error.code === ErrorCode.Unauthorized ||
          error.code === ErrorCode.Forbidden ||
          error.code === ErrorCode.NotFound)
      ))
        throw error;
      decision = refuse(error.code, error.message);
    }
    if (
      decision.allowed ||
      !this.options.hidePrivate ||
      decision.status === 'not_found' ||
      request.account === undefined ||
      request.repository === undefined
    )
      return decision;
    if (!(await this.isHidden(request.account, request.repository))) return decision;
    const unknown = unknownRepository(request.account, request.repository);
    return refuse('not_found', unknown.message);
  }

  /** Whether a refused caller must not learn the repository exists: it is private, or its settings cannot be read. */
  private async isHidden(account: string, name: string): Promise<boolean> {
    const repository = this.registry.find(account, name);
    return repository !== undefined && (await isPrivate(repository));
  }

  /**
   * Whether a caller presenting `presented` (or nothing) may learn that the repository exists:
   * always, but under --hide-private, where it must be public or the token a valid one of its own.
   */
  async isVisible(repository: GitRepository, presented: string | undefined): Promise<boolean> {
    if (!this.options.hidePrivate) return true;
    if (presented !== undefined) {
      let token: TokenRecord | undefined;
      try {
        token = this.tokens.authenticate(presented);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
      }
      if (token && tokenBelongsTo(token, repository)) return true;
    }
    return !(await isPrivate(repository));
  }

  /** The grant, or a ServiceError with the refusal's class and reason: for adapters that answer errors by throwing. */
  async require(request: AccessRequest): Promise<AccessGrant> {
    const decision = await this.decide(request);
    if (!decision.allowed) throw new ServiceError(decision.status, decision.reason);
    return decision;
  }

  private async decideOrThrow(request: AccessRequest): Promise<AccessDecision> {
    const { operation } = request;
    // The token file and the head are trusted unread while their watches are quiet: first let
    // every watch event queued before this request arrived be handed over (changeWatch.ts).
    await afterQueuedWatchEvents();
    if (request.account === undefined || request.repository === undefined) {
      if (!request.token) return refuse('unauthorized', `${request.what} needs a Client-Token header`);
      const token = this.tokens.authenticate(request.token);
      const repository = tokenRepository(this.registry, token);
      return this.withToken(operation, repository, token, request.token);
    }
    const repository = requireRepository(this.registry, request.account, request.repository);
    if (this.options.hidePrivate && !(await this.isVisible(repository, request.token)))
      return refuse('not_found', unknownRepository(request.account, request.repository).message);
    if (request.token) {
      const token = this.tokens.authenticate(request.token);
      // A replica's token clones every repository, and does nothing else.
      if (token.kind === 'replication' && operation === 'clone')
        return { allowed: true, repository, head: repository.head() };
      if (!tokenBelongsTo(token, repository))
        return refuse(
          'forbidden',
          `the ${operation === 'clone' ? 'token' : 'Client-Token'} is not a token of ${repository.fullName}`,
        );
      return this.withToken(operation, repository, token, request.token);
    }
    const head = repository.head();
    // A clone reads the settings alone: it need not wait for every key to be parsed, nor fail on a broken key file.
    const settings =
      operation === 'clone'
        ? (await readSettings(repository, head)).settings
        : request.settingsOnly
          ? await settingsWithoutSnapshot(repository, head)
          : await settingsAt(repository, head);
    if (operation === 'write') {
      if (!settings.tokenFreePush)
        return refuse('forbidden', `repository ${repository.fullName} does not allow push without a Client-Token`);
      return { allowed: true, repository, head };
    }
    if (settings.isPrivate)
      return refuse(
        'unauthorized',
        `repository ${repository.fullName} is private: reading it needs ${CREDENTIAL[operation]} of its own`,
      );
    if (!settings.tokenFreePull)
      return refuse(
        'forbidden',
        `repository ${repository.fullName} does not allow reads without ${CREDENTIAL[operation]}`,
      );
    return { allowed: true, repository, head };
  }

  private withToken(
    operation: AccessOperation,
    repository: GitRepository,
    token: TokenRecord,
    presented: string,
  ): AccessDecision {
    // No rule can widen a read-only token.
    if (operation === 'write' && token.readOnly) {
      return refuse(
        'forbidden',
        `token ${token.label} of ${repository.fullName} is read-only: it cannot push, revert or restore`,
      );
    }
    return { allowed: true, repository, head: repository.head(), token, groupKeys: tokenGroupKeys(token, presented) };
  }
}

/** Whether the repository is private (its head's settings; settings that cannot be read count as private). */
async function isPrivate(repository: GitRepository): Promise<boolean> {
  try {
    return (await settingsWithoutSnapshot(repository, repository.head())).isPrivate;
  } catch {
    return true;
  }
}

/**
 * The listing a caller sees under --hide-private: every public repository, and a private one only
 * when the caller's token is one of its own (bound to its folder's exact spelling, as tokenBelongsTo).
 */
export function visibleRecords(
  records: readonly RepositoryRecord[],
  token: TokenRecord | undefined,
): RepositoryRecord[] {
  const mine = (record: RepositoryRecord) =>
    token !== undefined && token.account === record.account && token.repository === record.name;
  return records.filter((record) => !record.isPrivate || mine(record));
}
