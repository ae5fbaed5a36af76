/**
 * Rules for security groups, pure: group names, password lengths, and finding a group
 * by name (names are matched without regard to case, like keys).
 */
import type { SecurityGroup } from './model.js';
import { nameProblem } from './names.js';

/** How a sealed value begins (see service/security/sealing.ts). */
export const SEALED_PREFIX = 'enc:v1:';
/** The first line of a secured file's blob in git. A file in no group may not begin with it. */
export const ENCRYPTED_FILE_MARK = 'cfghub-encrypted-file: v1';

export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 64;

/** Why a password cannot be a group's password, or undefined. Never echoes the password. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD || length > MAX_PASSWORD)
    return `a security group password has ${MIN_PASSWORD} to ${MAX_PASSWORD} characters, this one has ${length}`;
  if (/[\u0000-\u001f\u007f]/.test(password)) return 'a security group password may not hold control characters';
  return undefined;
}

export function groupNameProblem(name: string): string | undefined {
  return nameProblem('security group name', name);
}

export function groupId(name: string): string {
  return name.toLowerCase();
}

export function findGroup(groups: readonly SecurityGroup[], name: string): SecurityGroup | undefined {
  const id = groupId(name);
  return groups.find((group) => groupId(group.name) === id);
}
