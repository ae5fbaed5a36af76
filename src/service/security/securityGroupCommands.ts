/**
 * Security group commands: create, list, change the password, delete. Each change is
 * one commit of the repository, made like every write (see write/commit.ts).
 */
import type { KeyRecord, FileRecord, SecurityGroup } from '../../domain/model.js';
import { keyId } from '../../domain/names.js';
import { fileEntryId } from '../../layout/snapshot.js';
import { findGroup, groupId, groupNameProblem, passwordProblem } from '../../domain/securityGroups.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { ServiceError } from '../errors.js';
import { KeyRing } from './keyRing.js';
import { OpenedState, sealChanges } from './unsealing.js';
import { commitChange } from '../write/commit.js';
import { newGroup, unlockWithPassword, type GroupKey } from './sealing.js';

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

function requireSecurity(base: Snapshot, repository: GitRepository): void {
  if (!base.settings.securityEnabled) {
    throw new ServiceError(
      'forbidden',
      `repository ${repository.fullName} has security groups off (it was created with --no-security)`,
    );
  }
}

function requireGroup(base: Snapshot, repository: GitRepository, name: string): SecurityGroup {
  const group = findGroup(base.securityGroups, name);
  if (!group) throw new ServiceError('not_found', `repository ${repository.fullName} has no security group ${name}`);
  return group;
}

export async function createGroup(
  repository: GitRepository,
  name: string,
  password: string,
): Promise<{ name: string; commit: string }> {
  const problem = groupNameProblem(name);
  if (problem) throw new ServiceError('invalid_argument', problem);
  checkPassword(password);
  requireSecurity(await repository.headSnapshot(), repository);
  const { group } = await newGroup(name, password);
  const result = await commitChange(repository, (base) => {
    requireSecurity(base, repository);
    if (findGroup(base.securityGroups, name))
      throw new ServiceError('conflict', `repository ${repository.fullName} already has a security group ${name}`);
    return {
      ok: true,
      changes: { keys: new Map(), files: new Map(), securityGroups: [...base.securityGroups, group] },
      message: `Create security group ${name}\n`,
    };
  });
  return { name, commit: result.commitId };
}

function keysOf(base: Snapshot, group: string): KeyRecord[] {
  return [...base.keys()].filter(
    (key) => key.securityGroup !== undefined && groupId(key.securityGroup) === groupId(group),
  );
}

function filesOf(base: Snapshot, group: string): FileRecord[] {
  return [...base.files()].filter(
    (file) => file.securityGroup !== undefined && groupId(file.securityGroup) === groupId(group),
  );
}

export interface GroupInfo {
  readonly name: string;
  readonly keys: number;
  readonly files: number;
}

export async function listGroups(repository: GitRepository): Promise<GroupInfo[]> {
  const base = await repository.headSnapshot();
  return base.securityGroups.map((group) => ({
    name: group.name,
    keys: keysOf(base, group.name).length,
    files: filesOf(base, group.name).length,
  }));
}

/** The group's key with its password, or a forbidden error that never holds the password. */
async function unlockOrRefuse(group: SecurityGroup, password: string): Promise<GroupKey> {
  const key = await unlockWithPassword(group, password);
  if (!key) throw new ServiceError('forbidden', `the password of security group ${group.name} is wrong`);
  return key;
}

/**
 * A new password and a new data key: every value and file of the group is sealed again under
 * the new key, in one commit, so the old password opens nothing at the head any more.
 */
export async function changePassword(
  repository: GitRepository,
  name: string,
  current: string,
  next: string,
): Promise<{ name: string; commit: string }> {
  checkPassword(next);
  const head = await repository.headSnapshot();
  let oldKey = await unlockOrRefuse(requireGroup(head, repository, name), current);
  const { group: renewed, key: newKey } = await newGroup(requireGroup(head, repository, name).name, next);
  const result = await commitChange(repository, async (base) => {
    const group = requireGroup(base, repository, name);
    if (group.keyId !== oldKey.keyId) oldKey = await unlockOrRefuse(group, current);
    const state = new OpenedState(base, KeyRing.of(base.securityGroups, [oldKey], repository.fullName));
    const keys = new Map(keysOf(base, group.name).map((key) => [keyId(key.key), state.key(keyId(key.key))!] as const));
    const files = new Map(
      filesOf(base, group.name).map((file) => [fileEntryId(file), state.file(fileEntryId(file))!] as const),
    );
    const groups = base.securityGroups.map((g) => (g === group ? { ...renewed, name: group.name } : g));
    const sealed = sealChanges(
      { keys, files },
      state,
      KeyRing.of(groups, [{ ...newKey, group: group.name }], repository.fullName),
    );
    return {
      ok: true,
      changes: { ...sealed, securityGroups: groups },
      message: `Change the password of security group ${group.name}\n`,
    };
  });
  return { name: renewed.name, commit: result.commitId };
}

/** Deletes a group that no key or file uses. */
export async function deleteGroup(repository: GitRepository, name: string): Promise<{ name: string; commit: string }> {
  let deleted = name;
  const result = await commitChange(repository, (base) => {
    const group = requireGroup(base, repository, name);
    deleted = group.name;
    const users = [
      ...keysOf(base, group.name).map((key) => `key ${key.key}`),
      ...filesOf(base, group.name).map((file) => `file ${file.path}`),
    ];
    if (users.length > 0) {
      const more = users.length > 1 ? ` and ${users.length - 1} more` : '';
      throw new ServiceError(
        'conflict',
        `security group ${group.name} is used by ${users[0]}${more}: move them out of the group first`,
      );
    }
    return {
      ok: true,
      changes: { keys: new Map(), files: new Map(), securityGroups: base.securityGroups.filter((g) => g !== group) },
      message: `Delete security group ${group.name}\n`,
    };
  });
  return { name: deleted, commit: result.commitId };
}

/** The key of a group, opened with its password: for binding a token to the group. */
export async function groupKeyWithPassword(
  repository: GitRepository,
  name: string,
  password: string,
): Promise<GroupKey> {
  const base = await repository.headSnapshot();
  requireSecurity(base, repository);
  return unlockOrRefuse(requireGroup(base, repository, name), password);
}
