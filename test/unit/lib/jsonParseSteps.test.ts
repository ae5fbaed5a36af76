/**
 * A push body parsed in steps is exactly what JSON.parse makes of it, and a
 * text that is not JSON is refused, as JSON.parse refuses it. Run with small thresholds so every
 * container takes the large path (member by member) as well as the small one (JSON.parse whole).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonSyntaxError,
  JsonTooDeep,
  MAX_JSON_DEPTH,
  parseJsonSteps,
  SMALL_CONTAINER,
} from '../../../src/lib/jsonParseSteps.js';
import { runSteps } from '../../../src/lib/steps.js';

const parsed = (text: string, small: number) => runSteps(parseJsonSteps(text, small));

/** JSON.parse's answer, or 'refused'. */
function reference(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return 'refused';
  }
}

function ours(text: string, small: number): unknown {
  try {
    return parsed(text, small);
  } catch (error) {
    if (error instanceof JsonSyntaxError || error instanceof JsonTooDeep) return 'refused';
    throw error;
  }
}

/** Deep equality that also tells an own `__proto__` member and key order apart. */
const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b));

describe('parseJsonSteps', () => {
  it('gives what JSON.parse gives, for any JSON text, whatever the size from which a container is built member by member', () => {
    fc.assert(
      fc.property(fc.json({ depthSize: 'medium' }), fc.integer({ min: 1, max: 64 }), (text, small) => {
        same(parsed(text, small), JSON.parse(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps __proto__ as an own member, duplicate names as JSON.parse does (the last value, the first place)', () => {
    const text = '{"__proto__": {"polluted": true}, "a": [1, 2, {"__proto__": 1}], "b": 1, "a": "again", "1": 0}';
    for (const small of [1, 5, 10_000]) {
      const value = parsed(text, small) as Record<string, unknown>;
      same(value, JSON.parse(text));
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value)).toEqual(Object.keys(JSON.parse(text)));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it('refuses what JSON.parse refuses, and accepts what it accepts, for JSON with a mistake put in', () => {
    const mistakes = fc.constantFrom(',', ']', '}', '[', '{', '"', ':', '\\', 'x', ' ', '1', '\n', '\u0001');
    fc.assert(
      fc.property(
        fc.json(),
        fc.nat(),
        mistakes,
        fc.boolean(),
        fc.integer({ min: 1, max: 16 }),
        (text, where, mistake, replace, small) => {
          const at = where % (text.length + 1);
          const changed = text.slice(0, at) + mistake + text.slice(replace ? at + 1 : at);
          const expected = reference(changed);
          const actual = ours(changed, small);
          if (expected === 'refused') expect(actual).toBe('refused');
          else same(actual, expected);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels before building anything`, () => {
    expect(() => parsed(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`, 16)).toThrow(JsonTooDeep);
    same(
      parsed(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`, 16),
      JSON.parse(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`),
    );
  });

  it('pauses at least once per two small containers of text', () => {
    const text = JSON.stringify({
      data: Array.from({ length: 20_000 }, (_, i) => ({
        key: `k${i}`,
        values: [{ context: '*', value: Array(20).fill(i) }],
      })),
    });
    const steps = parseJsonSteps(text);
    let pauses = 0;
    let next = steps.next();
    while (!next.done) {
      pauses++;
      next = steps.next();
    }
    same(next.value, JSON.parse(text));
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(text.length / (2 * SMALL_CONTAINER)));
  });
});
