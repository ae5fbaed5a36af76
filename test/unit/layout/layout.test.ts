/**
 * The repository layout in git: names in trees that check out on Linux,
 * macOS and Windows, and YAML documents for keys and settings that round-trip exactly.
 */
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { WILDCARD } from '../../../src/domain/context.js';
import type { KeyRecord, RepoSettings } from '../../../src/domain/model.js';
import {
  contextFolderName,
  decodeFilePath,
  decodeName,
  encodeFilePath,
  encodeName,
  filesFolder,
  keyFileName,
  keyPath,
  keyShard,
  parseContextFolderName,
  parseKey,
  parseSettings,
  serializeKey,
  serializeSettings,
} from '../../../src/layout/layout.js';
import { anyText, contextOf, keyRecord, repoSettings, TRICKY } from '../../support/arbitraries.js';
import { LayoutError } from '../../../src/layout/errors.js';

// --- names in trees ------------------------------------------------------------------------------

const DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** The rules of the brief: no `<>:"|?*`, no trailing dot or space, no device name as the stem. */
function windowsProblem(name: string): string | undefined {
  if (/[<>:"|?*]/.test(name)) return 'forbidden character';
  if (/[. ]$/.test(name)) return 'trailing dot or space';
  if (DEVICE.test(name.split('.')[0])) return 'device name';
  return undefined;
}

/**
 * Git for Windows' own check of a path segment (is_valid_win32_path in git's compat/mingw.c),
 * which refuses to check out what it fails: reserved characters and control characters, a
 * trailing dot or space, and the device names AUX, CON, CONIN$, CONOUT$, NUL, PRN, COM1-9 and
 * LPT0-9 in any case, also when spaces, an extension or a stream name (`:`) follow them.
 */
function gitForWindowsRefuses(segment: string): boolean {
  if (/[<>:"|?*\u0001-\u001f]/.test(segment)) return true;
  if (/[. ]$/.test(segment) && segment !== '.' && segment !== '..') return true;
  return /^(aux|con|conin\$|conout\$|nul|prn|com[1-9]|lpt[0-9]) *(?:$|[.:])/i.test(segment);
}

/** Strings that could be a name: anything but `/`. */
const nameText = anyText.map((s) => s.replace(/\//g, ''));
const deviceLike = fc
  .tuple(
    fc.constantFrom(
      'con',
      'CON',
      'Con',
      'prn',
      'aux',
      'AUX',
      'nul',
      'NuL',
      'com0',
      'com1',
      'COM9',
      'lpt0',
      'lpt1',
      'LPT9',
      'conin$',
      'CONOUT$',
    ),
    fc.constantFrom('', '.', '.txt', '.tar.gz', ' ', '  ', ' .txt', '..', '.yaml', 'x', '1', ';_', ':s'),
  )
  .map(([stem, rest]) => stem + rest);

describe('encodeName and decodeName', () => {
  it.each([
    ['plain', 'plain'],
    ['db.port', 'db.port'],
    ['a*b', 'a%2Ab'],
    ['a:b', 'a%3Ab'],
    ['<>"|?*:', '%3C%3E%22%7C%3F%2A%3A'],
    ['100%', '100%25'],
    ['%41', '%2541'],
    ['name.', 'name%2E'],
    ['name ', 'name%20'],
    ['a..', 'a.%2E'],
    ['con', '%63on'],
    ['CON', '%43ON'],
    ['nul.yaml', '%6Eul.yaml'],
    ['Com1.tar.gz', '%43om1.tar.gz'],
    ['lpt9', '%6Cpt9'],
    ['console', 'console'],
    ['com10', 'com10'],
    ['x.con', 'x.con'],
    ['Production;_', 'Production;_'],
    ['', ''],
  ])('encodes %j as %j', (name, encoded) => {
    expect(encodeName(name)).toBe(encoded);
    expect(decodeName(encoded)).toBe(name);
  });

  it('decodeName(encodeName(s)) is s for any string without `/` (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          nameText,
          deviceLike,
          fc.string({ unit: 'binary' }).map((s) => s.replace(/\//g, '')),
        ),
        (name) => {
          expect(decodeName(encodeName(name))).toBe(name);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('is one-to-one: different names never share an encoding (property)', () => {
    fc.assert(
      fc.property(fc.oneof(nameText, deviceLike), fc.oneof(nameText, deviceLike), (a, b) => {
        if (a !== b) expect(encodeName(a)).not.toBe(encodeName(b));
      }),
      { numRuns: 500 },
    );
  });

  it('never yields a name Windows forbids: no <>:"|?*, no trailing dot or space, no device stem (property)', () => {
    fc.assert(
      fc.property(fc.oneof(nameText, deviceLike, fc.constantFrom(...TRICKY)), (name) => {
        const encoded = encodeName(name);
        expect(windowsProblem(encoded), `${JSON.stringify(name)} -> ${JSON.stringify(encoded)}`).toBeUndefined();
        expect(encoded).not.toContain('/');
      }),
      { numRuns: 1000 },
    );
  });

  it('adds no case collision: encodings equal without regard to case come from names equal without regard to case (property)', () => {
    const small = fc
      .array(fc.constantFrom('c', 'C', 'o', 'n', 'N', '%', '3', '6', 'a', 'A', 'e', 'E', ':', '.', ' ', '*', '2'), {
        maxLength: 5,
      })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(small, small, (a, b) => {
        if (encodeName(a).toLowerCase() === encodeName(b).toLowerCase()) expect(a.toLowerCase()).toBe(b.toLowerCase());
      }),
      { numRuns: 3000 },
    );
  });

  // Git for Windows also treats a device name followed by spaces (`con .txt`, `NUL  .yaml`) and the
  // devices CONIN$ / CONOUT$ as reserved and refuses to check them out; such segments pass
  // normalizeFilePath, so encodeName must encode them for a clone to work on Windows.
  it('never yields a segment that Git for Windows refuses to check out', () => {
    for (const name of ['con .txt', 'NUL  .yaml', 'aux ', 'conin$', 'CONOUT$.txt', 'conin$ .x', 'com1 .log', 'lpt0']) {
      expect(
        gitForWindowsRefuses(encodeName(name)),
        `${JSON.stringify(name)} -> ${JSON.stringify(encodeName(name))}`,
      ).toBe(false);
    }
    fc.assert(
      fc.property(
        fc.oneof(
          deviceLike,
          nameText.map((s) => s.replace(/[\u0000-\u001f\\]/g, '')),
        ),
        (name) => {
          expect(gitForWindowsRefuses(encodeName(name))).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('the Git-for-Windows model used above agrees with git on known cases', () => {
    for (const bad of ['con', 'CON.txt', 'con .txt', 'nul:stream', 'conin$', 'a.', 'a ', 'a:b', 'com1', 'lpt0.x']) {
      expect(gitForWindowsRefuses(bad), bad).toBe(true);
    }
    for (const good of ['console', 'com0', 'com10', 'x.con', '%63on', 'con%2E', 'conin', 'a.b']) {
      expect(gitForWindowsRefuses(good), good).toBe(false);
    }
  });
});

describe('key paths', () => {
  it('puts a key at keys/<xx>/<lower-cased name>.yaml, xx from sha1 of the lower-cased name', () => {
    const xx = createHash('sha1').update('db.port').digest('hex').slice(0, 2);
    expect(keyShard('db.port')).toBe(xx);
    expect(keyPath('DB.Port')).toBe(`keys/${xx}/db.port.yaml`);
    expect(keyPath('db.port')).toBe(keyPath('DB.PORT'));
  });

  it('spreads keys over 256 two-hex-digit shards', () => {
    const shards = new Set<string>();
    for (let i = 0; i < 5000; i++) shards.add(keyShard(`key${i}`));
    expect(shards.size).toBe(256);
    for (const shard of shards) expect(shard).toMatch(/^[0-9a-f]{2}$/);
  });

  it('encodes key file names that Windows would refuse', () => {
    expect(keyFileName('con')).toBe('%63on.yaml');
    expect(keyFileName('a*')).toBe('a%2A.yaml');
    expect(keyFileName('a.')).toBe('a%2E.yaml');
    expect(keyPath('AUX')).toMatch(/\/%61ux\.yaml$/);
  });
});

describe('context folders and file paths', () => {
  it('writes a context with `;` between items and `_` for a wildcard', () => {
    expect(contextFolderName(['Production', WILDCARD])).toBe('Production;_');
    expect(contextFolderName([WILDCARD, WILDCARD, WILDCARD])).toBe('_;_;_');
    expect(contextFolderName(['con'])).toBe('%63on');
    expect(parseContextFolderName('Production;_')).toEqual(['Production', '*']);
    expect(parseContextFolderName('%63on')).toEqual(['con']);
  });

  it('parseContextFolderName(contextFolderName(c)) is c for any valid context (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }).chain(contextOf), (context) => {
        const folder = contextFolderName(context);
        expect(parseContextFolderName(folder)).toEqual(context);
        expect(windowsProblem(folder)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('encodes each segment of a file path and decodes it back', () => {
    expect(encodeFilePath('conf/app:1.txt')).toEqual(['conf', 'app%3A1.txt']);
    expect(encodeFilePath('nul/x.')).toEqual(['%6Eul', 'x%2E']);
    fc.assert(
      fc.property(
        fc.array(
          nameText.filter((s) => s.length > 0),
          { minLength: 1, maxLength: 4 },
        ),
        (segments) => {
          const path = segments.join('/');
          expect(decodeFilePath(encodeFilePath(path))).toBe(path);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps active and inactive files in separate folders', () => {
    expect(filesFolder({ active: true })).toBe('files');
    expect(filesFolder({ active: false })).toBe('inactive-files');
  });
});

// --- documents -----------------------------------------------------------------------------------

const sampleKey: KeyRecord = {
  key: 'DB.Port',
  readme: 'The port.\nSecond line.',
  deprecated: false,
  vdt: 'Integer',
  push: true,
  values: [
    { context: ['Production', '*'], value: '5432', active: true },
    { context: ['*', '*'], value: null, active: false },
  ],
};

describe('serializeKey and parseKey', () => {
  it('writes human-readable YAML with the fields in a fixed order', () => {
    const text = serializeKey(sampleKey);
    expect(text).toMatch(/^key: DB\.Port\nreadme: /);
    expect(Object.keys(YAML.parse(text))).toEqual(['key', 'readme', 'deprecated', 'vdt', 'push', 'values']);
    expect(text).toContain('vdt: Integer\n');
    expect(text).toContain('context: Production;*');
    expect(text).toContain('value: "5432"'); // a string, never the number 5432
    expect(parseKey(text, 'k')).toEqual(sampleKey);
  });

  it('is deterministic: the same record always gives the same text', () => {
    expect(serializeKey({ ...sampleKey })).toBe(serializeKey(sampleKey));
  });

  it.each(TRICKY.map((t) => [t]))('round-trips the value and readme %j', (tricky) => {
    for (const text of [tricky, ` ${tricky} `, `${tricky}\n${tricky}`, `x${tricky}`, `${tricky}x`]) {
      const record: KeyRecord = {
        ...sampleKey,
        readme: text,
        values: [{ context: ['a', '*'], value: text, active: true }],
      };
      const serialized = serializeKey(record);
      expect(parseKey(serialized, 'k')).toEqual(record);
      expect(parseKey(Buffer.from(serialized, 'utf8').toString('utf8'), 'k')).toEqual(record);
    }
  });

  it('round-trips ANY key record exactly, also through UTF-8 bytes as stored in a blob (property)', () => {
    fc.assert(
      fc.property(keyRecord, (record) => {
        const text = serializeKey(record);
        expect(parseKey(text, 'k')).toEqual(record);
        expect(parseKey(Buffer.from(text, 'utf8').toString('utf8'), 'k')).toEqual(record);
      }),
      { numRuns: 400 },
    );
  });

  it('keeps null values null and empty strings empty', () => {
    const record: KeyRecord = {
      ...sampleKey,
      readme: '',
      values: [
        { context: ['a'], value: null, active: true },
        { context: ['b'], value: '', active: true },
        { context: ['c'], value: 'null', active: true },
        { context: ['d'], value: '~', active: true },
      ],
    };
    const back = parseKey(serializeKey(record), 'k');
    expect(back.values.map((v) => v.value)).toEqual([null, '', 'null', '~']);
  });
});

describe('parseKey refuses documents that do not match the layout', () => {
  const good = serializeKey(sampleKey);
  const docOf = (patch: (doc: Record<string, unknown>) => void) => {
    const doc = YAML.parse(good) as Record<string, unknown>;
    patch(doc);
    return YAML.stringify(doc);
  };

  it.each([
    ['an unknown top-level field', docOf((d) => (d.extra = 1))],
    [
      'a mistyped field name',
      docOf((d) => {
        d.vdts = d.vdt;
        delete d.vdt;
      }),
    ],
    ['an unknown field in a value', docOf((d) => ((d.values as Record<string, unknown>[])[0].opp = 'delete'))],
    ['a missing field', docOf((d) => delete d.push)],
    ['a missing value field', docOf((d) => delete (d.values as Record<string, unknown>[])[0].active)],
    ['a number as the value', docOf((d) => ((d.values as Record<string, unknown>[])[0].value = 5432))],
    ['a boolean as the value', docOf((d) => ((d.values as Record<string, unknown>[])[0].value = true))],
    ['a string as deprecated', docOf((d) => (d.deprecated = 'false'))],
    ['a string as push', docOf((d) => (d.push = 'yes'))],
    ['a number as the key', docOf((d) => (d.key = 12))],
    ['null as the readme', docOf((d) => (d.readme = null))],
    ['an unknown vdt', docOf((d) => (d.vdt = 'Integer32'))],
    ['a lower-case vdt', docOf((d) => (d.vdt = 'integer'))],
    ['values as an object', docOf((d) => (d.values = { context: 'a', value: 'b', active: true }))],
    ['a context as a list', docOf((d) => ((d.values as Record<string, unknown>[])[0].context = ['Production', '*']))],
    ['an object as a value', docOf((d) => ((d.values as Record<string, unknown>[])[0].value = { a: 1 }))],
    ['a list, not a mapping', '- key: a\n'],
    ['a scalar document', 'just text\n'],
    ['an empty document', ''],
    ['invalid YAML', 'key: [unclosed\n'],
    ['duplicate fields', `${good}key: other\n`],
    ['two documents', `${good}---\n${good}`],
    ['a YAML 1.1 boolean spelled yes', good.replace('push: true', 'push: yes')],
  ])('refuses %s with a LayoutError', (_, text) => {
    expect(() => parseKey(text, 'keys/ab/x.yaml')).toThrow(LayoutError);
  });

  it('names the document in the error', () => {
    expect(() => parseKey('key: [', 'keys/ab/x.yaml at commit 123')).toThrow(
      /^keys\/ab\/x\.yaml at commit 123 is not valid YAML/,
    );
    expect(() =>
      parseKey(
        docOf((d) => (d.extra = 1)),
        'keys/ab/x.yaml',
      ),
    ).toThrow(/^keys\/ab\/x\.yaml does not match the layout/);
  });
});

const sampleSettings: RepoSettings = {
  levels: ['Environment', 'Application', 'Instance'],
  description: 'Demo: "quoted" #not-a-comment',
  isPrivate: false,
  isPersonal: true,
  accessControlsEnabled: false,
  vdtEnabled: true,
  securityEnabled: true,
  contextGroupsEnabled: false,
  tokenFreePush: true,
  tokenFreePull: false,
  created: '2024-01-02T03:04:05Z',
};

describe('serializeSettings and parseSettings', () => {
  it('writes the context levels as a list and round-trips', () => {
    const text = serializeSettings(sampleSettings);
    expect(text).toMatch(/^context:\n {2}- Environment\n {2}- Application\n {2}- Instance\n/);
    expect(YAML.parse(text).created).toBe('2024-01-02T03:04:05Z');
    expect(parseSettings(text)).toEqual(sampleSettings);
  });

  it('round-trips ANY settings exactly (property)', () => {
    fc.assert(
      fc.property(repoSettings, (settings) => {
        const text = serializeSettings(settings);
        expect(parseSettings(text)).toEqual(settings);
        expect(parseSettings(Buffer.from(text, 'utf8').toString('utf8'))).toEqual(settings);
      }),
      { numRuns: 300 },
    );
  });

  const docOf = (patch: (doc: Record<string, unknown>) => void) => {
    const doc = YAML.parse(serializeSettings(sampleSettings)) as Record<string, unknown>;
    patch(doc);
    return YAML.stringify(doc);
  };

  it.each([
    ['an unknown field', docOf((d) => (d.extra = true))],
    ['a missing flag', docOf((d) => delete d.tokenFreePush)],
    ['a string flag', docOf((d) => (d.isPrivate = 'false'))],
    ['no levels', docOf((d) => (d.context = []))],
    ['eleven levels', docOf((d) => (d.context = Array.from({ length: 11 }, (_, i) => `L${i}`)))],
    ['levels as a string', docOf((d) => (d.context = 'Environment;Application'))],
    ['a number as the description', docOf((d) => (d.description = 5))],
    ['invalid YAML', 'context: [\n'],
  ])('refuses %s with a LayoutError', (_, text) => {
    expect(() => parseSettings(text)).toThrow(LayoutError);
  });
});
