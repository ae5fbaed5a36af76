/**
 * Secured keys and files, opened and sealed. Snapshots always hold them sealed, as in git; a
 * caller sees them opened only for the groups its key ring holds (see keyRing.ts).
 */
import { runSteps, type Steps } from '../../lib/steps.js';
import { contextId } from '../../domain/context.js';
import type {
  FileRecord,
  KeyRecord,
  PushChanges,
  RepositoryState,
  SecurityGroup,
  StoredValue,
} from '../../domain/model.js';
import { keyId, referencedKeys } from '../../domain/names.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { DamagedSecretError } from '../errors.js';
import type { KeyRing } from './keyRing.js';
import { fileIdentity, open, seal, sealedKeyId, valueIdentity, type GroupKey } from './sealing.js';

function openText(key: GroupKey, sealed: string, identity: string, what: string): string {
  const text = open(key.key, key.keyId, sealed, identity);
  if (text === undefined) throw new DamagedSecretError(what, key.group, key.repository);
  return text;
}

/** The plain text of one stored value of a secured key, or undefined when the ring lacks its group. */
export function openValue(key: KeyRecord, value: StoredValue, ring: KeyRing): { text: string | null } | undefined {
  if (key.securityGroup === undefined || value.value === null) return { text: value.value };
  const groupKey = ring.key(key.securityGroup);
  if (!groupKey) return undefined;
  const cid = contextId(value.context);
  return { text: openText(groupKey, value.value, valueIdentity(keyId(key.key), cid), `a value of key ${key.key}`) };
}

/** The key with its values opened, or undefined when the ring lacks its group. */
export function openKey(key: KeyRecord, ring: KeyRing): KeyRecord | undefined {
  if (key.securityGroup === undefined) return key;
  if (!ring.has(key.securityGroup)) return undefined;
  return { ...key, values: key.values.map((value) => ({ ...value, value: openValue(key, value, ring)!.text })) };
}

/** The file with its content opened, or undefined when the ring lacks its group. */
export function openFile(file: FileRecord, ring: KeyRing): FileRecord | undefined {
  if (file.securityGroup === undefined) return file;
  const groupKey = ring.key(file.securityGroup);
  if (!groupKey) return undefined;
  const { references: _sealedOnly, ...rest } = file;
  return {
    ...rest,
    content: openText(groupKey, file.content, fileIdentity(file.path, contextId(file.context)), `file ${file.path}`),
  };
}

/** A snapshot as a push sees it: keys and files of the groups in the ring opened, others sealed. */
export class OpenedState implements RepositoryState {
  private readonly openedKeys = new WeakMap<KeyRecord, KeyRecord>();
  private readonly openedFiles = new WeakMap<FileRecord, FileRecord>();

  constructor(
    readonly base: Snapshot,
    private readonly ring: KeyRing,
  ) {}

  get settings() {
    return this.base.settings;
  }

  get securityGroups(): readonly SecurityGroup[] {
    return this.base.securityGroups;
  }

  key(id: string): KeyRecord | undefined {
    const record = this.base.key(id);
    return record && this.openedKey(record);
  }

  *keys(): Iterable<KeyRecord> {
    for (const record of this.base.keys()) yield this.openedKey(record);
  }

  file(id: string): FileRecord | undefined {
    const record = this.base.file(id);
    return record && this.openedFile(record);
  }

  *files(): Iterable<FileRecord> {
    for (const record of this.base.files()) yield this.openedFile(record);
  }

  private openedKey(record: KeyRecord): KeyRecord {
    if (record.securityGroup === undefined) return record;
    let opened = this.openedKeys.get(record);
    if (!opened) this.openedKeys.set(record, (opened = openKey(record, this.ring) ?? record));
    return opened;
  }

  private openedFile(record: FileRecord): FileRecord {
    if (record.securityGroup === undefined) return record;
    let opened = this.openedFiles.get(record);
    if (!opened) this.openedFiles.set(record, (opened = openFile(record, this.ring) ?? record));
    return opened;
  }
}

/**
 * The changes of a push with every secured key and file sealed for git, with the ring's keys. A
 * value or file whose plain text did not change and whose ciphertext is already under the same
 * key keeps it, so a push that changes nothing makes no commit; anything else gets a fresh nonce.
 */
export function sealChanges(changes: PushChanges, state: OpenedState, ring: KeyRing): PushChanges {
  return runSteps(sealChangesSteps(changes, state, ring));
}

/** sealChanges as steps (src/lib/steps.ts): a pause is safe after each key and file sealed. */
export function* sealChangesSteps(changes: PushChanges, state: OpenedState, ring: KeyRing): Steps<PushChanges> {
  const keys = new Map<string, KeyRecord | null>();
  for (const [id, record] of changes.keys) {
    keys.set(id, record && record.securityGroup !== undefined ? sealKey(id, record, state, ring) : record);
    yield;
  }
  const files = new Map<string, FileRecord | null>();
  for (const [id, record] of changes.files) {
    files.set(id, record && record.securityGroup !== undefined ? sealFile(id, record, state, ring) : record);
    yield;
  }
  return { ...changes, keys, files };
}

function groupKeyOf(ring: KeyRing, group: string): GroupKey {
  const key = ring.key(group);
  // The push refuses an element that writes into a group it does not hold, so this cannot happen.
  if (!key) throw new Error(`no key for security group ${group}`);
  return key;
}

function sealKey(id: string, record: KeyRecord, state: OpenedState, ring: KeyRing): KeyRecord {
  const groupKey = groupKeyOf(ring, record.securityGroup!);
  const sealedBefore = state.base.key(id);
  const openedBefore = state.key(id);
  const unchanged = (cid: string, text: string) => {
    if (!sealedBefore || !openedBefore || openedBefore === sealedBefore) return undefined;
    const at = openedBefore.values.findIndex((v) => contextId(v.context) === cid);
    const sealed = at >= 0 && openedBefore.values[at].value === text ? sealedBefore.values[at].value : null;
    return sealed !== null && sealedKeyId(sealed) === groupKey.keyId ? sealed : undefined;
  };
  const values = record.values.map((value) => {
    if (value.value === null) return value;
    const cid = contextId(value.context);
    return {
      ...value,
      value: unchanged(cid, value.value) ?? seal(groupKey.key, groupKey.keyId, value.value, valueIdentity(id, cid)),
    };
  });
  return { ...record, values };
}

function sealFile(id: string, record: FileRecord, state: OpenedState, ring: KeyRing): FileRecord {
  const groupKey = groupKeyOf(ring, record.securityGroup!);
  const sealedBefore = state.base.file(id);
  const openedBefore = state.file(id);
  const keep =
    sealedBefore !== undefined &&
    sealedKeyId(sealedBefore.content) === groupKey.keyId &&
    openedBefore !== sealedBefore &&
    openedBefore?.content === record.content;
  return {
    ...record,
    content: keep
      ? sealedBefore!.content
      : seal(groupKey.key, groupKey.keyId, record.content, fileIdentity(record.path, contextId(record.context))),
    references: referencedKeys(record.content),
  };
}
