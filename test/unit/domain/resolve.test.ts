/** Context resolution and template rendering, as pure functions. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, MAX_GLOB_LENGTH } from '../../../src/domain/glob.js';
import { contentTypeOf } from '../../../src/domain/contentType.js';
import type { FileRecord, KeyRecord } from '../../../src/domain/model.js';
import { MISSING_VALUE, Renderer, renderFile } from '../../../src/domain/render.js';
import { deepestEmbedProblem } from '../../../src/domain/embedDepth.js';
import { MAX_EMBED_DEPTH, MAX_RENDERED_FILE_CHARS } from '../../../src/domain/renderLimits.js';
import { contextWeight, requestContext, resolveValue } from '../../../src/domain/resolve.js';
import { ReferenceCycleError, RenderLimitError } from '../../../src/domain/errors.js';

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
    const k = key([
      ['*;*;*', 'a'],
      ['Prod;*;*', 'b'],
      ['*;*;i1', 'c'],
    ]);
    expect(resolve(k, 'Prod;web;i1')).toBe('c');
    expect(resolve(k, 'Prod;web;i2')).toBe('b');
    expect(resolve(k, 'Dev;web;i2')).toBe('a');
  });

  it('compares items without regard to case, and skips inactive values', () => {
    const k = key([
      ['*;*;*', 'a'],
      ['Prod;Web;*', 'b'],
      ['prod;web;I1', 'c', false],
    ]);
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
        expect(
          contextWeight(
            items.map((item, i) => (i === seed % levels ? 'other' : item)),
            request,
          ),
        ).toBe(-1);
      }),
    );
  });

  it('matches a requested * only against wildcards', () => {
    const k = key([
      ['*;*;*', 'a'],
      ['Prod;*;*', 'b'],
    ]);
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
    const keys = [
      key([['*', 'b.txt']], 'FileEmbed', 'eb'),
      key([['*', 'c.txt']], 'FileEmbed', 'ec'),
      key([['*', 'a.txt']], 'FileEmbed', 'ea'),
    ];
    const files = [file('a.txt', 'A[${eb}]'), file('b.txt', 'B[${ec}]'), file('c.txt', 'C')];
    expect(renderFile(files[0], source(keys, files)).content).toBe('A[B[C]]');
    const cyclic = [file('a.txt', 'A[${eb}]'), file('b.txt', 'B[${ea}]')];
    expect(() => renderFile(cyclic[0], source(keys, cyclic))).toThrow(
      new ReferenceCycleError(['a.txt', 'b.txt', 'a.txt']),
    );
  });

  /** Files f0..fN, each embedding the next `times` times (through key eI, naming fI). */
  const ladder = (levels: number, times: number, last: string) => {
    const keys = Array.from({ length: levels }, (_, i) => key([['*', `f${i + 1}`]], 'FileEmbed', `e${i + 1}`));
    const files = Array.from({ length: levels + 1 }, (_, i) =>
      file(`f${i}`, i < levels ? `\${e${i + 1}}`.repeat(times) : last),
    );
    return { keys, files };
  };

  it('renders each path once per renderer, however often it is embedded', () => {
    const { keys, files } = ladder(10, 2, 'x');
    const src = source(keys, files);
    let lookups = 0;
    const counted = { ...src, file: (path: string) => (lookups++, src.file(path)) };
    const renderer = new Renderer(counted);
    expect(renderer.render(files[0]).content).toBe('x'.repeat(1024));
    expect(lookups).toBe(10);
    expect(renderer.render(files[3]).content).toBe('x'.repeat(128));
    expect(lookups).toBe(10);
  });

  it(`embeds ${MAX_EMBED_DEPTH} levels, and names the file beyond (also through files rendered before), without recursion`, () => {
    const ok = ladder(MAX_EMBED_DEPTH, 1, 'end');
    expect(renderFile(ok.files[0], source(ok.keys, ok.files)).content).toBe('end');
    const deep = ladder(5000, 1, 'end');
    const renderer = new Renderer(source(deep.keys, deep.files));
    expect(renderer.render(deep.files[4990]).content).toBe('end');
    expect(() => renderer.render(deep.files[0])).toThrow(RenderLimitError);
    expect(() => renderer.render(deep.files[0])).toThrow(/file f0 embeds files more than/);
  });

  it('stops a file at the rendered size limit, naming it, before building it', () => {
    // f16 is 1,024 characters and each file above twice the one below: f4 is exactly the limit (2^22), f3 twice it.
    const { keys, files } = ladder(16, 2, 'x'.repeat(1024));
    let error: unknown;
    try {
      renderFile(files[0], source(keys, files));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RenderLimitError);
    expect(MAX_RENDERED_FILE_CHARS).toBe(2 ** 22);
    expect((error as RenderLimitError).file).toBe('f3');
  });
});

