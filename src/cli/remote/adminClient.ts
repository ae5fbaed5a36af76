/**
 * The CLI against a remote server: the same Administration as on a folder, done
 * through the server's admin API (src/http/routes/adminRoutes.ts) with an admin token. The server runs
 * the same operations, and its JSON errors are turned back into the same ServiceErrors, so a
 * command prints and exits alike both ways. Passwords go only in request bodies.
 */
import {
  checkTagName,
  type Administration,
  type NewClientToken,
  type Rollback,
} from '../../service/admin/administration.js';
import type { RepositoryRecord, UnreadableRecord } from '../../service/read/listing.js';
import type { NewRepository } from '../../service/admin/repositories.js';
import type { SettingsChange } from '../../service/admin/repositorySettings.js';
import type { GroupInfo } from '../../service/security/securityGroupCommands.js';
import type { TagRecord } from '../../service/admin/tags.js';
import type { TokenInfo } from '../../service/admin/tokens.js';
import { RemoteAccessAdministration } from './accessAdminClient.js';
import type { SchemaDocument } from '../../domain/schemas.js';
import type { SchemasChange } from '../../service/schemas/schemaCommands.js';
import { repoPath } from './adminApi.js';

export class RemoteAdministration extends RemoteAccessAdministration implements Administration {
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
    return this.call('POST', `${repoPath(fullName)}/tags`, {
      name: tag,
      ...(comment === undefined ? {} : { comment }),
    });
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

  changePassword(
    fullName: string,
    group: string,
    current: string,
    next: string,
  ): Promise<{ name: string; commit: string }> {
    return this.call('POST', `${repoPath(fullName)}/groups/${encodeURIComponent(group)}/password`, {
      current,
      new: next,
    });
  }

  deleteGroup(fullName: string, group: string): Promise<{ name: string; commit: string; repository: string }> {
    return this.call('DELETE', `${repoPath(fullName)}/groups/${encodeURIComponent(group)}`);
  }

  revert(
    fullName: string,
    commit: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call(
      'POST',
      `${repoPath(fullName)}/revert`,
      { commit, ...(rollback.comment === undefined ? {} : { comment: rollback.comment }) },
      applicationHeader(rollback),
    );
  }

  restore(
    fullName: string,
    to: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call(
      'POST',
      `${repoPath(fullName)}/restore`,
      {
        to,
        ...(rollback.comment === undefined ? {} : { comment: rollback.comment }),
        ...(rollback.securityGroup === undefined
          ? {}
          : { securityGroup: rollback.securityGroup, password: rollback.password }),
      },
      applicationHeader(rollback),
    );
  }

  async schemas(fullName: string): Promise<SchemaDocument> {
    return (await this.call<{ schemas: SchemaDocument }>('GET', `${repoPath(fullName)}/schemas`)).schemas;
  }

  setSchemas(
    fullName: string,
    schemas: SchemaDocument,
    change: { comment?: string; applicationName?: string },
  ): Promise<SchemasChange> {
    return this.call('POST', `${repoPath(fullName)}/schemas`, {
      schemas,
      ...(change.comment !== undefined ? { comment: change.comment } : {}),
    });
  }
}

function applicationHeader(rollback: Rollback): Record<string, string> {
  return rollback.applicationName ? { 'Application-Name': rollback.applicationName } : {};
}
