/**
 * Renders a file template for a context: every `${ key }` (spaces optional) is replaced by the
 * key's value resolved for the same context; the value of a FileEmbed key is the rendered file it
 * names. A key without a value for the context renders as MISSING_VALUE and is reported, so a
 * client can tell; a chain of embedded files that comes back to itself is a ReferenceCycleError.
 */
import { keyId, KEY_REFERENCE } from './names.js';
import type { FileRecord, KeyRecord, StoredValue } from './model.js';

/** ConfigHub's marker for a reference without a value, kept so existing clients recognise it. */
export const MISSING_VALUE = '[ ERROR: No property value resolved ]';
export const MISSING_FILE = '[ ERROR: No file resolved ]';
/** Stands for the value of a secured key whose group the reader has not unlocked. */
export const ENCRYPTED_VALUE = '[ ERROR: Encrypted value, security group password required ]';
/** Stands for an embedded secured file whose group the reader has not unlocked. */
export const ENCRYPTED_FILE = '[ ERROR: Encrypted file, security group password required ]';

export interface RenderSource {
  key(id: string): KeyRecord | undefined;
  /** The value for the context, opened; 'locked' when it is sealed and the reader may not open it. */
  value(key: KeyRecord): StoredValue | 'locked' | undefined;
  file(path: string): FileRecord | undefined;
}

export interface RenderedFile {
  readonly content: string;
  /** Keys referenced (also through embedded files) that have no value for the context. */
  readonly unresolved: readonly string[];
  /** Keys referenced whose value is sealed in a group the reader has not unlocked. */
  readonly encrypted: readonly string[];
}

export class ReferenceCycleError extends Error {
  readonly code = 'ReferenceCycle';
  constructor(readonly cycle: readonly string[]) {
    super(`files embed each other in a cycle: ${cycle.join(' -> ')}`);
  }
}

export function renderFile(file: FileRecord, source: RenderSource): RenderedFile {
  const unresolved = new Set<string>();
  const encrypted = new Set<string>();
  const content = render(file, source, [file.path], { unresolved, encrypted });
  return { content, unresolved: [...unresolved], encrypted: [...encrypted] };
}

function render(file: FileRecord, source: RenderSource, stack: string[], found: { unresolved: Set<string>; encrypted: Set<string> }): string {
  return file.content.replace(KEY_REFERENCE, (_match, name: string) => {
    const key = source.key(keyId(name));
    const value = key && source.value(key);
    if (!key || !value) {
      found.unresolved.add(key?.key ?? name);
      return MISSING_VALUE;
    }
    if (value === 'locked') {
      found.encrypted.add(key.key);
      return ENCRYPTED_VALUE;
    }
    if (key.vdt !== 'FileEmbed') return value.value ?? (key.vdt === 'FileRef' ? '' : 'null');
    if (value.value === null) return '';
    const path = value.value.startsWith('/') ? value.value.slice(1) : value.value;
    if (stack.includes(path)) throw new ReferenceCycleError([...stack, path]);
    const embedded = source.file(path);
    return embedded ? render(embedded, source, [...stack, path], found) : MISSING_FILE;
  });
}
