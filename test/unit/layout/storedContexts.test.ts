/**
 * Stored values' contexts are parsed once per distinct text and shared (storedContexts.ts): two
 * key documents naming the same context hold the same frozen array, equal to the text's items,
 * and the table stays within its bound.
 */
import { describe, expect, it } from 'vitest';
import { parseKey, serializeKey } from '../../../src/layout/layout.js';
import { CONTEXTS_KEPT, storedContext } from '../../../src/layout/storedContexts.js';
import type { KeyRecord } from '../../../src/domain/model.js';

const key = (name: string, contexts: string[][]): KeyRecord => ({
  key: name,
  readme: '',
  deprecated: false,
  vdt: 'Text',
  push: true,
  values: contexts.map((context, i) => ({ context, value: `v${i}`, active: true })),
});

describe('stored contexts', () => {
  it('are one frozen array per distinct text, shared by the values of every document naming it, read either way', () => {
    const production = ['Production', 'web', 'node-1'];
    const a = parseKey(serializeKey(key('a', [production, ['Staging', '*', '*']])), 'a');
    const b = parseKey(serializeKey(key('b', [['Staging', '*', '*'], production])), 'b');
    const edited = parseKey(`# edited by hand\n${serializeKey(key('c', [production]))}`, 'c'); // the yaml library's reader
    expect(a.values[0].context).toEqual(production);
    expect(b.values[1].context).toBe(a.values[0].context);
    expect(b.values[0].context).toBe(a.values[1].context);
    expect(edited.values[0].context).toBe(a.values[0].context);
    expect(Object.isFrozen(a.values[0].context)).toBe(true);
    expect(() => (a.values[0].context as string[]).push('x')).toThrow(TypeError);
  });

  it('start again past their bound, and still parse every text to its items', () => {
    const first = storedContext('Bound;test;0');
    for (let i = 1; i <= CONTEXTS_KEPT; i++) storedContext(`Bound;test;${i}`);
    const again = storedContext('Bound;test;0');
    expect(again).toEqual(['Bound', 'test', '0']);
    expect(again).not.toBe(first); // the table started again: a new array, the same items
    expect(storedContext('Bound;test;0')).toBe(again);
  });
});
