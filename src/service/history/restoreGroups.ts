/**
 * The rules of a push for a restore: a restore that changes, adds or deletes a
 * secured key or file needs the key of each group involved (a password in Security-Profile-Auth,
 * or a token bound to the group), else a 403 naming the group. `security-groups.yaml` is never
 * restored: it stays at the head's version, so a restore never brings back an old password or an
 * old wrapped key. A secured key or file of the point whose ciphertexts were made under an earlier
 * key of its group (before a `group passwd`) would no longer open: a 409 says so, and the secret is
 * pushed again with the current password instead.
 */
import type { FileRecord, KeyRecord, SecurityGroup } from '../../domain/model.js';
import { findGroup } from '../../domain/securityGroups.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { ServiceError } from '../errors.js';
import type { KeyRing } from '../security/keyRing.js';
import { sealedKeyId } from '../security/sealing.js';

/** One key or file that differs between the head and the point, with both sides. */
interface Difference {
  readonly what: string;
  readonly head: KeyRecord | FileRecord | undefined;
  readonly point: KeyRecord | FileRecord | undefined;
}

function* differingKeys(head: Snapshot, point: Snapshot): Iterable<Difference> {
  for (const name of new Set([...head.shards.keys(), ...point.shards.keys()])) {
    const [h, p] = [head.shards.get(name), point.shards.get(name)];
    if (h?.treeId === p?.treeId) continue;
    for (const id of new Set([...(h?.byId.keys() ?? []), ...(p?.byId.keys() ?? [])])) {
      const [he, pe] = [h?.byId.get(id), p?.byId.get(id)];
      if (he?.blobId === pe?.blobId) continue;
      yield { what: `key ${(pe ?? he)!.record.key}`, head: he?.record, point: pe?.record };
    }
  }
}

function* differingFiles(head: Snapshot, point: Snapshot): Iterable<Difference> {
  for (const id of new Set([...head.fileEntries.keys(), ...point.fileEntries.keys()])) {
    const [he, pe] = [head.fileEntries.get(id), point.fileEntries.get(id)];
    if (he?.blobId === pe?.blobId && he?.record.active === pe?.record.active) continue;
    const file = (pe ?? he)!.record;
    yield { what: `file ${file.path} (context ${file.context.join(';')})`, head: he?.record, point: pe?.record };
  }
}

/** The key ids a record's sealed texts were made with. */
function sealedWith(record: KeyRecord | FileRecord): string[] {
  if ('values' in record)
    return record.values
      .map((v) => (v.value === null ? undefined : sealedKeyId(v.value)))
      .filter((id): id is string => id !== undefined);
  const id = sealedKeyId(record.content);
  return id === undefined ? [] : [id];
}

/**
 * Throws a 403 (a group's key is missing) or a 409 (the point's secret cannot be brought back)
 * for the first secured key or file the restore would change; `short` names the point's commit.
 */
export function checkSecuredRestore(head: Snapshot, point: Snapshot, ring: KeyRing, short: string): void {
  const groups: readonly SecurityGroup[] = head.securityGroups;
  for (const source of [differingKeys(head, point), differingFiles(head, point)]) {
    for (const { what, head: now, point: then } of source) {
      for (const name of new Set([now?.securityGroup, then?.securityGroup])) {
        if (name === undefined) continue;
        const group = findGroup(groups, name);
        if (!group) {
          throw new ServiceError(
            'conflict',
            `cannot restore commit ${short}: ${what} is in security group ${name}, which no longer exists; push it again instead`,
          );
        }
        if (ring.key(group.name)?.keyId !== group.keyId) {
          throw new ServiceError(
            'forbidden',
            `restoring commit ${short} changes ${what} of security group ${group.name}: send the group's password in Security-Profile-Auth, or use a token bound to the group`,
          );
        }
        if (
          then?.securityGroup !== undefined &&
          findGroup(groups, then.securityGroup) === group &&
          sealedWith(then).some((id) => id !== group.keyId)
        ) {
          throw new ServiceError(
            'conflict',
            `cannot restore commit ${short}: ${what} was sealed with an earlier key of security group ${group.name} (its password changed since); push it again with the current password instead`,
          );
        }
      }
    }
  }
}
