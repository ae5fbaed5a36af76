/**
 * Which security groups each push element's `password` is tried on: each try is a
 * slow key derivation (scrypt, about 0.1 s), so a push is bounded by tries, not by passwords.
 * A password is tried only on the groups its element can involve: the group the key or file has
 * at the base commit, and every group any element of the push names for the same key (by name,
 * without regard to case) or file path. Not on every group of the repository.
 */
import { normalizeFilePath } from '../../domain/filePath.js';
import { keyId } from '../../domain/names.js';
import type { PushRequest } from '../../domain/pushRequest.js';
import { groupId } from '../../domain/securityGroups.js';
import type { Snapshot } from '../../layout/snapshot.js';

/** Distinct (group, password) pairs one push may need to check. */
export const MAX_PUSH_DERIVATIONS = 16;

export interface PasswordAttempts {
  /** Per element, the (group, password) pairs to try; empty without a password. */
  readonly perElement: readonly (readonly { group: string; password: string }[])[];
  /** Distinct (group, password) pairs over the push: the derivations it may cost. */
  readonly derivations: number;
}

export function passwordAttempts(base: Snapshot, request: PushRequest): PasswordAttempts {
  const subjectOf = (index: number) => {
    const element = request.data[index];
    if (element.kind === 'key') return `key ${keyId(element.key)}`;
    const normalized = normalizeFilePath(element.file);
    return `file ${normalized.ok ? normalized.path : element.file}`;
  };
  const withPassword = request.data
    .map((element, index) => (element.password ? index : -1))
    .filter((index) => index >= 0);
  if (withPassword.length === 0) return { perElement: request.data.map(() => []), derivations: 0 };

  // Groups named anywhere in the push for each key or file path.
  const named = new Map<string, Set<string>>();
  request.data.forEach((element, index) => {
    if (!element.securityGroup) return;
    const subject = subjectOf(index);
    named.set(subject, (named.get(subject) ?? new Set()).add(element.securityGroup));
  });
  // Groups of the base commit's file variants, by path (only when a file element carries a password).
  const fileGroups = new Map<string, Set<string>>();
  if (withPassword.some((index) => request.data[index].kind === 'file')) {
    for (const file of base.files()) {
      if (file.securityGroup)
        fileGroups.set(`file ${file.path}`, (fileGroups.get(`file ${file.path}`) ?? new Set()).add(file.securityGroup));
    }
  }

  const pairs = new Set<string>();
  const perElement = request.data.map((element, index) => {
    if (!element.password) return [];
    const subject = subjectOf(index);
    const groups = new Map<string, string>();
    const add = (group: string | undefined) => group && groups.set(groupId(group), group);
    if (element.kind === 'key') add(base.key(keyId(element.key))?.securityGroup);
    for (const group of fileGroups.get(subject) ?? []) add(group);
    for (const group of named.get(subject) ?? []) add(group);
    return [...groups].map(([id, group]) => {
      pairs.add(`${id}\u0000${element.password}`);
      return { group, password: element.password! };
    });
  });
  return { perElement, derivations: pairs.size };
}
