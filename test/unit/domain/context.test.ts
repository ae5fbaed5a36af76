/**
 * Context paths: one item per level, `*` or an empty item as the wildcard,
 * items trimmed and matched without regard to case, letters and digits joined by single `- . _ +`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareContexts,
  inStorageOrder,
  contextId,
  formatContext,
  isValidLevelName,
  MAX_LEVELS,
  MIN_LEVELS,
  parseContext,
  WILDCARD,
} from '../../../src/domain/context.js';
import { contextItemOrWildcard } from '../../support/arbitraries.js';

function parsed(text: string, levels: number): readonly string[] {
  const result = parseContext(text, levels);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(text)} to parse, got: ${result.problem}`);
  return result.context;
}

function problem(text: string, levels: number): string {
  const result = parseContext(text, levels);
  if (result.ok)
    throw new Error(`expected ${JSON.stringify(text)} to be refused, got ${JSON.stringify(result.context)}`);
  return result.problem;
}

describe('parseContext: items and wildcards', () => {
  it('keeps item spelling and order, widest first', () => {
    expect(parsed('Production;MyApp;Instance-1', 3)).toEqual(['Production', 'MyApp', 'Instance-1']);
  });

  it('reads `*` as the wildcard', () => {
    expect(parsed('*;*;*', 3)).toEqual(['*', '*', '*']);
    expect(parsed('Prod;*', 2)).toEqual(['Prod', WILDCARD]);
  });

  it('reads an empty item as the wildcard, anywhere, trailing included', () => {
    expect(parsed(';;', 3)).toEqual(['*', '*', '*']);
    expect(parsed('a;;b', 3)).toEqual(['a', '*', 'b']);
    expect(parsed(';a;', 3)).toEqual(['*', 'a', '*']);
    expect(parsed('a;*;', 3)).toEqual(['a', '*', '*']);
    expect(parsed('', 1)).toEqual(['*']);
  });

  it('trims items: spaces and tabs around an item do not count', () => {
    expect(parsed(' Prod ; MyApp\t;\t* ', 3)).toEqual(['Prod', 'MyApp', '*']);
    expect(parsed('  ;  ', 2)).toEqual(['*', '*']);
    expect(parsed(' \t ', 1)).toEqual(['*']);
  });

  it.each([['a'], ['A1'], ['1'], ['a-b'], ['a.b'], ['a_b'], ['a+b'], ['a-b.c_d+e'], ['v1.2.3'], ['x'.repeat(120)]])(
    'accepts the item %j',
    (item) => {
      expect(parsed(item, 1)).toEqual([item]);
    },
  );

  it.each([
    ['-a'],
    ['a-'],
    ['a--b'],
    ['a.-b'],
    ['.a'],
    ['a.'],
    ['_'],
    ['+'],
    ['a b'],
    ['a/b'],
    ['a\\b'],
    ['a:b'],
    ['a,b'],
    ['a*'],
    ['**'],
    ['*a'],
    ['é'],
    ['a\u0000'],
    ['a\nb'],
    ['a#b'],
    ['x'.repeat(121)],
  ])('refuses the item %j, naming its position', (item) => {
    expect(problem(`ok;${item}`, 2)).toBe(
      "context item 2 is not letters and digits joined by single '-', '.', '_' or '+'",
    );
  });

  it('names the first invalid item', () => {
    expect(problem('ok;b-;c-', 3)).toMatch(/^context item 2 /);
    expect(problem('a b;ok', 2)).toMatch(/^context item 1 /);
  });
});

describe('parseContext: counts', () => {
  it.each([
    ['a', 2, 'context has 1 item, the repository has 2 levels'],
    ['a;b', 1, 'context has 2 items, the repository has 1 level'],
    ['a;b;c', 2, 'context has 3 items, the repository has 2 levels'],
    ['a;*;', 2, 'context has 3 items, the repository has 2 levels'],
    [';', 1, 'context has 2 items, the repository has 1 level'],
    ['', 2, 'context has 1 item, the repository has 2 levels'],
    ['a;b', 3, 'context has 2 items, the repository has 3 levels'],
  ])('%j with %i levels is refused: %s', (text, levels, message) => {
    expect(problem(text, levels)).toBe(message);
  });

  it('checks the count before the items', () => {
    expect(problem('bad item;x;y', 2)).toMatch(/^context has 3 items/);
  });

  it('supports 1 to 10 levels', () => {
    expect(MIN_LEVELS).toBe(1);
    expect(MAX_LEVELS).toBe(10);
    const ten = Array.from({ length: 10 }, (_, i) => `L${i}`);
    expect(parsed(ten.join(';'), 10)).toEqual(ten);
  });
});

describe('formatContext, contextId and compareContexts', () => {
  it('formats with `;` between items', () => {
    expect(formatContext(['Production', '*', 'x'])).toBe('Production;*;x');
    expect(formatContext(['*'])).toBe('*');
  });

  it('identifies contexts without regard to case', () => {
    expect(contextId(['Production', 'MyApp'])).toBe(contextId(['PRODUCTION', 'myapp']));
    expect(contextId(['Production', '*'])).not.toBe(contextId(['Production', 'MyApp']));
    expect(contextId(['a', 'b'])).not.toBe(contextId(['b', 'a']));
  });

  it('orders contexts by identity, so spelling does not change the order', () => {
    expect(compareContexts(['b'], ['a'])).toBeGreaterThan(0);
    expect(compareContexts(['a'], ['b'])).toBeLessThan(0);
    expect(compareContexts(['A'], ['b'])).toBeLessThan(0);
    expect(compareContexts(['B'], ['a'])).toBeGreaterThan(0);
    expect(compareContexts(['Prod', '*'], ['prod', '*'])).toBe(0);
    const sorted = [
      ['b', 'x'],
      ['A', 'y'],
      ['*', 'z'],
      ['a', 'X'],
    ]
      .sort(compareContexts)
      .map(formatContext);
    expect(sorted).toEqual(['*;z', 'a;X', 'A;y', 'b;x']);
  });
});

describe('isValidLevelName', () => {
  it.each([['Environment'], ['App1'], ['a-b'], ['a.b'], ['a_b'], ['x'.repeat(120)]])('accepts %j', (name) => {
    expect(isValidLevelName(name)).toBe(true);
  });
  it.each([[''], ['a+b'], ['a b'], ['-a'], ['a-'], ['a--b'], ['*'], ['x'.repeat(121)], ['é']])('refuses %j', (name) => {
    expect(isValidLevelName(name)).toBe(false);
  });
});

// --- properties --------------------------------------------------------------------------------

const context = fc.array(contextItemOrWildcard, { minLength: MIN_LEVELS, maxLength: MAX_LEVELS });

describe('properties', () => {
  it('parseContext(formatContext(c)) gives back c for any valid context', () => {
    fc.assert(
      fc.property(context, (c) => {
        const result = parseContext(formatContext(c), c.length);
        expect(result).toEqual({ ok: true, context: c });
      }),
      { numRuns: 300 },
    );
  });

  it('padding items with spaces changes nothing', () => {
    fc.assert(
      fc.property(
        context,
        fc.array(fc.constantFrom('', ' ', '  ', '\t'), { minLength: 2, maxLength: 2 }),
        (c, [left, right]) => {
          const text = c.map((i) => `${left}${i}${right}`).join(';');
          expect(parseContext(text, c.length)).toEqual({ ok: true, context: c });
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a context with one item too many or too few is always refused', () => {
    fc.assert(
      fc.property(context, fc.boolean(), (c, more) => {
        const levels = more ? c.length - 1 : c.length + 1;
        fc.pre(levels >= 1);
        expect(parseContext(formatContext(c), levels).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('contextId ignores case; compareContexts is 0 exactly when the ids are equal', () => {
    fc.assert(
      fc.property(context, context, (a, b) => {
        expect(contextId(a)).toBe(contextId(a.map((x) => x.toUpperCase())));
        expect(compareContexts(a, b) === 0).toBe(contextId(a) === contextId(b));
        expect(Math.sign(compareContexts(a, b)) + Math.sign(compareContexts(b, a))).toBe(0); // antisymmetric
      }),
      { numRuns: 200 },
    );
  });

  it('inStorageOrder sorts as compareContexts does, keeping the order of equal contexts (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(context, fc.nat()), { maxLength: 12 }), (pairs) => {
        const items = pairs.map(([c, n]) => ({ context: c, n }));
        expect(inStorageOrder(items)).toEqual([...items].sort((x, y) => compareContexts(x.context, y.context)));
      }),
      { numRuns: 200 },
    );
  });
});
