/**
 * Whether a set of changes, made by something other than a push (a revert), would leave a
 * reference dangling: a `${ key }` in a file naming a key that no longer exists, or a FileRef /
 * FileEmbed value naming a file that no longer exists. A push checks the same rules as it applies
 * its elements (applyPush); this checks a finished set of changes against the state it applies to.
 */
import { contextId } from './context.js';
import { fileId, type FileRecord, type KeyRecord, type PushChanges, type RepositoryState } from './model.js';
import { keyId, referencedKeys } from './names.js';
import { isFileReferenceType } from './valueTypes.js';

const stripSlash = (path: string) => (path.startsWith('/') ? path.slice(1) : path);

function* finalRecords<T>(
  current: Iterable<T>,
  changed: ReadonlyMap<string, T | null>,
  idOf: (record: T) => string,
): Iterable<T> {
  for (const record of current) if (!changed.has(idOf(record))) yield record;
  for (const record of changed.values()) if (record) yield record;
}

/** The first dangling reference the changes make, described, or undefined. */
export function brokenReference(state: RepositoryState, changes: PushChanges): string | undefined {
  const keyExists = (id: string) =>
    changes.keys.has(id) ? changes.keys.get(id) !== null : state.key(id) !== undefined;
  const files = [...finalRecords(state.files(), changes.files, (file) => fileId(file.path, contextId(file.context)))];
  const paths = new Set(files.map((file) => file.path));
  // Only what the changes touch is checked: every file when a key goes, every key when a file goes.
  const keyDeleted = [...changes.keys.values()].some((key) => key === null);
  const fileDeleted = [...changes.files.values()].some((file) => file === null);
  for (const file of keyDeleted ? files : [...changes.files.values()].filter((f): f is FileRecord => f !== null)) {
    for (const name of referencedKeys(file.content)) {
      if (!keyExists(keyId(name)))
        return `file ${file.path}: its template references key ${name}, which would no longer exist`;
    }
  }
  const keys: Iterable<KeyRecord> = fileDeleted
    ? finalRecords(state.keys(), changes.keys, (key) => keyId(key.key))
    : [...changes.keys.values()].filter((k): k is KeyRecord => k !== null);
  for (const key of keys) {
    if (!isFileReferenceType(key.vdt)) continue;
    for (const value of key.values) {
      if (value.value !== null && !paths.has(stripSlash(value.value)))
        return `key ${key.key}: its value for context ${value.context.join(';')} names file ${stripSlash(value.value)}, which would no longer exist`;
    }
  }
  return undefined;
}
