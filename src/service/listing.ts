/**
 * The repository listing (`GET /rest/info/all`, `cfghub repo list`): one record per repository,
 * computed from its current head, sorted by account then name (lower case, by code point).
 * A repository that cannot be read is reported to `onUnreadable` and left out.
 */
import type { RepositoryRegistry } from '../store/registry.js';
import type { TokenService } from './tokens.js';

export interface RepositoryRecord {
  readonly account: string;
  readonly name: string;
  readonly isPrivate: boolean;
  readonly isPersonal: boolean;
  readonly description?: string;
  readonly created: string;
  readonly accessControlsEnabled: boolean;
  readonly vdtEnabled: boolean;
  readonly securityEnabled: boolean;
  readonly contextGroupsEnabled: boolean;
  readonly keyCount: number;
  readonly valueCount: number;
  readonly userCount: number;
  readonly context: readonly string[];
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface Listing {
  readonly records: RepositoryRecord[];
  /**
   * Names every repository with its head and user count: equal fingerprints mean equal records,
   * so an adapter may reuse what it made of an earlier listing.
   */
  readonly fingerprint: string;
}

export async function listRepositories(
  registry: RepositoryRegistry,
  tokens: TokenService,
  onUnreadable: (repository: string, error: unknown) => void,
): Promise<Listing> {
  const userCounts = tokens.activeCounts();
  const records: RepositoryRecord[] = [];
  const fingerprint: string[] = [];
  for (const location of registry.locations()) {
    const repository = registry.open(location);
    try {
      const snapshot = await repository.headSnapshot();
      fingerprint.push(`${location.gitdir}@${snapshot.commitId}:${userCounts.get(repository.fullName.toLowerCase()) ?? 0}`);
      const s = snapshot.settings;
      records.push({
        account: repository.account,
        name: repository.name,
        isPrivate: s.isPrivate,
        isPersonal: s.isPersonal,
        ...(s.description ? { description: s.description } : {}),
        created: s.created,
        accessControlsEnabled: s.accessControlsEnabled,
        vdtEnabled: s.vdtEnabled,
        securityEnabled: s.securityEnabled,
        contextGroupsEnabled: s.contextGroupsEnabled,
        keyCount: snapshot.keyCount,
        valueCount: snapshot.valueCount,
        userCount: userCounts.get(repository.fullName.toLowerCase()) ?? 0,
        context: s.levels,
      });
    } catch (error) {
      onUnreadable(repository.fullName, error);
    }
  }
  records.sort(
    (a, b) => byCodePoint(a.account.toLowerCase(), b.account.toLowerCase()) || byCodePoint(a.name.toLowerCase(), b.name.toLowerCase()),
  );
  return { records, fingerprint: fingerprint.join('\n') };
}
