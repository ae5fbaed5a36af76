/**
 * Context group commands: create, add a member, remove a member, delete, list. Each
 * change is one commit of `context-groups.yaml`, made like every write (write/commit.ts), which refuses a
 * change that makes two values of a key conflict.
 */
import { isValidLevelName, WILDCARD } from '../../domain/context.js';
import {
  groupChangeProblem,
  MAX_CONTEXT_GROUPS,
  MAX_GROUP_MEMBERS,
  usesGroup,
  type ContextGroup,
} from '../../domain/contextGroups.js';
import { parseContext } from '../../domain/context.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { commitChange, type CommitPlan } from '../write/commit.js';
import { groupsInstead, heldToRequiredApprovals } from '../changes/requiredApproval.js';
import { ServiceError } from '../errors.js';

function levelOf(base: Snapshot, repository: GitRepository, level: string): { name: string; index: number } {
  const index = base.settings.levels.findIndex((l) => l.toLowerCase() === level.toLowerCase());
  if (index < 0)
    throw new ServiceError(
      'invalid_argument',
      `repository ${repository.fullName} has no context level ${level} (its levels: ${base.settings.levels.join(', ')})`,
    );
  return { name: base.settings.levels[index], index };
}

function checkItem(item: string, what: string): void {
  const parsed = parseContext(item, 1);
  if (!parsed.ok || parsed.context[0] === WILDCARD)
    throw new ServiceError(
      'invalid_argument',
      `${what} ${JSON.stringify(item)} is not a context item: letters and digits joined by single '-', '.', '_' or '+'`,
    );
}

/**
 * A level, a group and a member as given, checked before the repository is looked up (and before
 * they become URL segments of the admin API), so a malformed one is refused alike on a folder and
 * through a server.
 */
export function checkGroupWords(level: string, group: string, member?: string): void {
  if (!isValidLevelName(level))
    throw new ServiceError(
      'invalid_argument',
      `context level ${JSON.stringify(level)} must be letters and digits joined by single '-', '.' or '_'`,
    );
  checkItem(group, 'the group name');
  if (member !== undefined) checkItem(member, 'the member');
}

function findGroup(base: Snapshot, level: string, name: string): ContextGroup | undefined {
  return base.contextGroups.find(
    (g) => g.level.toLowerCase() === level.toLowerCase() && g.name.toLowerCase() === name.toLowerCase(),
  );
}

function requireGroups(base: Snapshot, repository: GitRepository): void {
  if (!base.settings.contextGroupsEnabled) {
    throw new ServiceError(
      'forbidden',
      `repository ${repository.fullName} has context groups off: turn them on with cfghub repo set ${repository.fullName} --context-groups`,
    );
  }
}

async function change(
  repository: GitRepository,
  message: string,
  plan: (base: Snapshot) => readonly ContextGroup[],
): Promise<{ commit: string }> {
  const result = await commitChange(repository, (base) => {
    requireGroups(base, repository);
    const planned: CommitPlan = {
      ok: true,
      changes: { keys: new Map(), files: new Map(), contextGroups: plan(base) },
      message: `${message}\n`,
    };
    // A group's members decide which contexts the values stored at its name reach.
    return heldToRequiredApprovals(repository, base, planned, groupsInstead(repository.fullName));
  });
  return { commit: result.commitId };
}

export function createContextGroup(
  repository: GitRepository,
  level: string,
  name: string,
  members: readonly string[],
): Promise<{ commit: string }> {
  checkItem(name, 'the group name');
  for (const member of members) checkItem(member, 'the member');
  if (members.length > MAX_GROUP_MEMBERS)
    throw new ServiceError('invalid_argument', `a group has at most ${MAX_GROUP_MEMBERS} members`);
  return change(repository, `Create context group ${name}`, (base) => {
    const at = levelOf(base, repository, level);
    if (findGroup(base, at.name, name))
      throw new ServiceError('conflict', `level ${at.name} already has a group ${name}`);
    if (base.contextGroups.length >= MAX_CONTEXT_GROUPS)
      throw new ServiceError('invalid_argument', `a repository has at most ${MAX_CONTEXT_GROUPS} context groups`);
    for (const member of members) {
      const problem = groupChangeProblem(base.contextGroups, at.name, name, member);
      if (problem) throw new ServiceError('invalid_argument', problem);
    }
    const unique = [...new Map(members.map((m) => [m.toLowerCase(), m])).values()];
    return [...base.contextGroups, { level: at.name, name, members: unique }];
  });
}

export function addGroupMember(
  repository: GitRepository,
  level: string,
  name: string,
  member: string,
): Promise<{ commit: string }> {
  checkItem(member, 'the member');
  return change(repository, `Add ${member} to context group ${name}`, (base) => {
    const at = levelOf(base, repository, level);
    const group = findGroup(base, at.name, name);
    if (!group) throw new ServiceError('not_found', `level ${at.name} has no context group ${name}`);
    const problem = groupChangeProblem(base.contextGroups, at.name, group.name, member);
    if (problem) throw new ServiceError('invalid_argument', problem);
    if (group.members.some((m) => m.toLowerCase() === member.toLowerCase()))
      throw new ServiceError('conflict', `${member} is already a member of ${group.name}`);
    if (group.members.length >= MAX_GROUP_MEMBERS)
      throw new ServiceError('invalid_argument', `a group has at most ${MAX_GROUP_MEMBERS} members`);
    return base.contextGroups.map((g) => (g === group ? { ...g, members: [...g.members, member] } : g));
  });
}

export function removeGroupMember(
  repository: GitRepository,
  level: string,
  name: string,
  member: string,
): Promise<{ commit: string }> {
  return change(repository, `Remove ${member} from context group ${name}`, (base) => {
    const at = levelOf(base, repository, level);
    const group = findGroup(base, at.name, name);
    if (!group) throw new ServiceError('not_found', `level ${at.name} has no context group ${name}`);
    if (!group.members.some((m) => m.toLowerCase() === member.toLowerCase()))
      throw new ServiceError('not_found', `${member} is not a member of ${group.name}`);
    return base.contextGroups.map((g) =>
      g === group ? { ...g, members: g.members.filter((m) => m.toLowerCase() !== member.toLowerCase()) } : g,
    );
  });
}

/** Deletes a group no value or file names; else refused naming one user. */
export function deleteContextGroup(
  repository: GitRepository,
  level: string,
  name: string,
): Promise<{ commit: string }> {
  return change(repository, `Delete context group ${name}`, (base) => {
    const at = levelOf(base, repository, level);
    const group = findGroup(base, at.name, name);
    if (!group) throw new ServiceError('not_found', `level ${at.name} has no context group ${name}`);
    for (const key of base.keys()) {
      const value = key.values.find((v) => usesGroup(v.context, at.index, group.name));
      if (value)
        throw new ServiceError(
          'conflict',
          `context group ${group.name} is used by key ${key.key} at ${value.context.join(';')}: move or delete its values first`,
        );
    }
    for (const file of base.files()) {
      if (usesGroup(file.context, at.index, group.name))
        throw new ServiceError(
          'conflict',
          `context group ${group.name} is used by file ${file.path} at ${file.context.join(';')}: move or delete it first`,
        );
    }
    return base.contextGroups.filter((g) => g !== group);
  });
}

export async function listContextGroups(repository: GitRepository): Promise<readonly ContextGroup[]> {
  return (await repository.headSnapshot()).contextGroups;
}
