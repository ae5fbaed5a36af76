/**
 * The CLI against a remote server: the same Administration as on a folder, done through the
 * server's admin API with an admin token (the one admin client, src/client/admin.ts). The server runs
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
import type { SchemaDocument } from '../../domain/schemas.js';
import type { SchemasChange } from '../../service/schemas/schemaCommands.js';
import type { DryRunResult } from '../../service/write/dryRun.js';
import { RemoteAccessAdministration } from './accessAdminClient.js';

export class RemoteAdministration extends RemoteAccessAdministration implements Administration {
  createRepository(input: NewRepository): Promise<RepositoryRecord> {
    const { levels, ...rest } = input;
    return this.call((c) => c.createRepository({ ...rest, context: [...levels] }));
  }

  listRepositories(): Promise<{ records: RepositoryRecord[]; unreadable: UnreadableRecord[] }> {
    return this.call((c) => c.listRepositories());
  }

  changeSettings(fullName: string, change: SettingsChange): Promise<RepositoryRecord | UnreadableRecord> {
    const { requiredApprovals, ...rest } = change;
    return this.call((c) =>
      c.changeSettings(fullName, {
        ...rest,
        ...(requiredApprovals ? { requiredApprovals: requiredApprovals.map((rule) => ({ ...rule })) } : {}),
      }),
    );
  }

  deleteRepository(fullName: string): Promise<{ repository: string; revokedTokens: number }> {
    return this.call((c) => c.deleteRepository(fullName));
  }

  repositoryRecord(fullName: string): Promise<RepositoryRecord | UnreadableRecord> {
    return this.call((c) => c.repository(fullName));
  }

  createToken(fullName: string, input: NewClientToken): Promise<{ token: string; label: string; repository: string }> {
    return this.call((c) => c.createToken(fullName, input));
  }

  listTokens(fullName: string): Promise<TokenInfo[]> {
    return this.call((c) => c.listTokens(fullName));
  }

  revokeToken(fullName: string, label: string): Promise<{ label: string; repository: string }> {
    return this.call((c) => c.revokeToken(fullName, label));
  }

  createTag(fullName: string, tag: string, comment?: string): Promise<TagRecord> {
    checkTagName(tag);
    return this.call((c) => c.createTag(fullName, { name: tag, ...(comment === undefined ? {} : { comment }) }));
  }

  listTags(fullName: string): Promise<TagRecord[]> {
    return this.call((c) => c.listTags(fullName));
  }

  deleteTag(fullName: string, tag: string): Promise<{ tag: string; repository: string }> {
    checkTagName(tag); // before it becomes a URL segment, where `..` would not survive
    return this.call((c) => c.deleteTag(fullName, tag));
  }

  createGroup(fullName: string, group: string, password: string): Promise<{ name: string; commit: string }> {
    return this.call((c) => c.createGroup(fullName, { name: group, password }));
  }

  listGroups(fullName: string): Promise<GroupInfo[]> {
    return this.call((c) => c.listGroups(fullName));
  }

  changePassword(
    fullName: string,
    group: string,
    current: string,
    next: string,
  ): Promise<{ name: string; commit: string }> {
    return this.call((c) => c.changePassword(fullName, group, { current, new: next }));
  }

  deleteGroup(fullName: string, group: string): Promise<{ name: string; commit: string; repository: string }> {
    return this.call((c) => c.deleteGroup(fullName, group));
  }

  revert(
    fullName: string,
    commit: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call((c) =>
      c.revert(
        fullName,
        { commit, ...(rollback.comment === undefined ? {} : { comment: rollback.comment }) },
        rollback.applicationName,
      ),
    );
  }

  restore(
    fullName: string,
    to: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
    return this.call((c) => c.restore(fullName, restoreBodyOf(to, rollback), rollback.applicationName));
  }

  previewRevert(
    fullName: string,
    commit: string,
    rollback: Rollback,
    contexts: readonly string[] = [],
  ): Promise<DryRunResult> {
    return this.call((c) =>
      c.previewRevert(
        fullName,
        { commit, ...(rollback.comment === undefined ? {} : { comment: rollback.comment }) },
        contexts,
      ),
    ) as Promise<DryRunResult>;
  }

  previewRestore(
    fullName: string,
    to: string,
    rollback: Rollback,
    contexts: readonly string[] = [],
  ): Promise<DryRunResult> {
    return this.call((c) => c.previewRestore(fullName, restoreBodyOf(to, rollback), contexts)) as Promise<DryRunResult>;
  }

  async schemas(fullName: string): Promise<SchemaDocument> {
    return (await this.call((c) => c.schemas(fullName))).schemas;
  }

  setSchemas(
    fullName: string,
    schemas: SchemaDocument,
    change: { comment?: string; applicationName?: string },
  ): Promise<SchemasChange> {
    return this.call((c) =>
      c.setSchemas(fullName, { schemas, ...(change.comment !== undefined ? { comment: change.comment } : {}) }),
    );
  }

  previewSchemas(fullName: string, schemas: SchemaDocument): Promise<DryRunResult> {
    return this.call((c) => c.previewSchemas(fullName, { schemas })) as Promise<DryRunResult>;
  }
}

/** A restore's body for the admin API: the point, the comment, the group it opens with its password. */
function restoreBodyOf(to: string, rollback: Rollback) {
  return {
    to,
    ...(rollback.comment === undefined ? {} : { comment: rollback.comment }),
    ...(rollback.securityGroup === undefined
      ? {}
      : { securityGroup: rollback.securityGroup, password: rollback.password }),
  };
}
