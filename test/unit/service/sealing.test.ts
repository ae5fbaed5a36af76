/**
 * The cryptography of security groups (service/security/sealing.ts): values open only with their group's
 * key and under their own identity, a wrong password opens nothing, a token opens only what it
 * was given, and a secured file's envelope in git reads back as written.
 */
import { describe, expect, it } from 'vitest';
import {
  fileIdentity,
  newGroup,
  open,
  seal,
  unlockWithPassword,
  unwrapForToken,
  valueIdentity,
  wrapForToken,
} from '../../../src/service/security/sealing.js';
import {
  parseFileContent,
  parseSecurityGroups,
  serializeFileContent,
  serializeSecurityGroups,
} from '../../../src/layout/layout.js';

describe('sealing', () => {
  it('opens a value only with its key and its own identity, and seals the same text differently each time', async () => {
    const { key } = await newGroup('secrets', 'password-one');
    const identity = valueIdentity('db.password', 'prod;*');
    const sealed = seal(key.key, key.keyId, 'hunter2', identity);
    expect(sealed).toMatch(new RegExp(`^enc:v1:${key.keyId}:[\\w-]{16}:[\\w-]+$`));
    expect(sealed).not.toContain('hunter2');
    expect(seal(key.key, key.keyId, 'hunter2', identity)).not.toBe(sealed);
    expect(open(key.key, key.keyId, sealed, identity)).toBe('hunter2');
    // Moved to another key, another context, or into a file: it no longer opens.
    expect(open(key.key, key.keyId, sealed, valueIdentity('api.key', 'prod;*'))).toBeUndefined();
    expect(open(key.key, key.keyId, sealed, valueIdentity('db.password', 'dev;*'))).toBeUndefined();
    expect(open(key.key, key.keyId, sealed, fileIdentity('db.password', 'prod;*'))).toBeUndefined();
    // Another group's key, or one flipped bit, opens nothing.
    const other = await newGroup('ops', 'password-two');
    expect(open(other.key.key, key.keyId, sealed, identity)).toBeUndefined();
    // The second-to-last character, always changed (it was once replaced by itself, 1 time in 64).
    const tampered = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.slice(-1);
    expect(tampered).not.toBe(sealed);
    expect(open(key.key, key.keyId, tampered, identity)).toBeUndefined();
  });

  it('unlocks a group with its password only, and a token-wrapped key with that token only', async () => {
    const { group, key } = await newGroup('secrets', 'password-one');
    expect(group.wrappedKey).not.toContain(key.key.toString('base64'));
    expect((await unlockWithPassword(group, 'password-one'))?.key.equals(key.key)).toBe(true);
    expect(await unlockWithPassword(group, 'password-two')).toBeUndefined();
    const held = wrapForToken('cfg_token-a', key);
    expect(unwrapForToken('cfg_token-a', held)?.key.equals(key.key)).toBe(true);
    expect(unwrapForToken('cfg_token-b', held)).toBeUndefined();
  });

  it('writes security-groups.yaml and secured file envelopes that read back as written', async () => {
    const { group } = await newGroup('secrets', 'password-one');
    expect(parseSecurityGroups(serializeSecurityGroups([group]))).toEqual([group]);
    const file = {
      path: 'a.txt',
      context: ['*'],
      active: true,
      securityGroup: 'secrets',
      references: ['db.host', 'x'],
      content: 'enc:v1:0123456789abcdef:n:c',
    };
    expect(parseFileContent(serializeFileContent(file), 'a.txt')).toEqual({
      content: file.content,
      securityGroup: 'secrets',
      references: ['db.host', 'x'],
    });
    expect(parseFileContent('plain content', 'a.txt')).toEqual({ content: 'plain content' });
  });
});
