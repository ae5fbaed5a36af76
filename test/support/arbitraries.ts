/**
 * fast-check arbitraries shared by the unit tests: valid context items, contexts, key names,
 * and "anything" texts full of YAML- and header-hostile characters.
 */
import fc from 'fast-check';
import { WILDCARD } from '../../src/domain/context.js';
import type { KeyRecord, RepoSettings, StoredValue } from '../../src/domain/model.js';
import { VALUE_TYPES } from '../../src/domain/valueTypes.js';

const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const run = fc.array(alnum, { minLength: 1, maxLength: 6 }).map((chars) => chars.join(''));

/** A valid context item: runs of letters and digits joined by single `- . _ +`. */
export const contextItem = fc
  .tuple(run, fc.array(fc.tuple(fc.constantFrom('-', '.', '_', '+'), run), { maxLength: 3 }))
  .map(([first, rest]) => first + rest.map(([sep, r]) => sep + r).join(''));

export const contextItemOrWildcard = fc.oneof(
  { weight: 3, arbitrary: contextItem },
  { weight: 1, arbitrary: fc.constant(WILDCARD) },
);

export function contextOf(levels: number): fc.Arbitrary<string[]> {
  return fc.array(contextItemOrWildcard, { minLength: levels, maxLength: levels });
}

/** A valid level name: letters and digits joined by single `- . _`. */
export const levelName = fc
  .tuple(run, fc.array(fc.tuple(fc.constantFrom('-', '.', '_'), run), { maxLength: 2 }))
  .map(([first, rest]) => first + rest.map(([sep, r]) => sep + r).join(''));

/** A valid key name. */
export const keyName = fc.stringMatching(/^[A-Za-z0-9._+\-[\]()*]{1,24}$/);

/** Pieces of text that YAML, JSON, HTTP headers or git could mistake for syntax. */
export const TRICKY = [
  '- x',
  ': y',
  '#',
  '# comment',
  '*a',
  '&b',
  "'",
  '"',
  '\\',
  '\t',
  ' ',
  '  ',
  '\n',
  '\n\n',
  '\r',
  '\r\n',
  'null',
  'Null',
  '~',
  'true',
  'False',
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  '0',
  '-0',
  '007',
  '0x1F',
  '0o17',
  '1e3',
  '1_000',
  '.5',
  '.inf',
  '-.Inf',
  '.nan',
  '2024-01-01',
  '12:30:00',
  '---',
  '...',
  '%YAML 1.2',
  '!tag',
  '!!str',
  '|',
  '|-',
  '>',
  '>+',
  '{',
  '}',
  '[',
  ']',
  '{a: 1}',
  '[1, 2]',
  '@',
  '`',
  ',',
  '?',
  '? ',
  '<<',
  '=',
  '\u0085',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\u00a0',
  '\u3000',
  '\ud800',
  '\udfff',
  '🎉',
  'é',
  'e\u0301',
  'ß',
  'İ',
  '${ key }',
  '%',
  '%41',
];

/** Any text: arbitrary code points mixed with TRICKY pieces, leading/trailing spaces and many lines. */
export const anyText = fc
  .array(
    fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 10 }) },
    ),
    { maxLength: 14 },
  )
  .map((parts) => parts.join(''));

/**
 * Text a YAML writer must quote or escape to have it read back as the same string: any string, and
 * the ones the yaml library would read as another type, an anchor, a comment, a flow or a block.
 */
export const yamlAwkwardText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(
    '',
    ' ',
    'true',
    'Null',
    'NO',
    '~',
    '- x',
    ': y',
    '#c',
    '*a',
    '&b',
    "'",
    '"',
    '\t',
    '\u2028',
    '\u0085',
    'a b',
    'a  b',
    'a ',
    '0x1F',
    '1e5',
    '.inf',
    'Production;*;*',
    'a:b',
    'a #b',
    '[x]',
    '2024-01-02',
    'My repo, 10 keys',
  ),
);

export const valueType = fc.constantFrom(...VALUE_TYPES);

export function storedValue(levels: number): fc.Arbitrary<StoredValue> {
  return fc.record({
    context: contextOf(levels),
    value: fc.option(anyText, { nil: null, freq: 4 }),
    active: fc.boolean(),
  });
}

/** Any key record (its values need not be sorted or unique: serialization must keep them as they are). */
export const keyRecord: fc.Arbitrary<KeyRecord> = fc.integer({ min: 1, max: 4 }).chain((levels) =>
  fc.record({
    key: fc.oneof(keyName, anyText),
    readme: anyText,
    deprecated: fc.boolean(),
    vdt: valueType,
    push: fc.boolean(),
    values: fc.array(storedValue(levels), { maxLength: 5 }),
  }),
);

export const isoSecond = fc
  .integer({ min: 0, max: 4_102_444_800 })
  .map((seconds) => `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`);

export const repoSettings: fc.Arbitrary<RepoSettings> = fc.record({
  levels: fc.uniqueArray(levelName, { minLength: 1, maxLength: 10, selector: (l) => l.toLowerCase() }),
  description: anyText,
  isPrivate: fc.boolean(),
  isPersonal: fc.boolean(),
  accessControlsEnabled: fc.boolean(),
  vdtEnabled: fc.boolean(),
  securityEnabled: fc.boolean(),
  contextGroupsEnabled: fc.boolean(),
  tokenFreePush: fc.boolean(),
  tokenFreePull: fc.boolean(),
  created: isoSecond,
});
