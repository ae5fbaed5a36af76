/**
 * What the CLI administers, as one interface: the CLI runs it on a repositories folder
 * (LocalAdministration) or against a server's admin API (src/cli/remote/adminClient.ts), and the admin
 * API runs LocalAdministration on the server's folder. One implementation of the rules, so both
 * ways validate and answer alike. Repositories are named `ACCOUNT/NAME`; every change to a
 * repository is a commit (or a tag) made by the operations of this folder.
 */
import type { RollbackCaller, RollbackResult } from '../history/revert.js';
import { parseIsoInstant } from '../../lib/dates.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { LocalAccessAdministration, type AccessAdministration } from './accessAdministration.js';
import { findRuleSet } from '../access/accessRuleSetCommands.js';
import { ServiceError } from '../errors.js';
import { listRepositories, repositoryRecord, type RepositoryRecord, type UnreadableRecord } from '../read/listing.js';
import { createRepository, type NewRepository } from './repositories.js';
import { deleteRepository } from './repositoryDeletion.js';
import { changeSettings, checkAlias, type SettingsChange } from './repositorySettings.js';
import { aliasIndexOf } from './aliasIndex.js';
import { KeyRing } from '../security/keyRing.js';
import { dryRunRestore, restore } from '../history/restore.js';
import { dryRunRevert, revert } from '../history/revert.js';
import {
  changePassword,
  createGroup,
  deleteGroup,
  groupKeyWithPassword,
  listGroups,
  type GroupInfo,
} from '../security/securityGroupCommands.js';
import { createTag, deleteTag, listTags, tagNameProblem, type TagRecord } from './tags.js';
import type { TokenInfo, TokenService } from './tokens.js';
import type { SchemaDocument } from '../../domain/schemas.js';
import { previewSchemas, readSchemas, setSchemas, type SchemasChange } from '../schemas/schemaCommands.js';
import type { DryRunResult } from '../write/dryRun.js';

export interface NewClientToken {
  readonly label?: string;
  /** ISO 8601 instant. */
  readonly expires?: string;
  readonly forceKeyPush?: boolean;
  /** The group the token unlocks on its own, with the group's password. */
  readonly securityGroup?: string;
  readonly password?: string;
  /** The token may read but never push, revert or restore. */
  readonly readOnly?: boolean;
  /** The access rule set the token is assigned to; it must exist. */
  readonly ruleSet?: string;
}

export interface Rollback {
  readonly comment?: string;
  /** The commits' `Application-Name`. */
  readonly applicationName?: string;
  /** A security group whose secured keys and files a restore may change, and its password. */
  readonly securityGroup?: string;
  readonly password?: string;
}

/**
 * Results name the repository as stored (its case), for the messages the CLI prints. Rule sets,
 * context groups and replication tokens are in AccessAdministration.
 */
export interface Administration extends AccessAdministration {
  createRepository(input: NewRepository): Promise<RepositoryRecord>;
  /** The readable repositories' records, and apart the ones that cannot be read, with why. */
  listRepositories(): Promise<{ records: RepositoryRecord[]; unreadable: UnreadableRecord[] }>;
  /** Changes settings in one commit; answers the new record. */
  changeSettings(fullName: string, change: SettingsChange): Promise<RepositoryRecord | UnreadableRecord>;
  /** Moves the repository aside (see repositoryDeletion.ts) and revokes its tokens. */
  deleteRepository(fullName: string): Promise<{ repository: string; revokedTokens: number }>;
  /** One repository's record; not_found when there is none (the CLI asks before it reads a password). */
  repositoryRecord(fullName: string): Promise<RepositoryRecord | UnreadableRecord>;
  createToken(fullName: string, input: NewClientToken): Promise<{ token: string; label: string; repository: string }>;
  listTokens(fullName: string): Promise<TokenInfo[]>;
  revokeToken(fullName: string, label: string): Promise<{ label: string; repository: string }>;
  createTag(fullName: string, tag: string, comment?: string): Promise<TagRecord>;
  listTags(fullName: string): Promise<TagRecord[]>;
  deleteTag(fullName: string, tag: string): Promise<{ tag: string; repository: string }>;
  createGroup(fullName: string, group: string, password: string): Promise<{ name: string; commit: string }>;
  listGroups(fullName: string): Promise<GroupInfo[]>;
  changePassword(
    fullName: string,
    group: string,
    current: string,
    next: string,
  ): Promise<{ name: string; commit: string }>;
  deleteGroup(fullName: string, group: string): Promise<{ name: string; commit: string; repository: string }>;
  revert(
    fullName: string,
    commit: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: RollbackResult['kind'] }>;
  restore(
    fullName: string,
    to: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: RollbackResult['kind'] }>;
  /** What revert would do (a dry run): the refusal, or the commit and what each context would read after it; `contexts` are weighed besides the named ones. */
  previewRevert(
    fullName: string,
    commit: string,
    rollback: Rollback,
    contexts?: readonly string[],
  ): Promise<DryRunResult>;
  /** What restore would do (a dry run), as previewRevert. */
  previewRestore(fullName: string, to: string, rollback: Rollback, contexts?: readonly string[]): Promise<DryRunResult>;
  /** The repository's schemas document (docs/schemas.md). */
  schemas(fullName: string): Promise<SchemaDocument>;
  /** Replaces the schemas document in one commit; refused (conflict) when existing content breaks it. */
  setSchemas(
    fullName: string,
    schemas: SchemaDocument,
    change: { comment?: string; applicationName?: string },
  ): Promise<SchemasChange>;
  /** What setSchemas would do (a dry run): the refusal listing what breaks, or the commit it would make. */
  previewSchemas(fullName: string, schemas: SchemaDocument): Promise<DryRunResult>;
}

