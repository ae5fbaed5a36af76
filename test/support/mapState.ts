/**
 * A RepositoryState built from plain Maps, for testing the push logic without git, and helpers
 * to write push elements briefly.
 */
import { contextId } from '../../src/domain/context.js';
import {
  fileId,
  type FileRecord,
  type KeyRecord,
  type PushChanges,
  type RepoSettings,
  type RepositoryState,
  type SecurityGroup,
} from '../../src/domain/model.js';
import { keyId } from '../../src/domain/names.js';
import type { FileElement, KeyElement, ValueElement } from '../../src/domain/pushRequest.js';

export function settingsWith(levels: readonly string[], more: Partial<RepoSettings> = {}): RepoSettings {
  return {
    levels,
    description: '',
    isPrivate: false,
    isPersonal: false,
    accessControlsEnabled: false,
    vdtEnabled: true,
    securityEnabled: true,
    contextGroupsEnabled: false,
    tokenFreePush: true,
    tokenFreePull: true,
    created: '2024-01-01T00:00:00Z',
    ...more,
  };
}

export class MapState implements RepositoryState {
  readonly keyMap: ReadonlyMap<string, KeyRecord>;
  readonly fileMap: ReadonlyMap<string, FileRecord>;

  constructor(
    readonly settings: RepoSettings,
    keys: Iterable<KeyRecord> = [],
    files: Iterable<FileRecord> = [],
    readonly securityGroups: readonly SecurityGroup[] = [],
  ) {
    this.keyMap = new Map([...keys].map((k) => [keyId(k.key), k]));
    this.fileMap = new Map([...files].map((f) => [fileId(f.path, contextId(f.context)), f]));
  }

  key(id: string): KeyRecord | undefined {
    return this.keyMap.get(id);
  }

  keys(): Iterable<KeyRecord> {
    return this.keyMap.values();
  }

  file(id: string): FileRecord | undefined {
    return this.fileMap.get(id);
  }

  files(): Iterable<FileRecord> {
    return this.fileMap.values();
  }

  /** The state after a push's changes. */
  with(changes: PushChanges): MapState {
    const keys = new Map(this.keyMap);
    for (const [id, record] of changes.keys) {
      if (record) keys.set(id, record);
      else keys.delete(id);
    }
    const files = new Map(this.fileMap);
    for (const [id, record] of changes.files) {
      if (record) files.set(id, record);
      else files.delete(id);
    }
    return new MapState(this.settings, keys.values(), files.values(), this.securityGroups);
  }
}

export function keyRecord(key: string, more: Partial<KeyRecord> = {}): KeyRecord {
  return { key, readme: '', deprecated: false, vdt: 'Text', push: true, values: [], ...more };
}

export function keyEl(key: string, more: Partial<Omit<KeyElement, 'kind' | 'key'>> = {}): KeyElement {
  return { kind: 'key', key, ...more };
}

/** An upsert of a value; `value` omitted means "no value field". */
export function valueEl(context: string, ...rest: [] | [unknown] | [unknown, Partial<ValueElement>]): ValueElement {
  if (rest.length === 0) return { context, hasValue: false };
  const [value, more] = rest;
  return { context, value, hasValue: true, ...(more ?? {}) };
}

export function deleteValueEl(context: string): ValueElement {
  return { context, hasValue: false, opp: 'delete' };
}

export function fileEl(
  file: string,
  context: string | undefined,
  more: Partial<Omit<FileElement, 'kind' | 'file' | 'context'>> = {},
): FileElement {
  return { kind: 'file', file, context, ...more };
}
