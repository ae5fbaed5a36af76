/**
 * The cryptography of security groups, with node:crypto only.
 *
 * - Each group has a random 256-bit data key. Secured values and files are sealed with it:
 *   AES-256-GCM, a fresh random 96-bit nonce per value, and the value's identity (key and
 *   context, or file path and context) as additional authenticated data, so a ciphertext moved to
 *   another key, context or file no longer opens. A sealed text reads
 *   `enc:v1:<key id>:<nonce, base64url>:<ciphertext and 128-bit tag, base64url>`.
 * - The data key is stored only wrapped (the same AES-256-GCM seal) under a key derived from the
 *   group's password by scrypt (N=2^15, r=8, p=1, 16-byte random salt per group). The wrapped key
 *   doubles as the password's verifier: a wrong password fails GCM's authentication.
 * - A token bound to a group holds the data key wrapped under a key derived from the token itself
 *   (HKDF-SHA256; a token has 256 random bits, so no slow derivation is needed).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, scrypt } from 'node:crypto';
import type { SecurityGroup } from '../../domain/model.js';
import { groupId, SEALED_PREFIX } from '../../domain/securityGroups.js';

export const CIPHER = 'AES-256-GCM';
const PREFIX = SEALED_PREFIX;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;

/** A group's opened data key. */
export interface GroupKey {
  readonly group: string;
  readonly keyId: string;
  readonly key: Buffer;
  /** `account/name` of the repository the group belongs to, for errors (set by KeyRing.of). */
  readonly repository?: string;
}

export function isSealed(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** The key id a sealed text was made with, or undefined when the text is not sealed. */
export function sealedKeyId(text: string): string | undefined {
  if (!isSealed(text)) return undefined;
  return text.slice(PREFIX.length).split(':')[0];
}

export function seal(key: Buffer, keyId: string, plaintext: string, identity: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(identity, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${keyId}:${nonce.toString('base64url')}:${body.toString('base64url')}`;
}

/** The plaintext of a sealed text, or undefined when it does not open with this key and identity. */
export function open(key: Buffer, keyId: string, sealed: string, identity: string): string | undefined {
  if (!isSealed(sealed)) return undefined;
  const parts = sealed.slice(PREFIX.length).split(':');
  if (parts.length !== 3 || parts[0] !== keyId) return undefined;
  const nonce = Buffer.from(parts[1], 'base64url');
  const body = Buffer.from(parts[2], 'base64url');
  if (nonce.length !== NONCE_BYTES || body.length < TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(Buffer.from(identity, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}

/** The identity a value is sealed under: its key and its context. */
export function valueIdentity(keyIdText: string, contextIdText: string): string {
  return `cfghub value\0${keyIdText}\0${contextIdText}`;
}

/** The identity a file is sealed under: its path and its context. */
export function fileIdentity(path: string, contextIdText: string): string {
  return `cfghub file\0${path}\0${contextIdText}`;
}

function wrapIdentity(group: string, keyId: string, holder: string): string {
  return `cfghub group key\0${groupId(group)}\0${keyId}\0${holder}`;
}

function passwordKey(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 32, { ...params, maxmem: 256 * params.N * params.r }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** A new group: a fresh data key wrapped under the password. */
export async function newGroup(name: string, password: string): Promise<{ group: SecurityGroup; key: GroupKey }> {
  const salt = randomBytes(16);
  const keyId = randomBytes(8).toString('hex');
  const data = randomBytes(32);
  const wrapping = await passwordKey(password, salt, SCRYPT);
  const group: SecurityGroup = {
    name,
    keyId,
    kdf: { name: 'scrypt', salt: salt.toString('base64'), ...SCRYPT },
    wrappedKey: seal(wrapping, 'password', data.toString('base64'), wrapIdentity(name, keyId, 'password')),
  };
  return { group, key: { group: name, keyId, key: data } };
}

/** The group's data key when the password is right, else undefined (scrypt: about 0.1 s). */
export async function unlockWithPassword(group: SecurityGroup, password: string): Promise<GroupKey | undefined> {
  const wrapping = await passwordKey(password, Buffer.from(group.kdf.salt, 'base64'), group.kdf);
  const opened = open(wrapping, 'password', group.wrappedKey, wrapIdentity(group.name, group.keyId, 'password'));
  return opened === undefined
    ? undefined
    : { group: group.name, keyId: group.keyId, key: Buffer.from(opened, 'base64') };
}

function tokenKey(token: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(token, 'utf8'), Buffer.alloc(0), 'cfghub token group keys', 32));
}

/** A group key as a token keeps it: wrapped under the token. */
export interface TokenGroupKey {
  readonly group: string;
  readonly keyId: string;
  readonly wrappedKey: string;
}

export function wrapForToken(token: string, key: GroupKey): TokenGroupKey {
  return {
    group: key.group,
    keyId: key.keyId,
    wrappedKey: seal(tokenKey(token), 'token', key.key.toString('base64'), wrapIdentity(key.group, key.keyId, 'token')),
  };
}

export function unwrapForToken(token: string, held: TokenGroupKey): GroupKey | undefined {
  const opened = open(tokenKey(token), 'token', held.wrappedKey, wrapIdentity(held.group, held.keyId, 'token'));
  return opened === undefined
    ? undefined
    : { group: held.group, keyId: held.keyId, key: Buffer.from(opened, 'base64') };
}

/** A keyed hash naming a (repository, group, password) in memory, never the password itself. */
export function secretLookupId(pepper: Buffer, ...parts: string[]): string {
  return createHmac('sha256', pepper).update(parts.join('\0')).digest('base64url');
}