describe('compileGlob and contentTypeOf', () => {
  it.each([
    ['conf/*.properties', 'conf/app.properties', true],
    ['conf/*.properties', 'conf/sub/app.properties', true],
    ['conf/*.properties', 'other/app.properties', false],
    ['?.txt', 'a.txt', true],
    ['?.txt', 'ab.txt', false],
    ['{a,b}.json', 'b.json', true],
    ['{a,b}.json', 'c.json', false],
    ['a+b(c).txt', 'a+b(c).txt', true],
    ['*', '', true],
    ['', '', true],
    ['', 'a', false],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'aXcYb', false],
    ['{a,{b,c}x}.txt', 'cx.txt', true],
    ['{a,{b,c}x}.txt', 'c.txt', false],
    ['{a,b', 'b', true],
    ['a,b}', 'a,b}', true],
    ['{,x}y', 'y', true],
    ['{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}X', 'a'.repeat(200) + 'X', true],
    ['{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}X', 'a'.repeat(200) + 'Y', false],
    ['?\u00e9?', 'a\u00e9b', true],
    ['?', '\u{1f600}', true],
  ])('%s matches %s: %s', (glob, path, matches) => {
    expect(compileGlob(glob).test(path)).toBe(matches);
  });

  it('agrees with a regular expression on random patterns and paths', () => {
    const alphabet = ['a', 'b', '/', '*', '?', '{', '}', ','];
    const random = (length: number, chars: string[]) =>
      Array.from({ length }, () => chars[Math.floor(Math.random() * chars.length)]).join('');
    for (let i = 0; i < 2000; i++) {
      const glob = random(Math.floor(Math.random() * 8), alphabet);
      const path = random(Math.floor(Math.random() * 8), ['a', 'b', '/']);
      expect(compileGlob(glob).test(path), `${glob} on ${path}`).toBe(referenceRegExp(glob).test(path));
    }
  });

  it(`refuses a pattern over ${MAX_GLOB_LENGTH} characters`, () => {
    expect(() => compileGlob('a'.repeat(MAX_GLOB_LENGTH))).not.toThrow();
    expect(() => compileGlob('a'.repeat(MAX_GLOB_LENGTH + 1))).toThrow(/Files-Glob has 257 characters/);
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

/** The former regular-expression translation, kept here only as the reference for small inputs. */
function referenceRegExp(pattern: string): RegExp {
  let source = '';
  let depth = 0;
  for (const char of pattern) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (char === '{') {
      source += '(?:';
      depth++;
    } else if (char === '}' && depth > 0) {
      source += ')';
      depth--;
    } else if (char === ',' && depth > 0) source += '|';
    else source += char.replace(/[.+^$()|[\]\\{}]/g, '\\$&');
  }
  source += ')'.repeat(depth);
  return new RegExp(`^${source}$`, 'su');
}

describe('deepestEmbedProblem', () => {
  const file = (path: string, content: string, context = ['*']): FileRecord => ({
    path,
    context,
    content,
    active: true,
  });
  const embeds = (name: string, ...paths: string[]) =>
    key(
      paths.map((p, i) => [i === 0 ? '*' : `c${i}`, p]),
      'FileEmbed',
      name,
    );

  it('counts the deepest chain over every context of each FileEmbed key, and leaves cycles to the pull', () => {
    const keys = [embeds('e1', 'f1'), embeds('e2', 'f2', 'f0')];
    const lookup = (id: string) => keys.find((k) => k.key.toLowerCase() === id);
    expect(deepestEmbedProblem([file('f0', '${e1}'), file('f1', '${e2}'), file('f2', 'end')], lookup)).toBeUndefined();
    const chain = Array.from({ length: MAX_EMBED_DEPTH + 2 }, (_, i) =>
      file(`p${i}`, i <= MAX_EMBED_DEPTH ? `\${k${i + 1}}` : 'end'),
    );
    const chainKeys = chain.map((_, i) => embeds(`k${i + 1}`, `p${i + 1}`));
    const find = (id: string) => chainKeys.find((k) => k.key.toLowerCase() === id);
    expect(deepestEmbedProblem(chain.slice(0, MAX_EMBED_DEPTH + 1), find)).toBeUndefined();
    expect(deepestEmbedProblem(chain, find)).toMatchObject({
      path: 'p0',
      chain: expect.arrayContaining(['p0', 'p1', `p${MAX_EMBED_DEPTH + 1}`]),
    });
    // Reversed order of files: the same answer.
    expect(deepestEmbedProblem([...chain].reverse(), find)?.path).toBe('p0');
  });
});
