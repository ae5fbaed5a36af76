import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSyntaxProblem, lineAndColumn } from '../../../src/lib/jsonSyntax.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('jsonSyntaxProblem', () => {
  it.each([
    ['{"a": 1,}', 8, 'a property name in double quotes was expected'],
    ['{"a" 1}', 5, "':' was expected after a property name"],
    ['abc', 0, 'unexpected character'],
    ['{"a": tru}', 6, 'unexpected character'],
    ['{"a": "x', 8, 'a string is not closed'],
    ['', 0, 'the text ends too early'],
    ['{"a":1}x', 7, 'unexpected text after the JSON value'],
    ['[1,2', 4, 'the text ends too early'],
    ['[1 2]', 3, "',' or ']' was expected"],
    ['{"a": 01}', 7, "',' or '}' was expected"],
    ['{"a": -}', 7, 'a digit was expected'],
    ['{"a": 1.}', 8, 'a digit was expected after the decimal point'],
    ['"\\x"', 1, 'an unknown escape'],
    ['"\\u12g4"', 1, '4 hex digits'],
    ['"a\nb"', 2, 'a control character'],
  ])('finds the mistake in %j at offset %i', (text, offset, problem) => {
    expect(parses(text)).toBe(false);
    const found = jsonSyntaxProblem(text);
    expect(found?.offset).toBe(offset);
    expect(found?.problem).toContain(problem);
  });

  it('agrees with JSON.parse on which texts are JSON', () => {
    const near = fc.oneof(
      fc.json(),
      fc.json().map((text) => text.slice(0, -1)),
      fc
        .tuple(fc.json(), fc.nat(), fc.constantFrom(',', '}', ']', '"', ':', 'x', ' ', '\\', '-', '.', 'e', '0'))
        .map(([text, at, c]) => {
          const i = at % (text.length + 1);
          return text.slice(0, i) + c + text.slice(i);
        }),
      fc.string(),
    );
    fc.assert(
      fc.property(near, (text) => (jsonSyntaxProblem(text) === undefined) === parses(text)),
      { numRuns: 2000 },
    );
  });

  it('is not fooled by deep nesting (no recursion)', () => {
    expect(jsonSyntaxProblem('['.repeat(200_000) + ']'.repeat(200_000))).toBeUndefined();
    expect(jsonSyntaxProblem('['.repeat(200_000))?.problem).toBe('the text ends too early');
  });
});

describe('lineAndColumn', () => {
  it('counts lines and columns from 1', () => {
    expect(lineAndColumn('ab', 1)).toEqual({ line: 1, column: 2 });
    expect(lineAndColumn('{\n  "a": x\n}', 9)).toEqual({ line: 2, column: 8 });
  });
});
