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

export async function listRepositories(
  registry: RepositoryRegistry,
  tokens: TokenService,
  onUnreadable: (repository: string, error: unknown) => void,
): Promise<RepositoryRecord[]> {
  const userCounts = tokens.activeCounts();
  const records: RepositoryRecord[] = [];
  for (const location of registry.locations()) {
    const repository = registry.open(location);
    try {
      const snapshot = await repository.headSnapshot();
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
  return records.sort(
    (a, b) => byCodePoint(a.account.toLowerCase(), b.account.toLowerCase()) || byCodePoint(a.name.toLowerCase(), b.name.toLowerCase()),
  );
}
