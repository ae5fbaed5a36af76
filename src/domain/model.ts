/**
 * The state of a configuration repository, as the domain sees it: settings, keys with their
 * values per context, and files per context. How it is laid out in git is the store's business.
 */
import type { RuleSet } from './accessRules.js';
import type { ApprovalRule } from './approvalRules.js';
import type { Context } from './context.js';
import type { ContextGroup } from './contextGroups.js';
import { referencedKeys } from './names.js';
import type { ValueType } from './valueTypes.js';
import type { SchemaDocument } from './schemas.js';

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
  /** Contexts whose changes need an approved change request (approvalRules.ts); absent: none. */
  readonly requiredApprovals?: readonly ApprovalRule[];
  /** Another name of the repository, for Spring Cloud Config's application (names.ts aliasProblem); absent: none. */
  readonly alias?: string;
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
  /**
   * The security group the key belongs to, if any. Its values are then stored sealed (see
   * service/security/sealing.ts); the push works on them opened, for the groups the pusher unlocked.
   */
  readonly securityGroup?: string;
  /** Sorted by context identity. */
  readonly values: readonly StoredValue[];
}

export interface FileRecord {
  /** Normalised path, without a leading `/`. */
  readonly path: string;
  readonly context: Context;
  readonly content: string;
  readonly active: boolean;
  /** The security group the file belongs to, if any: its content is then stored sealed. */
  readonly securityGroup?: string;
  /**
   * Set only while the content is sealed: the keys its template references, kept in the clear
   * beside the ciphertext so that a key a secured file uses cannot be deleted under it.
   */
  readonly references?: readonly string[];
}

/**
 * A security group as stored in the repository: its random data key, wrapped (AES-256-GCM)
 * under a key derived from the group's password by scrypt. The wrapped key is also the password's
 * verifier: only the right password opens it.
 */
export interface SecurityGroup {
  readonly name: string;
  /** Names the data key; changes with every password change. */
  readonly keyId: string;
  readonly kdf: {
    readonly name: 'scrypt';
    readonly salt: string;
    readonly N: number;
    readonly r: number;
    readonly p: number;
  };
  readonly wrappedKey: string;
}

/** What a push needs to read of the state it starts from. */
export interface RepositoryState {
  readonly settings: RepoSettings;
  readonly securityGroups: readonly SecurityGroup[];
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
  /** The new list of security groups, when it changes. */
  readonly securityGroups?: readonly SecurityGroup[];
  /** The new access rule sets, context groups or settings, when they change. */
  readonly ruleSets?: readonly RuleSet[];
  readonly contextGroups?: readonly ContextGroup[];
  readonly settings?: RepoSettings;
  /** The new schemas document, when it changes. */
  readonly schemas?: SchemaDocument;
}

/** The keys a file's template references, also while its content is sealed. */
export function templateReferences(file: FileRecord): readonly string[] {
  return file.references ?? referencedKeys(file.content);
}
