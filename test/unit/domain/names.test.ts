/**
 * Naming rules: account, repository and token-label names and key names,
 * key identity and template references.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aliasProblem,
  isValidKeyName,
  isValidName,
  keyId,
  nameProblem,
  referencedKeys,
} from '../../../src/domain/names.js';

describe('account, repository and label names', () => {
  it.each([
    ['a'],
    ['A'],
    ['1'],
    ['acme'],
    ['my-repo'],
    ['my.repo'],
    ['my_repo'],
    ['a-b.c_d'],
    ['v1.2'],
    ['x'.repeat(120)],
  ])('accepts %j', (name) => {
    expect(isValidName(name)).toBe(true);
    expect(nameProblem('name', name)).toBeUndefined();
  });

  it.each([
    ['-a'],
    ['a-'],
    ['a--b'],
    ['a-.b'],
    ['.a'],
    ['a.'],
    ['_a'],
    ['a+b'],
    ['a b'],
    ['a/b'],
    ['a*'],
    ['é'],
    ['a\n'],
  ])('refuses %j: letters and digits joined by single separators', (name) => {
    expect(isValidName(name)).toBe(false);
    expect(nameProblem('account name', name)).toBe(
      "account name must be letters and digits joined by single '-', '.' or '_'",
    );
  });

  it('refuses the empty name and names over 120 characters', () => {
    expect(isValidName('')).toBe(false);
    expect(nameProblem('repository name', '')).toBe('repository name is empty');
    expect(isValidName('x'.repeat(121))).toBe(false);
    expect(nameProblem('repository name', 'x'.repeat(121))).toBe('repository name is longer than 120 characters');
    expect(isValidName('a-'.repeat(60) + 'b')).toBe(false); // 121 characters, otherwise valid
  });
});

describe('key names', () => {
  it.each([
    ['a'],
    ['db.port'],
    ['DB_PORT'],
    ['a-b'],
    ['a+b'],
    ['list[0]'],
    ['fn(x)'],
    ['wild*'],
    ['*'],
    ['.'],
    ['..'],
    ['-'],
    ['._-+[]()*'],
    ['0123456789'],
    ['x'.repeat(120)],
  ])('accepts %j', (key) => {
    expect(isValidKeyName(key)).toBe(true);
  });

  it.each([
    [''],
    ['x'.repeat(121)],
    ['a b'],
    [' a'],
    ['a '],
    ['a/b'],
    ['a\\b'],
    ['a:b'],
    ['a;b'],
    ['a,b'],
    ['a{b}'],
    ['${a}'],
    ['a<b'],
    ['a>b'],
    ['a|b'],
    ['a?'],
    ['a"b'],
    ["a'b"],
    ['a#b'],
    ['a%b'],
    ['a=b'],
    ['a@b'],
    ['a!'],
    ['a~'],
    ['a`'],
    ['é'],
    ['ключ'],
    ['a\tb'],
    ['a\nb'],
    ['a\u0000'],
  ])('refuses %j', (key) => {
    expect(isValidKeyName(key)).toBe(false);
  });

  it('matches every allowed character and no other ASCII character (property)', () => {
    const allowed = new Set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+[]()*');
    for (let code = 0; code < 128; code++) {
      const char = String.fromCharCode(code);
      expect(isValidKeyName(`k${char}k`), `character ${JSON.stringify(char)}`).toBe(allowed.has(char));
    }
  });

  it('keyId ignores case, so keys match without regard to case', () => {
    expect(keyId('DB.Port')).toBe('db.port');
    expect(keyId('db.port')).toBe(keyId('DB.PORT'));
    expect(keyId('a[0]')).not.toBe(keyId('a[1]'));
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9._+\-[\]()*]{1,20}$/), (key) => {
        expect(keyId(key)).toBe(keyId(key.toUpperCase()));
        expect(keyId(keyId(key))).toBe(keyId(key));
      }),
      { numRuns: 200 },
    );
  });
});

describe('template references `${ key }`', () => {
  it('finds references with and without spaces, in order of first appearance', () => {
    expect(referencedKeys('host=${db.host} port=${ db.port }  user=${  user  }')).toEqual([
      'db.host',
      'db.port',
      'user',
    ]);
  });

  it('keeps one reference per key, matched without regard to case, in its first spelling', () => {
    expect(referencedKeys('${ Db.Host } ${db.host} ${DB.HOST} ${other}')).toEqual(['Db.Host', 'other']);
  });

  it('takes every key-name character, including [ ] ( ) * + .', () => {
    expect(referencedKeys('${list[0]} ${fn(x)} ${a+b} ${wild*}')).toEqual(['list[0]', 'fn(x)', 'a+b', 'wild*']);
  });

  it('accepts tabs and newlines as the optional spaces', () => {
    expect(referencedKeys('${\tkey\n}')).toEqual(['key']);
  });

  it.each([
    ['no references at all'],
    ['$key'],
    ['$ {key}'],
    ['{key}'],
    ['${}'],
    ['${ }'],
    ['${a b}'],
    ['${a/b}'],
    ['${ key'],
    ['${key'],
    ['${é}'],
    [`\${${'x'.repeat(121)}}`],
  ])('finds no reference in %j', (text) => {
    expect(referencedKeys(text)).toEqual([]);
  });

  it('finds a reference of exactly 120 characters', () => {
    const key = 'k'.repeat(120);
    expect(referencedKeys(`\${ ${key} }`)).toEqual([key]);
  });

  it('finds the inner reference of nested-looking text', () => {
    expect(referencedKeys('${ ${inner} }')).toEqual(['inner']);
    expect(referencedKeys('$${a}}')).toEqual(['a']);
  });

  it('can be called again on the same text (no regex state leaks between calls)', () => {
    const text = '${a} ${b}';
    expect(referencedKeys(text)).toEqual(['a', 'b']);
    expect(referencedKeys(text)).toEqual(['a', 'b']);
  });

  it('finds every key written into a template (property)', () => {
    const key = fc.stringMatching(/^[A-Za-z0-9._+\-[\]()*]{1,12}$/);
    const filler = fc.string({ maxLength: 10 }).filter((s) => !s.includes('$') && !s.includes('{') && !s.includes('}'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(filler, key, fc.constantFrom('', ' ', '  ')), { maxLength: 6 }),
        filler,
        (parts, tail) => {
          const text = parts.map(([before, k, pad]) => `${before}\${${pad}${k}${pad}}`).join('') + tail;
          const expected = new Map<string, string>();
          for (const [, k] of parts) if (!expected.has(k.toLowerCase())) expected.set(k.toLowerCase(), k);
          expect(referencedKeys(text)).toEqual([...expected.values()]);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('repository aliases', () => {
  it.each([['shop'], ['shop-api'], ['billing_v2'], ['A1'], ['x'.repeat(100)]])('accepts %s', (alias) => {
    expect(aliasProblem(alias)).toBeUndefined();
  });

  it.each([[''], ['acme.shop'], ['a--b'], ['-a'], ['a_'], ['a b'], ['a/b'], ['x'.repeat(101)], ['café']])(
    'refuses %j, saying the rule',
    (alias) => {
      expect(aliasProblem(alias)).toContain("letters and digits joined by single '-' or '_' (no '.')");
    },
  );

  it('never accepts a name that reads as account.repository', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (account, name) => {
        expect(aliasProblem(`${account}.${name}`)).toBeDefined();
      }),
    );
  });
});
