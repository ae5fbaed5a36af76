/**
 * Value data types: every vdt and its strict check, the conversion of pushed
 * JSON values to stored text, and the phrases used in refusal reasons.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  acceptsStructuredValue,
  describeType,
  fitsType,
  isFileReferenceType,
  isValueType,
  valueToText,
  VALUE_TYPES,
  type ValueType,
} from '../../../src/domain/valueTypes.js';

describe('VALUE_TYPES and isValueType', () => {
  it('lists exactly the twelve types of the contract', () => {
    expect([...VALUE_TYPES].sort()).toEqual(
      [
        'Boolean',
        'Code',
        'Double',
        'FileEmbed',
        'FileRef',
        'Float',
        'Integer',
        'JSON',
        'List',
        'Long',
        'Map',
        'Text',
      ].sort(),
    );
  });

  it.each(VALUE_TYPES.map((t) => [t]))('knows %s', (type) => {
    expect(isValueType(type)).toBe(true);
  });

  it.each([['text'], ['TEXT'], ['json'], ['String'], [''], [' Text'], ['Text '], ['Integer32'], ['fileref']])(
    'does not know %j (names are exact, case-sensitive)',
    (name) => {
      expect(isValueType(name)).toBe(false);
    },
  );

  it('accepts structured values only for JSON, Map and List', () => {
    const structured = VALUE_TYPES.filter(acceptsStructuredValue);
    expect(structured.sort()).toEqual(['JSON', 'List', 'Map']);
  });

  it('treats only FileRef and FileEmbed as file references', () => {
    expect(VALUE_TYPES.filter(isFileReferenceType).sort()).toEqual(['FileEmbed', 'FileRef']);
  });
});

describe('fitsType: null', () => {
  it.each(VALUE_TYPES.map((t) => [t]))('null (no value) fits %s', (type) => {
    expect(fitsType(type, null)).toBe(true);
  });
});

describe('fitsType: free text types', () => {
  const anything = ['', ' ', 'hello', '{not json', '\u0000\n\t', 'ünïcödé 🎉', 'x'.repeat(10_000)];
  for (const type of ['Text', 'Code', 'FileRef', 'FileEmbed'] as const) {
    it.each(anything.map((t) => [t]))(`${type} takes any text: %j`, (text) => {
      expect(fitsType(type, text)).toBe(true);
    });
  }
});

describe('fitsType: Boolean', () => {
  it.each([['true'], ['false']])('accepts %j', (text) => {
    expect(fitsType('Boolean', text)).toBe(true);
  });
  it.each([
    ['True'],
    ['FALSE'],
    ['TRUE'],
    [' true'],
    ['true '],
    ['1'],
    ['0'],
    ['yes'],
    ['no'],
    ['on'],
    [''],
    ['t'],
    ['"true"'],
  ])('refuses %j (exact spelling only)', (text) => {
    expect(fitsType('Boolean', text)).toBe(false);
  });
});

describe('fitsType: Integer (32-bit)', () => {
  it.each([
    ['0'],
    ['-0'],
    ['+0'],
    ['1'],
    ['+1'],
    ['-1'],
    ['007'],
    ['2147483647'],
    ['-2147483648'],
    ['+2147483647'],
    ['00000000002147483647'],
  ])('accepts %j', (text) => {
    expect(fitsType('Integer', text)).toBe(true);
  });
  it.each([
    ['2147483648'],
    ['-2147483649'],
    ['9223372036854775807'],
    ['99999999999999999999999'],
    [''],
    ['+'],
    ['-'],
    [' 1'],
    ['1 '],
    ['1\n'],
    ['\t1'],
    ['1.0'],
    ['1.'],
    ['.5'],
    ['1e5'],
    ['0x10'],
    ['1_000'],
    ['1,000'],
    ['--1'],
    ['+-1'],
    ['\u22121'], // minus sign
    ['\uff11'], // full-width digit one
    ['\u0661'], // Arabic-Indic digit one
    ['NaN'],
    ['Infinity'],
    ['one'],
  ])('refuses %j', (text) => {
    expect(fitsType('Integer', text)).toBe(false);
  });

  it('agrees with the 32-bit range for any integer (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }), (n) => {
        const inRange = n >= -(1n << 31n) && n <= (1n << 31n) - 1n;
        expect(fitsType('Integer', n.toString())).toBe(inRange);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fitsType: Long (64-bit)', () => {
  it.each([
    ['9223372036854775807'],
    ['-9223372036854775808'],
    ['2147483648'],
    ['-2147483649'],
    ['0'],
    ['+9223372036854775807'],
  ])('accepts %j', (text) => {
    expect(fitsType('Long', text)).toBe(true);
  });
  it.each([
    ['9223372036854775808'],
    ['-9223372036854775809'],
    ['18446744073709551616'],
    ['1.0'],
    ['1e3'],
    [' 1'],
    ['1 '],
    [''],
    ['0x1'],
  ])('refuses %j', (text) => {
    expect(fitsType('Long', text)).toBe(false);
  });

  it('agrees with the 64-bit range for any integer (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }), (n) => {
        const inRange = n >= -(1n << 63n) && n <= (1n << 63n) - 1n;
        expect(fitsType('Long', n.toString())).toBe(inRange);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fitsType: Float and Double (finite decimals)', () => {
  const decimals = [
    '0',
    '-0',
    '1',
    '+1',
    '-1',
    '1.5',
    '.5',
    '-.5',
    '1.',
    '1e5',
    '1E5',
    '1e+5',
    '1e-5',
    '2.5E-3',
    '+.5e1',
    '007.25',
    '0.0',
  ];
  for (const type of ['Float', 'Double'] as const) {
    it.each(decimals.map((t) => [t]))(`${type} accepts the decimal form %j`, (text) => {
      expect(fitsType(type, text)).toBe(true);
    });
    it.each([
      [''],
      [' 1'],
      ['1 '],
      ['\t1.5'],
      ['1.5\n'],
      ['.'],
      ['+'],
      ['-'],
      ['e5'],
      ['1e'],
      ['1e+'],
      ['1.2.3'],
      ['1..2'],
      ['NaN'],
      ['nan'],
      ['Infinity'],
      ['-Infinity'],
      ['inf'],
      ['0x1p3'],
      ['0x10'],
      ['1f'],
      ['1d'],
      ['1,5'],
      ['1_000.5'],
      ['--1'],
      ['\u22121.5'],
      ['one'],
    ])(`${type} refuses %j`, (text) => {
      expect(fitsType(type, text)).toBe(false);
    });
  }

  it('Float accepts the largest finite float and its negative', () => {
    expect(fitsType('Float', '3.4028234663852886e38')).toBe(true);
    expect(fitsType('Float', '-3.4028234663852886e38')).toBe(true);
    expect(fitsType('Float', '340282346638528859811704183484516925440')).toBe(true);
  });

  // "3.4028235e38" is how Java prints Float.MAX_VALUE (Float.toString) and parses back to that
  // finite float: the question is whether the text rounds to a finite 32-bit float, not whether
  // the double is at most Float.MAX_VALUE.
  it('Float accepts every text that rounds to a finite 32-bit float, such as Java\'s "3.4028235E38"', () => {
    expect(fitsType('Float', '3.4028235E38')).toBe(true);
    expect(fitsType('Float', '3.4028235e38')).toBe(true);
    expect(fitsType('Float', '-3.4028235e38')).toBe(true);
  });

  it.each([['3.5e38'], ['-3.5e38'], ['1e39'], ['1e309'], ['3.4028236e38']])(
    'Float refuses %j (beyond the float range)',
    (text) => {
      expect(fitsType('Float', text)).toBe(false);
    },
  );

  it('Double accepts the largest finite double, refuses what overflows', () => {
    expect(fitsType('Double', '1.7976931348623157e308')).toBe(true);
    expect(fitsType('Double', '-1.7976931348623157e308')).toBe(true);
    expect(fitsType('Double', '3.5e38')).toBe(true);
    expect(fitsType('Double', '1e308')).toBe(true);
    expect(fitsType('Double', '1e309')).toBe(false);
    expect(fitsType('Double', '-1e309')).toBe(false);
    expect(fitsType('Double', '1.8e308')).toBe(false);
  });

  it('tiny numbers that underflow to zero are still finite', () => {
    expect(fitsType('Float', '1e-50')).toBe(true);
    expect(fitsType('Double', '1e-400')).toBe(true);
  });

  it('Double accepts the text of any finite double (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(fitsType('Double', String(x))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('Float accepts the text of any 32-bit float (property)', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(fitsType('Float', String(x))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fitsType: JSON, Map, List', () => {
  it.each([
    ['{}'],
    ['[]'],
    ['null'],
    ['1'],
    ['"text"'],
    ['true'],
    [' { "a" : [1, 2] } '],
    ['{"a":{"b":null}}'],
    ['-1.5e3'],
  ])('JSON accepts valid JSON %j', (text) => {
    expect(fitsType('JSON', text)).toBe(true);
  });
  it.each([[''], ['{'], ["{'a':1}"], ['{a:1}'], ['[1,]'], ['NaN'], ['undefined'], ['text'], ['01'], ['{"a":1}}']])(
    'JSON refuses invalid JSON %j',
    (text) => {
      expect(fitsType('JSON', text)).toBe(false);
    },
  );

  it.each([['{}'], ['{"a":1}'], [' {"a":[1,{"b":2}]} ']])('Map accepts the object %j', (text) => {
    expect(fitsType('Map', text)).toBe(true);
  });
  it.each([['[]'], ['null'], ['1'], ['"{}"'], ['true'], ['{'], ['']])('Map refuses %j (not a JSON object)', (text) => {
    expect(fitsType('Map', text)).toBe(false);
  });

  it.each([['[]'], ['[1,"a",null]'], [' [ {} ] ']])('List accepts the array %j', (text) => {
    expect(fitsType('List', text)).toBe(true);
  });
  it.each([['{}'], ['null'], ['1'], ['"[]"'], ['['], ['']])('List refuses %j (not a JSON array)', (text) => {
    expect(fitsType('List', text)).toBe(false);
  });

  it('JSON accepts the text of any JSON value; Map/List only objects/arrays (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(fitsType('JSON', text)).toBe(true);
        const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
        expect(fitsType('Map', text)).toBe(isObject);
        expect(fitsType('List', text)).toBe(Array.isArray(value));
      }),
      { numRuns: 200 },
    );
  });
});

describe('describeType', () => {
  const expected: Record<ValueType, string> = {
    Text: 'a Text',
    Code: 'a Code',
    JSON: 'a JSON',
    Boolean: 'a Boolean',
    Integer: 'an Integer',
    Long: 'a Long',
    Float: 'a Float',
    Double: 'a Double',
    Map: 'a Map',
    List: 'a List',
    FileRef: 'a FileRef',
    FileEmbed: 'a FileEmbed',
  };
  it.each(Object.entries(expected))('%s is %j', (type, phrase) => {
    expect(describeType(type as ValueType)).toBe(phrase);
  });
});

describe('valueToText', () => {
  it('null is no value, for every type', () => {
    for (const type of VALUE_TYPES) expect(valueToText(null, type)).toEqual({ ok: true, text: null });
  });

  it('keeps strings exactly, whatever the type', () => {
    for (const type of VALUE_TYPES) {
      for (const text of ['', ' padded ', '{"a":1}', 'line\nline', '12']) {
        expect(valueToText(text, type)).toEqual({ ok: true, text });
      }
    }
  });

  it('turns booleans into true/false', () => {
    expect(valueToText(true, 'Boolean')).toEqual({ ok: true, text: 'true' });
    expect(valueToText(false, 'Text')).toEqual({ ok: true, text: 'false' });
  });

  it.each([
    [0, '0'],
    [-0, '0'],
    [42, '42'],
    [-7, '-7'],
    [1.5, '1.5'],
    [1e-7, '1e-7'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [Number.MIN_SAFE_INTEGER, '-9007199254740991'],
  ])('turns the number %s into %j', (value, text) => {
    expect(valueToText(value, 'Double')).toEqual({ ok: true, text });
  });

  // 9223372036854775807 (a long's maximum) is written as a client would send it: a double cannot hold it.
  // eslint-disable-next-line no-loss-of-precision
  it.each([[2 ** 53], [-(2 ** 53)], [1e21], [9223372036854775807]])(
    'refuses the integer %s that a double cannot hold exactly',
    (value) => {
      const result = valueToText(value, 'Long');
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problem).toMatch(/too large.*string/);
    },
  );

  // Every JSON number of magnitude 2^53 or more is an "integer" in JavaScript; the precision guard
  // ("a number too large to keep exactly") is right for Long, Integer and text keys, but a double
  // holds `1e300` or `1.5e20` exactly as sent.
  it('keeps large JSON numbers for Double and Float keys, which hold them exactly', () => {
    for (const value of [1e300, -1.5e20, 2 ** 60]) {
      const result = valueToText(value, 'Double');
      expect(result.ok, String(value)).toBe(true);
      if (result.ok) expect(Number(result.text)).toBe(value);
    }
    const float = valueToText(1e30, 'Float');
    expect(float.ok).toBe(true);
  });

  it('stores objects and arrays as their JSON text for JSON, Map and List keys', () => {
    expect(valueToText({ a: [1, { b: null }] }, 'JSON')).toEqual({ ok: true, text: '{"a":[1,{"b":null}]}' });
    expect(valueToText({ a: 1 }, 'Map')).toEqual({ ok: true, text: '{"a":1}' });
    expect(valueToText([1, 'x'], 'List')).toEqual({ ok: true, text: '[1,"x"]' });
  });

  it('refuses objects and arrays for other types, naming the type', () => {
    for (const type of VALUE_TYPES.filter((t) => !acceptsStructuredValue(t))) {
      const object = valueToText({ a: 1 }, type);
      expect(object).toEqual({ ok: false, problem: `value is a JSON object but the key is ${describeType(type)}` });
      const array = valueToText([1], type);
      expect(array).toEqual({ ok: false, problem: `value is a JSON array but the key is ${describeType(type)}` });
    }
  });

  it('refuses values that are not JSON', () => {
    expect(valueToText(undefined, 'Text').ok).toBe(false);
    expect(valueToText(() => 1, 'Text').ok).toBe(false);
    expect(valueToText(Symbol('x'), 'Text').ok).toBe(false);
  });
});
