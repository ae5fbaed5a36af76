/**
 * What a primary offers its replicas: the folder it serves (identity and generation, see
 * folderIdentity.ts), every repository with its head and a digest of all its branches and tags,
 * every client token record and every admin token record (hashes only: a token itself is never
 * stored anywhere), with a digest of each record set so that a replica and the change feed can
 * compare them without sending them.
 *
 * To a member of an HA cluster only (a request with the cluster's token, see `forPeer`), the
 * state also carries the webhooks with the key their secrets are sealed under and the delivered
 * marks, so that a member elected leader delivers what its leader had not. A read replica never
 * receives them: whoever holds the key opens every hook secret, and a replication token is handed
 * to more hands than the cluster's own (a replica does not deliver, and a promoted replica has no
 * hooks until they are added again).
 *
 * Settings live in each repository's `repository.yaml`, so git carries them; tokens and webhooks
 * are the only state outside git.
 */
import { createHash } from 'node:crypto';
import type { TokenService } from '../admin/tokens.js';
import type { RepositoryLocation, RepositoryRegistry } from '../../disk/registry.js';
import type { TokenRecord } from '../../disk/records/tokenStore.js';
import type { AdminTokenRecord, AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { FolderIdentity } from '../../disk/records/folderIdentity.js';
import type { WebhookRecords, WebhookStore } from '../../disk/records/webhookStore.js';

export interface ReplicatedRepository {
  readonly account: string;
  readonly name: string;
  /** The commit of `refs/heads/main`; '' when it cannot be read (a repository being created by plain git). */
  readonly head: string;
  /** A digest of every branch and tag (GitRepository.refsDigest); '' when the head is ''. */
  readonly refs: string;
}

export interface ReplicationState {
  /** The folder this state is of: a replica follows one folder, and no lower generation. */
  readonly origin: FolderIdentity;
  readonly repositories: readonly ReplicatedRepository[];
  readonly tokens: readonly TokenRecord[];
  readonly tokensDigest: string;
  readonly adminTokens: readonly AdminTokenRecord[];
  readonly adminTokensDigest: string;
  /** To an HA member only (see `forPeer`); absent from a primary of an older version. */
  readonly webhooks?: WebhookRecords;
  readonly webhooksDigest?: string;
}

/** What a replica holds, and what the feed compares: each repository's refs digest, the record sets' digests, the folder followed. */
export interface HeldState {
  readonly refs: Readonly<Record<string, string>>;
  readonly tokensDigest: string;
  readonly adminTokensDigest: string;
  /** Compared for an HA member only (see `forPeer`): absent, or from a read replica, it is not. */
  readonly webhooksDigest?: string;
  /** The primary folder the replica follows; undefined before it followed any. */
  readonly origin?: FolderIdentity;
}

/** Where a state's parts are read from: the primary's folder and records. */
export interface StateSource {
  readonly registry: RepositoryRegistry;
  readonly tokens: TokenService;
  readonly adminTokens: AdminTokenStore;
  readonly webhooks: WebhookStore;
  /** The folder's identity and generation as now (read from disk at most once a second, see origin.ts). */
  origin(): FolderIdentity;
}

/**
 * Largest number of repositories a state or a feed request may name (bounded work per request): a
 * primary holding more refuses to be replicated, and a replica refuses a state naming more.
 */
export const MAX_REPLICATED_REPOSITORIES = 10_000;

/** The feed's line meaning "still the same", sent once a second while a feed waits. */
export const HEARTBEAT_LINE = '{"same":true}';

const digests = new WeakMap<readonly object[], string>();

/** The digest of a record set; kept per array (the token store hands out one array per file version). */
export function recordsDigest(records: readonly TokenRecord[] | readonly AdminTokenRecord[]): string {
  let digest = digests.get(records);
  if (digest === undefined) {
    digest = createHash('sha256').update(JSON.stringify(records)).digest('hex');
    digests.set(records, digest);
  }
  return digest;
}

/** One repository's head and refs digest; '' for both when its head cannot be read (offered so, a replica neither fetches nor deletes it). */
function headOf(registry: RepositoryRegistry, location: RepositoryLocation): ReplicatedRepository {
  let head = '';
  let refs = '';
  try {
    const repository = registry.open(location);
    head = repository.head();
    refs = repository.refsDigest();
  } catch {
    head = '';
    refs = '';
  }
  return { account: location.account, name: location.name, head, refs };
}

/** The head and refs digest of every repository in a folder, by `account/name`. */
export function headsOf(
  registry: RepositoryRegistry,
  locations: readonly RepositoryLocation[] = registry.locations(),
): ReplicatedRepository[] {
  return locations.map((location) => headOf(registry, location));
}

/** The state now; `locations`, when given, is a recent listing of the folder (the feed's, see feedHub.ts). */
export function currentState(source: StateSource, locations?: readonly RepositoryLocation[]): ReplicationState {
  return stateOf(source, headsOf(source.registry, locations));
}

/**
 * The state now, its heads read yielding every slice of time: what a replica's state request
 * answers. A head or refs digest read over a second ago is read again from disk (changeWatch.ts's
 * recheck), so on a loaded machine, where opening thousands of repositories takes longer than
 * that, reading them all in one piece would redo that work at once (seen: 260 ms for 2,000).
 * `locations`, when given, is a recent listing of the folder (the feed's, see feedHub.ts).
 */
export async function currentStateInSlices(
  source: StateSource,
  locations: readonly RepositoryLocation[] = source.registry.locations(),
): Promise<ReplicationState> {
  const slices = new TimeSlices();
  const repositories: ReplicatedRepository[] = [];
  for (const location of locations) {
    await slices.pause();
    repositories.push(headOf(source.registry, location));
  }
  return stateOf(source, repositories);
}

/** The digest of the webhooks' records (hooks, key and marks). */
export function webhooksDigest(records: WebhookRecords): string {
  return createHash('sha256').update(JSON.stringify(records)).digest('hex');
}

function stateOf(source: StateSource, repositories: ReplicatedRepository[]): ReplicationState {
  const tokens = source.tokens.records();
  const adminTokens = source.adminTokens.all();
  const webhooks = source.webhooks.replicated();
  return {
    origin: source.origin(),
    repositories,
    tokens,
    tokensDigest: recordsDigest(tokens),
    adminTokens,
    adminTokensDigest: recordsDigest(adminTokens),
    webhooks,
    webhooksDigest: webhooksDigest(webhooks),
  };
}

/**
 * Who asks for the state: `member`, a node of this HA cluster (it presented the cluster's token),
 * or `replica`, any other holder of a replication token (a read replica, `--replica-of`).
 */
export type ReplicationPeer = 'member' | 'replica';

/** The state as `peer` receives it: a read replica's has no webhooks (no sealing key, no sealed secret, no marks). */
export function stateFor(state: ReplicationState, peer: ReplicationPeer): ReplicationState {
  if (peer === 'member') return state;
  const { webhooks: _webhooks, webhooksDigest: _webhooksDigest, ...rest } = state;
  return rest;
}

/** What `peer` holds, as compared with the state: a read replica's webhooks are not, since it receives none. */
export function heldBy(held: HeldState, peer: ReplicationPeer): HeldState {
  if (peer === 'member') return held;
  const { webhooksDigest: _webhooksDigest, ...rest } = held;
  return rest;
}

const sameOrigin = (a: FolderIdentity | undefined, b: FolderIdentity) =>
  a !== undefined && a.folder === b.folder && a.generation === b.generation;

/** Whether a state is still what a replica holds. */
export function sameAsHeld(state: ReplicationState, held: HeldState): boolean {
  if (state.tokensDigest !== held.tokensDigest || state.adminTokensDigest !== held.adminTokensDigest) return false;
  if (held.webhooksDigest !== undefined && state.webhooksDigest !== held.webhooksDigest) return false;
  if (!sameOrigin(held.origin, state.origin)) return false;
  const names = Object.keys(held.refs);
  if (names.length !== state.repositories.length) return false;
  return state.repositories.every((r) => held.refs[`${r.account}/${r.name}`] === r.refs);
}
