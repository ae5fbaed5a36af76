/** Context resolution and template rendering, as pure functions. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globToRegExp } from '../../src/domain/glob.js';
import { contentTypeOf } from '../../src/domain/contentType.js';
import type { FileRecord, KeyRecord } from '../../src/domain/model.js';
import { MISSING_VALUE, ReferenceCycleError, renderFile } from '../../src/domain/render.js';
import { contextWeight, requestContext, resolveValue } from '../../src/domain/resolve.js';

const key = (values: [string, string, boolean?][], vdt: KeyRecord['vdt'] = 'Text', name = 'k'): KeyRecord => ({
  key: name,
  readme: '',
  deprecated: false,
  vdt,
  push: true,
  values: values.map(([context, value, active]) => ({ context: context.split(';'), value, active: active ?? true })),
});

const resolve = (k: KeyRecord, context: string) => resolveValue(k, requestContext(context.split(';')))?.value;

describe('resolveValue', () => {
  it("follows ConfigHub's example", () => {
    const k = key([['*;*;*', 'a'], ['Prod;*;*', 'b'], ['*;*;i1', 'c']]);
    expect(resolve(k, 'Prod;web;i1')).toBe('c');
    expect(resolve(k, 'Prod;web;i2')).toBe('b');
    expect(resolve(k, 'Dev;web;i2')).toBe('a');
  });

  it('compares items without regard to case, and skips inactive values', () => {
    const k = key([['*;*;*', 'a'], ['Prod;Web;*', 'b'], ['prod;web;I1', 'c', false]]);
    expect(resolve(k, 'PROD;WEB;i1')).toBe('b');
  });

  it('leaves a key without a qualifying value unresolved', () => {
    expect(resolve(key([['Prod;*;*', 'b']]), 'Dev;web;i1')).toBeUndefined();
  });

  it('gives one more specific level more weight than all wider levels together (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.nat(), (levels, seed) => {
        const deepest = levels - 1;
        const items = Array.from({ length: levels }, (_, i) => `i${i}`);
        const wide = items.map((item, i) => (i === deepest ? '*' : item));
        const deep = items.map((_, i) => (i === deepest ? items[i] : '*'));
        const request = requestContext(items);
        expect(contextWeight(deep, request)).toBeGreaterThan(contextWeight(wide, request));
        expect(contextWeight(items.map((item, i) => (i === seed % levels ? 'other' : item)), request)).toBe(-1);
      }),
    );
  });

  it('matches a requested * only against wildcards', () => {
    const k = key([['*;*;*', 'a'], ['Prod;*;*', 'b']]);
    expect(resolve(k, '*;web;i1')).toBe('a');
  });
});

describe('renderFile', () => {
  const file = (path: string, content: string): FileRecord => ({ path, context: ['*'], content, active: true });
  const source = (keys: KeyRecord[], files: FileRecord[]) => ({
    key: (id: string) => keys.find((k) => k.key.toLowerCase() === id),
    value: (k: KeyRecord) => resolveValue(k, requestContext(['x'])),
    file: (path: string) => files.find((f) => f.path === path),
  });

  it('replaces references with and without spaces, and marks and lists keys without a value', () => {
    const keys = [key([['*', 'h']], 'Text', 'host'), key([['other', 'p']], 'Text', 'port')];
    const rendered = renderFile(file('a.txt', 'h=${ host } h2=${host} p=${ port } q=${nokey}'), source(keys, []));
    expect(rendered.content).toBe(`h=h h2=h p=${MISSING_VALUE} q=${MISSING_VALUE}`);
    expect(rendered.unresolved).toEqual(['port', 'nokey']);
  });

  it('embeds files through FileEmbed keys, nested, and names a cycle', () => {
    const keys = [key([['*', 'b.txt']], 'FileEmbed', 'eb'), key([['*', 'c.txt']], 'FileEmbed', 'ec'), key([['*', 'a.txt']], 'FileEmbed', 'ea')];
    const files = [file('a.txt', 'A[${eb}]'), file('b.txt', 'B[${ec}]'), file('c.txt', 'C')];
    expect(renderFile(files[0], source(keys, files)).content).toBe('A[B[C]]');
    const cyclic = [file('a.txt', 'A[${eb}]'), file('b.txt', 'B[${ea}]')];
    expect(() => renderFile(cyclic[0], source(keys, cyclic))).toThrow(new ReferenceCycleError(['a.txt', 'b.txt', 'a.txt']));
  });
});

describe('globToRegExp and contentTypeOf', () => {
  it.each([
    ['conf/*.properties', 'conf/app.properties', true],
    ['conf/*.properties', 'conf/sub/app.properties', true],
    ['conf/*.properties', 'other/app.properties', false],
    ['?.txt', 'a.txt', true],
    ['?.txt', 'ab.txt', false],
    ['{a,b}.json', 'b.json', true],
    ['{a,b}.json', 'c.json', false],
    ['a+b(c).txt', 'a+b(c).txt', true],
  ])('%s matches %s: %s', (glob, path, matches) => {
    expect(globToRegExp(glob).test(path)).toBe(matches);
  });

  it.each([
    ['a/b.json', 'application/json'],
    ['x.XML', 'application/xml'],
    ['app.properties', 'text/x-java-properties'],
    ['README', 'text/plain'],
    ['.hidden', 'text/plain'],
  ])('%s is %s', (path, type) => {
    expect(contentTypeOf(path)).toBe(type);
  });
});
