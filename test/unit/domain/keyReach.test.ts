/**
 * domain/keyReach.ts: whether a change of a key leaves what a context reads of it as it was. Never
 * true where the reading differs (a watch would keep an old answer); true where only other
 * contexts' values changed (a watch then makes no answer for it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GroupIndex } from '../../../src/domain/contextGroups.js';
import { readsTheSame } from '../../../src/domain/keyReach.js';
import type { KeyRecord } from '../../../src/domain/model.js';
import { keyWith } from '../../support/records.js';
import { requestContext, resolveValue, type RequestContext } from '../../../src/domain/resolve.js';

const key = keyWith;

const prod = requestContext(['Prod', 'web']);

/** What a context reads of a key: a pull's entry (resolved value and the key's fields), or a template's unresolved name. */
function reading(record: KeyRecord | null, request: RequestContext): unknown {
  if (record === null) return { absent: true };
  const value = resolveValue(record, request);
  if (!value) return { unresolved: record.key };
  const { values: _values, ...fields } = record;
  return { fields, value: value.value, context: [...value.context] };
}

describe('readsTheSame', () => {
  it('is true when only values of other contexts changed', () => {
    const before = key([
      ['Prod;*', 'p'],
      ['Dev;*', 'd'],
    ]);
    expect(
      readsTheSame(
        before,
        key([
          ['Prod;*', 'p'],
          ['Dev;*', 'd2'],
        ]),
        prod,
      ),
    ).toBe(true);
    expect(
      readsTheSame(
        before,
        key([
          ['Prod;*', 'p'],
          ['Dev;*', 'd'],
          ['Test;*', 't'],
        ]),
        prod,
      ),
    ).toBe(true);
  });

  it('is true when a losing or inactive value of the context changed', () => {
    expect(
      readsTheSame(
        key([
          ['*;*', 'g'],
          ['Prod;*', 'p'],
        ]),
        key([
          ['*;*', 'g2'],
          ['Prod;*', 'p'],
        ]),
        prod,
      ),
    ).toBe(true);
    expect(
      readsTheSame(
        key([
          ['Prod;*', 'p'],
          ['Prod;web', 'x', false],
        ]),
        key([
          ['Prod;*', 'p'],
          ['Prod;web', 'y', false],
        ]),
        prod,
      ),
    ).toBe(true);
  });

  it("is false when the context's resolved value changes, or goes, or comes", () => {
    expect(readsTheSame(key([['Prod;*', 'p']]), key([['Prod;*', 'p2']]), prod)).toBe(false);
    expect(
      readsTheSame(
        key([
          ['*;*', 'g'],
          ['Prod;*', 'p'],
        ]),
        key([['*;*', 'g']]),
        prod,
      ),
    ).toBe(false);
    expect(
      readsTheSame(
        key([['Dev;*', 'd']]),
        key([
          ['Dev;*', 'd'],
          ['*;web', 'w'],
        ]),
        prod,
      ),
    ).toBe(false);
    expect(readsTheSame(key([['Prod;*', 'p']]), key([['prod;*', 'p']]), prod)).toBe(false); // the context as written is in the answer
  });

  it("weighs the key's fields only where it resolves", () => {
    expect(readsTheSame(key([['Prod;*', 'p']]), key([['Prod;*', 'p']], { deprecated: true }), prod)).toBe(false);
    expect(readsTheSame(key([['Prod;*', 'p']]), key([['Prod;*', 'p']], { securityGroup: 'secrets' }), prod)).toBe(
      false,
    );
    expect(readsTheSame(key([['Dev;*', 'd']]), key([['Dev;*', 'd']], { readme: 'new', vdt: 'Integer' }), prod)).toBe(
      true,
    );
  });

  it('is false when the key appears or goes, or its name changes case, even resolving nothing', () => {
    const other = key([['Dev;*', 'd']]);
    expect(readsTheSame(null, other, prod)).toBe(false);
    expect(readsTheSame(other, null, prod)).toBe(false);
    expect(readsTheSame(other, { ...other, key: 'DB.Host' }, prod)).toBe(false);
  });

  it('resolves through context groups', () => {
    const groups = requestContext(
      ['Prod', 'web'],
      new GroupIndex(['Env', 'App'], [{ level: 'App', name: 'Frontends', members: ['web'] }]),
    );
    expect(readsTheSame(key([['*;Frontends', 'f']]), key([['*;Frontends', 'f2']]), groups)).toBe(false);
    expect(readsTheSame(key([['*;Frontends', 'f']]), key([['*;Frontends', 'f2']]), prod)).toBe(true); // without the group, not a member
  });

  it('is never true where what the context reads differs (property)', () => {
    const item = (level: string[]) => fc.constantFrom('*', ...level);
    const value = fc.record({
      context: fc.tuple(item(['Prod', 'Dev']), item(['web', 'api'])).map(([e, a]) => [e, a]),
      value: fc.option(fc.constantFrom('a', 'b'), { nil: null }),
      active: fc.boolean(),
    });
    const record = fc.option(
      fc.record({
        key: fc.constantFrom('db.host', 'DB.Host'),
        readme: fc.constantFrom('', 'r'),
        deprecated: fc.boolean(),
        vdt: fc.constantFrom('Text' as const, 'Integer' as const),
        push: fc.constant(true),
        values: fc.uniqueArray(value, { maxLength: 4, selector: (v) => v.context.join(';') }),
      }),
      { nil: null },
    );
    const request = fc
      .tuple(fc.constantFrom('Prod', 'Dev'), fc.constantFrom('web', 'api'))
      .map((items) => requestContext(items));
    fc.assert(
      fc.property(record, record, request, (before, after, context) => {
        if (readsTheSame(before, after, context)) expect(reading(after, context)).toEqual(reading(before, context));
      }),
      { numRuns: 2000 },
    );
    // And it does say true, often: a key read the same by the context it was not changed for.
    let same = 0;
    fc.assert(
      fc.property(record, request, (k, context) => {
        if (k && readsTheSame(k, { ...k }, context)) same++;
      }),
      { numRuns: 200 },
    );
    expect(same).toBeGreaterThan(100);
  });
});