/** An ISO 8601 instant (`YYYY-MM-DDTHH:MM:SSZ` or with `+hh:mm`); `what` names it in the error. */
export function parseExpiry(text: string, what = 'expires'): Date {
  const date = parseIsoInstant(text);
  if (!date)
    throw new ServiceError(
      'invalid_argument',
      `${what} must be an ISO 8601 date like 2030-01-31T00:00:00Z, got ${JSON.stringify(text)}`,
    );
  return date;
}

/** A tag name checked before the repository is looked up, so a bad one is invalid whatever the repository. */
export function checkTagName(tag: string): void {
  const problem = tagNameProblem(tag);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

/** A restore's caller from the command line or the admin API: the group it opens with the group's password, if any. */
async function restoreCaller(repository: GitRepository, rollback: Rollback): Promise<RollbackCaller> {
  let ring = KeyRing.EMPTY;
  if (rollback.securityGroup !== undefined) {
    const key = await groupKeyWithPassword(repository, rollback.securityGroup, rollback.password ?? '');
    ring = KeyRing.of((await repository.headSnapshot()).securityGroups, [key], repository.fullName);
  }
  return { comment: rollback.comment, applicationName: rollback.applicationName, ring };
}

export class LocalAdministration extends LocalAccessAdministration implements Administration {
  constructor(
    registry: RepositoryRegistry,
    tokens: TokenService,
    /** Told of each repository the listing cannot read. */
    private readonly onUnreadable: (repository: string, error: unknown) => void = () => undefined,
  ) {
    super(registry, tokens);
  }

  async createRepository(input: NewRepository): Promise<RepositoryRecord> {
    const repository = await createRepository(this.registry, input);
    const record = await repositoryRecord(repository, this.tokens);
    if ('error' in record)
      throw new ServiceError('unavailable', `repository ${repository.fullName} was created but cannot be read back`);
    return record;
  }

  async repositoryRecord(fullName: string): Promise<RepositoryRecord | UnreadableRecord> {
    return repositoryRecord(this.repository(fullName), this.tokens);
  }

  async changeSettings(fullName: string, change: SettingsChange): Promise<RepositoryRecord | UnreadableRecord> {
    const repository = this.repository(fullName);
    const { alias } = change;
    if (typeof alias === 'string') {
      checkAlias(alias);
      await aliasIndexOf(this.registry).claim(alias, repository, () => changeSettings(repository, change));
    } else await changeSettings(repository, change);
    return repositoryRecord(repository, this.tokens);
  }

  deleteRepository(fullName: string): Promise<{ repository: string; revokedTokens: number }> {
    return deleteRepository(this.registry, this.tokens, this.repository(fullName));
  }

  async listRepositories(): Promise<{ records: RepositoryRecord[]; unreadable: UnreadableRecord[] }> {
    const { records, unreadable } = await listRepositories(this.registry, this.tokens, this.onUnreadable);
    return { records, unreadable };
  }

  async createToken(
    fullName: string,
    input: NewClientToken,
  ): Promise<{ token: string; label: string; repository: string }> {
    const expires = input.expires === undefined ? undefined : parseExpiry(input.expires);
    const repository = this.repository(fullName);
    const groupKeys = [];
    if (input.securityGroup !== undefined) {
      if (!input.password)
        throw new ServiceError('invalid_argument', `the password of security group ${input.securityGroup} is required`);
      groupKeys.push(await groupKeyWithPassword(repository, input.securityGroup, input.password));
    }
    let ruleSet: string | undefined;
    if (input.ruleSet !== undefined) {
      const set = findRuleSet(await repository.headSnapshot(), input.ruleSet);
      if (!set)
        throw new ServiceError(
          'not_found',
          `repository ${repository.fullName} has no rule set ${input.ruleSet}: create it with cfghub rules create`,
        );
      ruleSet = set.name;
    }
    const created = await this.tokens.create(repository, {
      label: input.label,
      expires,
      forceKeyPush: Boolean(input.forceKeyPush),
      groupKeys,
      readOnly: Boolean(input.readOnly),
      ruleSet,
    });
    return { ...created, repository: repository.fullName };
  }

  async listTokens(fullName: string): Promise<TokenInfo[]> {
    return this.tokens.list(this.repository(fullName));
  }

  async revokeToken(fullName: string, label: string): Promise<{ label: string; repository: string }> {
    const repository = this.repository(fullName);
    await this.tokens.revoke(repository, label);
    return { label, repository: repository.fullName };
  }

  async createTag(fullName: string, tag: string, comment = ''): Promise<TagRecord> {
    checkTagName(tag);
    return createTag(this.repository(fullName), tag, comment);
  }

  async listTags(fullName: string): Promise<TagRecord[]> {
    return listTags(this.repository(fullName));
  }

  async deleteTag(fullName: string, tag: string): Promise<{ tag: string; repository: string }> {
    checkTagName(tag);
    const repository = this.repository(fullName);
    return { tag: await deleteTag(repository, tag), repository: repository.fullName };
  }

  createGroup(fullName: string, group: string, password: string): Promise<{ name: string; commit: string }> {
    return createGroup(this.repository(fullName), group, password);
  }

  listGroups(fullName: string): Promise<GroupInfo[]> {
    return listGroups(this.repository(fullName));
  }

  changePassword(
    fullName: string,
    group: string,
    current: string,
    next: string,
  ): Promise<{ name: string; commit: string }> {
    return changePassword(this.repository(fullName), group, current, next);
  }

  async deleteGroup(fullName: string, group: string): Promise<{ name: string; commit: string; repository: string }> {
    const repository = this.repository(fullName);
    return { ...(await deleteGroup(repository, group)), repository: repository.fullName };
  }

  async revert(
    fullName: string,
    commit: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: RollbackResult['kind'] }> {
    const result = await revert(this.repository(fullName), commit, rollback);
    return { commit: result.commitId, outcome: result.kind };
  }

  async restore(
    fullName: string,
    to: string,
    rollback: Rollback,
  ): Promise<{ commit: string; outcome: RollbackResult['kind'] }> {
    const repository = this.repository(fullName);
    const result = await restore(repository, to, await restoreCaller(repository, rollback));
    return { commit: result.commitId, outcome: result.kind };
  }

  previewRevert(
    fullName: string,
    commit: string,
    rollback: Rollback,
    contexts: readonly string[] = [],
  ): Promise<DryRunResult> {
    return dryRunRevert(this.repository(fullName), commit, rollback, contexts);
  }

  async previewRestore(
    fullName: string,
    to: string,
    rollback: Rollback,
    contexts: readonly string[] = [],
  ): Promise<DryRunResult> {
    const repository = this.repository(fullName);
    return dryRunRestore(repository, to, await restoreCaller(repository, rollback), contexts);
  }

  schemas(fullName: string): Promise<SchemaDocument> {
    return readSchemas(this.repository(fullName));
  }

  setSchemas(
    fullName: string,
    schemas: SchemaDocument,
    change: { comment?: string; applicationName?: string },
  ): Promise<SchemasChange> {
    return setSchemas(this.repository(fullName), schemas, change);
  }

  previewSchemas(fullName: string, schemas: SchemaDocument): Promise<DryRunResult> {
    return previewSchemas(this.repository(fullName), schemas);
  }
}
