/**
 * Every document cfghub writes parses back to exactly what was written: the key
 * document, repository.yaml, security-groups.yaml and a secured file's envelope, for hostile names
 * and texts (YAML flow and block indicators, keywords, quotes, control characters, lone surrogates),
 * also after the round trip through UTF-8 bytes a blob makes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FileRecord, SecurityGroup } from '../../../src/domain/model.js';
import {
  parseFileContent,
  parseKey,
  parseSecurityGroups,
  parseSettings,
  serializeFileContent,
  serializeKey,
  serializeSecurityGroups,
  serializeSettings,
} from '../../../src/layout/layout.js';
import { anyText, keyName, keyRecord, repoSettings, TRICKY } from '../../support/arbitraries.js';
import { settingsWith } from '../../support/mapState.js';

/** Key names built of the characters a key name allows, YAML's flow indicators among them. */
const hostileKeyName = fc.oneof(
  keyName,
  fc.constantFrom(
    'x]',
    '[x',
    'a,b',
    '[a, b]',
    ']',
    '[',
    '*',
    '*a',
    '-',
    '-x',
    '(',
    ')',
    '+',
    '.',
    '..',
    'null',
    'true',
    'y',
    '0',
    '1e3',
    '.inf',
    '__proto__',
    'constructor',
  ),
);

const bytesAndBack = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** A secured file as stored: sealed content (any text here), its group and its template's references. */
const securedFile: fc.Arbitrary<FileRecord> = fc.record({
  path: fc.constant('conf/x.pem'),
  context: fc.constant(['*']),
  active: fc.constant(true),
  content: anyText,
  securityGroup: fc.oneof(anyText, fc.constantFrom(...TRICKY)),
  references: fc.array(hostileKeyName, { maxLength: 6 }),
});

const securityGroup: fc.Arbitrary<SecurityGroup> = fc.record({
  name: fc.oneof(anyText, hostileKeyName),
  keyId: fc.stringMatching(/^[0-9a-f]{16}$/),
  kdf: fc.record({
    name: fc.constant('scrypt' as const),
    salt: anyText,
    N: fc.integer({ min: 1, max: 2 ** 20 }),
    r: fc.integer({ min: 1, max: 64 }),
    p: fc.integer({ min: 1, max: 16 }),
  }),
  wrappedKey: anyText,
});

describe('documents parse back to exactly what was written (property)', () => {
  it('key documents, hostile key names included', () => {
    fc.assert(
      fc.property(keyRecord, hostileKeyName, (record, name) => {
        for (const key of [record, { ...record, key: name }, { ...record, securityGroup: name }]) {
          const text = serializeKey(key);
          expect(parseKey(bytesAndBack(text), 'k')).toEqual(key);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('repository.yaml', () => {
    fc.assert(
      fc.property(repoSettings, (settings) => {
        expect(parseSettings(bytesAndBack(serializeSettings(settings)))).toEqual(settings);
      }),
      { numRuns: 300 },
    );
  });

  it('security-groups.yaml', () => {
    fc.assert(
      fc.property(fc.uniqueArray(securityGroup, { maxLength: 4, selector: (g) => g.name.toLowerCase() }), (groups) => {
        const back = parseSecurityGroups(bytesAndBack(serializeSecurityGroups(groups)));
        const byName = (a: SecurityGroup, b: SecurityGroup) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1);
        expect([...back].sort(byName)).toEqual([...groups].sort(byName));
      }),
      { numRuns: 300 },
    );
  });

  it('settings and security groups keep a text of blanks and line breaks (a counterexample the property found)', () => {
    const groups: SecurityGroup[] = [
      {
        name: '',
        keyId: 'aa0aaaaa00aa0a00',
        kdf: { name: 'scrypt', salt: '  \n\n', N: 1, r: 1, p: 1 },
        wrappedKey: ' \n',
      },
    ];
    expect(parseSecurityGroups(bytesAndBack(serializeSecurityGroups(groups)))).toEqual(groups);
    const settings = settingsWith(['Environment'], { description: '  \n\n', created: '2023-11-14T22:13:20Z' });
    expect(parseSettings(bytesAndBack(serializeSettings(settings)))).toEqual(settings);
  });

  it("a secured file's envelope, references such as `x]` and `a,b` included", () => {
    fc.assert(
      fc.property(securedFile, (file) => {
        expect(parseFileContent(bytesAndBack(serializeFileContent(file)), 'f')).toEqual({
          content: file.content,
          securityGroup: file.securityGroup,
          references: file.references,
        });
      }),
      { numRuns: 400 },
    );
  });

  it('the example of the issue: a key `x]` referenced by a secured file', () => {
    const file: FileRecord = {
      path: 'secret/cert.pem',
      context: ['*'],
      active: true,
      content: 'enc:v1:x',
      securityGroup: 'vault',
      references: ['x]', 'a,b'],
    };
    expect(parseFileContent(serializeFileContent(file), 'f').references).toEqual(['x]', 'a,b']);
  });
});
