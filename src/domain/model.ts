/**
 * The state of a configuration repository, as the domain sees it: settings, keys with their
 * values per context, and files per context. How it is laid out in git is the store's business.
 */
import type { Context } from './context.js';
import type { ValueType } from './valueTypes.js';

export interface RepoSettings {
  /** Ordered context level names, widest first. */
  readonly levels: readonly string[];
  readonly description: string;
  readonly isPrivate: boolean;
  readonly isPersonal: boolean;
  readonly accessControlsEnabled: boolean;
  readonly vdtEnabled: boolean;
  readonly securityEnabled: boolean;
  readonly contextGroupsEnabled: boolean;
  readonly tokenFreePush: boolean;
  readonly tokenFreePull: boolean;
  /** ISO 8601 UTC, to the second: when the repository was created. */
  readonly created: string;
}

export interface StoredValue {
  readonly context: Context;
  /** The value as text; null means "no value". */
  readonly value: string | null;
  readonly active: boolean;
}

export interface KeyRecord {
  /** The name as first created; matched without regard to case. */
  readonly key: string;
  readonly readme: string;
  readonly deprecated: boolean;
  readonly vdt: ValueType;
  readonly push: boolean;
  /** Sorted by context identity. */
  readonly values: readonly StoredValue[];
}

export interface FileRecord {
  /** Normalised path, without a leading `/`. */
  readonly path: string;
  readonly context: Context;
  readonly content: string;
  readonly active: boolean;
}

/** What a push needs to read of the state it starts from. */
export interface RepositoryState {
  readonly settings: RepoSettings;
  /** A key by its id (lower-cased name). */
  key(id: string): KeyRecord | undefined;
  keys(): Iterable<KeyRecord>;
  /** A file variant by its id (see fileId). */
  file(id: string): FileRecord | undefined;
  files(): Iterable<FileRecord>;
}

/** The identity of a file variant: its path (case-sensitive) and its context (not). */
export function fileId(path: string, contextIdText: string): string {
  return `${path}\n${contextIdText}`;
}

/** What a push changes: keys and file variants by id, null meaning deleted. */
export interface PushChanges {
  readonly keys: ReadonlyMap<string, KeyRecord | null>;
  readonly files: ReadonlyMap<string, FileRecord | null>;
}
