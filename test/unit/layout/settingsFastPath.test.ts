/**
 * The fast reader of `repository.yaml` (canonicalSettings.ts) must read exactly what the yaml
 * library reads, for every settings document cfghub writes, and step aside (undefined) for any
 * other form, which parseSettings then reads with the yaml library as before.
 */
import fc from 'fast-check';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type { RepoSettings } from '../../../src/domain/model.js';
import { parseCanonicalSettings } from '../../../src/layout/canonicalSettings.js';
import { LayoutError } from '../../../src/layout/errors.js';
import { parseSettings, serializeSettings } from '../../../src/layout/layout.js';
import { repoSettings, yamlAwkwardText as text } from '../../support/arbitraries.js';
import { settingsWith } from '../../support/mapState.js';

const created = fc.oneof(
  fc
    .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')),
  fc.date({ noInvalidDate: true, min: new Date(0) }).map((d) => d.toISOString()),
  text,
);
/** The project's settings, with levels, description and creation date widened to any text. */
const settings: fc.Arbitrary<RepoSettings> = fc
  .tuple(
    repoSettings,
    fc.array(fc.oneof(fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,8}$/), text), { minLength: 1, maxLength: 10 }),
    text,
    created,
  )
  .map(([base, levels, description, when]) => ({ ...base, levels, description, created: when }));

/** What the yaml library reads from a document, in RepoSettings' shape. */
function viaYaml(written: string): RepoSettings {
  const { context, ...rest } = YAML.parse(written, { schema: 'core', strict: true, uniqueKeys: true });
  return { levels: context, ...rest };
}

const plain: RepoSettings = settingsWith(['Environment', 'Application', 'Instance'], {
  description: 'bench history fixture, 1000 keys, 10000 commits',
  created: '2026-11-25T06:31:44Z',
});

describe('parseCanonicalSettings', () => {
  it('reads every written document exactly as the yaml library does, or steps aside', () => {
    fc.assert(
      fc.property(settings, (value) => {
        const written = serializeSettings(value);
        const fast = parseCanonicalSettings(written);
        if (fast !== undefined) {
          expect(fast).toEqual(viaYaml(written));
          expect(fast).toEqual(value);
        }
        expect(parseSettings(written)).toEqual(value);
      }),
      { numRuns: 3000 },
    );
  });

  it('takes the shortcut for the settings cfghub writes for an ordinary repository', () => {
    const written = serializeSettings(plain);
    expect(parseCanonicalSettings(written)).toEqual(plain);
    expect(
      parseCanonicalSettings(serializeSettings({ ...plain, description: '', created: '2024-02-29T23:59:59.123Z' })),
    ).toEqual({ ...plain, description: '', created: '2024-02-29T23:59:59.123Z' });
  });

  const written = serializeSettings(plain);
  it.each([
    ['a comment', written.replace('isPrivate: false', 'isPrivate: false # not yet')],
    [
      'another field order',
      written.replace('isPrivate: false\nisPersonal: false', 'isPersonal: false\nisPrivate: false'),
    ],
    [
      'a flow sequence of levels',
      written.replace(
        'context:\n  - Environment\n  - Application\n  - Instance',
        'context: [Environment, Application, Instance]',
      ),
    ],
    ['a YAML 1.1 boolean', written.replace('vdtEnabled: true', 'vdtEnabled: yes')],
    ['a missing field', written.replace('tokenFreePull: true\n', '')],
    ['an extra field', `${written}owner: someone\n`],
    ['a keyword as a plain level', written.replace('  - Instance', '  - null')],
    ['a block scalar', written.replace(/description: .*\n/, 'description: |\n  two\n  lines\n')],
  ])('steps aside for %s; parseSettings reads it with the yaml library as before', (_what, document) => {
    expect(parseCanonicalSettings(document)).toBeUndefined();
    let read: unknown;
    try {
      read = parseSettings(document);
    } catch (error) {
      read = error;
    }
    if (read instanceof Error) expect(read).toBeInstanceOf(LayoutError);
    else expect(read).toEqual(viaYaml(document));
  });

  it('steps aside for no level or more than ten, which parseSettings refuses', () => {
    const none = written.replace('context:\n  - Environment\n  - Application\n  - Instance', 'context: []');
    const eleven = serializeSettings({ ...plain, levels: Array.from({ length: 11 }, (_, i) => `L${i}`) });
    for (const document of [none, eleven]) {
      expect(parseCanonicalSettings(document)).toBeUndefined();
      expect(() => parseSettings(document)).toThrow(LayoutError);
    }
  });
});
