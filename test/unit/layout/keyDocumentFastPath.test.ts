/**
 * The fast reader of key documents must read exactly what the yaml library reads, for every
 * document cfghub writes, and step aside (undefined) for documents in any other form.
 */
import fc from 'fast-check';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../../src/domain/model.js';
import { VALUE_TYPES } from '../../../src/domain/valueTypes.js';
import { parseCanonicalKey, parseKey, serializeKey } from '../../../src/layout/layout.js';
import { yamlAwkwardText as text } from '../../support/arbitraries.js';

const item = fc.oneof(fc.constant('*'), fc.stringMatching(/^[A-Za-z0-9]{1,6}$/));
const record: fc.Arbitrary<KeyRecord> = fc.record({
  key: text,
  readme: text,
  deprecated: fc.boolean(),
  vdt: fc.constantFrom(...VALUE_TYPES),
  push: fc.boolean(),
  securityGroup: fc.option(text, { nil: undefined }),
  values: fc.array(
    fc.record({
      context: fc.array(item, { minLength: 1, maxLength: 4 }),
      value: fc.option(text, { nil: null }),
      active: fc.boolean(),
    }),
    { maxLength: 4 },
  ),
});

describe('parseCanonicalKey', () => {
  it('reads every written document exactly as the yaml library does', () => {
    fc.assert(
      fc.property(record, (key) => {
        const written = serializeKey(key);
        const fast = parseCanonicalKey(written);
        expect(fast).toEqual(key);
        const doc = YAML.parse(written, { schema: 'core' });
        expect(fast).toEqual({
          ...doc,
          values: doc.values.map((v: { context: string }) => ({ ...v, context: v.context.split(';') })),
        });
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['a comment', 'key: k  # note\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n'],
    ['a YAML-only escape', 'key: "k\\x41"\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n'],
    ['another field order', 'readme: ""\nkey: k\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n'],
    [
      'a flow sequence of values',
      'key: k\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues: [{context: "*", value: x, active: true}]\n',
    ],
    ['a block scalar', 'key: k\nreadme: |\n  two\n  lines\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n'],
    ['a keyword as plain value', 'key: k\nreadme: yes\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n'],
  ])('steps aside for %s, and parseKey still reads it with the yaml library', (_what, written) => {
    expect(parseCanonicalKey(written)).toBeUndefined();
    let viaYaml: unknown;
    try {
      viaYaml = parseKey(written, 'test');
    } catch (error) {
      viaYaml = error;
    }
    expect(viaYaml).toBeDefined();
  });

  it('reads a hand-written block scalar through the yaml library', () => {
    const key = parseKey(
      'key: k\nreadme: |\n  two\n  lines\ndeprecated: false\nvdt: Text\npush: true\nvalues: []\n',
      'test',
    );
    expect(key.readme).toBe('two\nlines\n');
  });
});
