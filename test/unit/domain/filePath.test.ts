/**
 * File path rules and the PathIndex that keeps a repository's paths
 * checkable on every file system.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_PATH_LENGTH, normalizeFilePath, PathIndex } from '../../../src/domain/filePath.js';

function accepted(raw: string): string {
  const result = normalizeFilePath(raw);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(raw)} to be accepted, got: ${result.problem}`);
  return result.path;
}

function refused(raw: string): string {
  const result = normalizeFilePath(raw);
  if (result.ok) throw new Error(`expected ${JSON.stringify(raw)} to be refused, got ${JSON.stringify(result.path)}`);
  return result.problem;
}

describe('normalizeFilePath: accepted paths', () => {
  it.each([
    ['a', 'a'],
    ['/a', 'a'],
    ['conf/app.properties', 'conf/app.properties'],
    ['/conf/app.properties', 'conf/app.properties'],
    ['...', '...'],
    ['a/.../b', 'a/.../b'],
    ['.gitignore', '.gitignore'],
    ['.github/x', '.github/x'],
    ['x.git', 'x.git'],
    ['git', 'git'],
    ['a/.git-x/b', 'a/.git-x/b'],
    ['.hidden', '.hidden'],
    ['with space/and tab-free name.txt', 'with space/and tab-free name.txt'],
    ['ünïcödé/файл.txt', 'ünïcödé/файл.txt'],
    ['emoji-🎉.txt', 'emoji-🎉.txt'],
    ['a:b*c?d<e>f|g"h%i', 'a:b*c?d<e>f|g"h%i'],
    ['con', 'con'],
    ['trailing.', 'trailing.'],
  ])('accepts %j as %j', (raw, path) => {
    expect(accepted(raw)).toBe(path);
  });

  it('keeps case: paths are case-sensitive', () => {
    expect(accepted('Conf/App.txt')).toBe('Conf/App.txt');
    expect(accepted('conf/app.txt')).not.toBe(accepted('Conf/App.txt'));
  });

  it('drops only one leading slash', () => {
    expect(refused('//a')).toBe('file path has an empty segment');
  });
});

describe('normalizeFilePath: refused paths', () => {
  it.each([
    ['', 'file path is empty'],
    ['/', 'file path is empty'],
    ['a/', 'file path has an empty segment'],
    ['a//b', 'file path has an empty segment'],
    ['//', 'file path has an empty segment'],
    ['.', "file path has a '.' segment"],
    ['..', "file path has a '..' segment"],
    ['./a', "file path has a '.' segment"],
    ['a/./b', "file path has a '.' segment"],
    ['a/..', "file path has a '..' segment"],
    ['/../etc/passwd', "file path has a '..' segment"],
    ['a\\b', 'file path contains a backslash'],
    ['\\', 'file path contains a backslash'],
    ['..\\..\\x', 'file path contains a backslash'],
  ])('refuses %j: %s', (raw, message) => {
    expect(refused(raw)).toBe(message);
  });

  it.each([['.git'], ['.GIT'], ['.Git'], ['.gIt'], ['a/.git'], ['.git/config'], ['a/.GiT/b'], ['/.git/HEAD']])(
    'refuses the .git segment in %j, in any case',
    (raw) => {
      expect(refused(raw)).toBe("file path has a '.git' segment");
    },
  );

  it.each([0x00, 0x01, 0x07, 0x08, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x7f].map((code) => [code]))(
    'refuses the control character U+%s',
    (code) => {
      const char = String.fromCharCode(code);
      expect(refused(`a${char}b`)).toBe('file path contains a control character');
      expect(refused(`dir/name${char}`)).toBe('file path contains a control character');
    },
  );

  // The C1 control characters U+0080-U+009F (Unicode category Cc, e.g. U+0085 NEXT LINE, U+009B
  // CSI) are control characters too, besides U+0000-U+001F and U+007F.
  it('refuses the C1 control characters U+0080-U+009F', () => {
    for (let code = 0x80; code <= 0x9f; code++) {
      expect(normalizeFilePath(`a${String.fromCharCode(code)}b`).ok, `U+${code.toString(16)}`).toBe(false);
    }
  });

  it('refuses half a surrogate pair, which UTF-8 cannot hold, and keeps whole pairs', () => {
    for (const lone of ['\ud800', '\udbff', '\udc00', '\udfff', 'a\udfff\ud800b']) {
      expect(refused(`dir/${lone}`)).toBe('file path is not valid Unicode (a lone surrogate)');
    }
    expect(normalizeFilePath('dir/\ud83c\udf89.txt').ok).toBe(true);
  });

  it('accepts 1,024 characters and refuses 1,025', () => {
    expect(MAX_PATH_LENGTH).toBe(1024);
    const at = 'a/'.repeat(511) + 'bb'; // 1,024 characters
    expect(at.length).toBe(1024);
    expect(accepted(at)).toBe(at);
    expect(refused(`${at}b`)).toBe('file path is longer than 1024 characters');
    expect(accepted('x'.repeat(1024))).toHaveLength(1024);
    expect(refused('x'.repeat(1025))).toBe('file path is longer than 1024 characters');
  });

  it('counts the length after dropping the leading slash', () => {
    expect(accepted(`/${'x'.repeat(1024)}`)).toHaveLength(1024);
    expect(refused(`/${'x'.repeat(1025)}`)).toBe('file path is longer than 1024 characters');
  });
});

describe('normalizeFilePath: properties', () => {
  const segment = fc
    .string({ minLength: 1, maxLength: 8, unit: 'grapheme' })
    .filter((s) => !/[/\\\u0000-\u001f\u007f]/.test(s) && s !== '.' && s !== '..' && s.toLowerCase() !== '.git');
  const path = fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join('/'));

  it('accepts any path of valid segments, with or without one leading slash, unchanged', () => {
    fc.assert(
      fc.property(path, fc.boolean(), (p, slash) => {
        fc.pre(p.length <= MAX_PATH_LENGTH);
        expect(normalizeFilePath(slash ? `/${p}` : p)).toEqual({ ok: true, path: p });
      }),
      { numRuns: 300 },
    );
  });

  it('the result of an accepted path is accepted again as itself (idempotent)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (raw) => {
        const first = normalizeFilePath(raw);
        if (first.ok && !first.path.startsWith('/')) expect(normalizeFilePath(first.path)).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it('never accepts a path with a control character, a backslash or a `..` segment', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.constantFrom('\u0000', '\n', '\u007f', '\\', '/../', '/./', '//'),
        fc.string({ maxLength: 20 }),
        (a, bad, b) => {
          expect(normalizeFilePath(`x${a}${bad}${b}x`).ok).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('PathIndex', () => {
  it('accepts paths that coexist', () => {
    const index = new PathIndex();
    expect(index.add('a/b')).toBeUndefined();
    expect(index.add('a/c')).toBeUndefined();
    expect(index.add('a/d/e')).toBeUndefined();
    expect(index.add('b')).toBeUndefined();
    expect(index.add('a.b')).toBeUndefined();
  });

  it('accepts the same path again (one path in several contexts)', () => {
    const index = new PathIndex();
    expect(index.add('conf/app.txt')).toBeUndefined();
    expect(index.add('conf/app.txt')).toBeUndefined();
  });

  it('refuses a file that differs only in case from another file', () => {
    const index = new PathIndex();
    index.add('conf/app.txt');
    expect(index.add('conf/APP.txt')).toBe('path conf/APP.txt differs only in case from conf/app.txt');
  });

  it('refuses a folder spelled in another case than an existing folder', () => {
    const index = new PathIndex();
    index.add('Conf/app.txt');
    expect(index.add('conf/other.txt')).toBe('path conf differs only in case from Conf');
    expect(index.add('CONF/deep/x')).toBe('path CONF differs only in case from Conf');
  });

  it('refuses a folder that differs only in case from a file, and the reverse', () => {
    const a = new PathIndex();
    a.add('readme');
    expect(a.add('README/x')).toBe('path README differs only in case from readme');
    const b = new PathIndex();
    b.add('docs/x');
    expect(b.add('DOCS')).toBe('path DOCS differs only in case from docs');
  });

  it('refuses case collisions of non-ASCII letters', () => {
    const index = new PathIndex();
    index.add('é.txt');
    expect(index.add('É.txt')).toBe('path É.txt differs only in case from é.txt');
  });

  it('refuses a file where a folder is, and a folder where a file is', () => {
    const a = new PathIndex();
    a.add('a/b');
    expect(a.add('a')).toBe('path a is already a folder of another file');
    const b = new PathIndex();
    b.add('a');
    expect(b.add('a/b')).toBe('path a is already a file, so it cannot be a folder');
    const c = new PathIndex();
    c.add('a/b');
    expect(c.add('a/b/c/d')).toBe('path a/b is already a file, so it cannot be a folder');
  });

  it('records nothing of a refused path', () => {
    const index = new PathIndex();
    index.add('a/b');
    expect(index.add('A/c')).toBeDefined();
    expect(index.add('a/c')).toBeUndefined(); // the refused `A` spelling was not recorded
    expect(index.add('a/b/x')).toBeDefined();
    expect(index.add('a/b')).toBeUndefined(); // `a/b` is still a file, not a folder
  });

  it('two sets of paths coexist exactly when no two differ only in case and none is a folder of another (property)', () => {
    const seg = fc.constantFrom('a', 'A', 'b', 'B', 'c');
    const p = fc.array(seg, { minLength: 1, maxLength: 3 }).map((s) => s.join('/'));
    fc.assert(
      fc.property(fc.array(p, { minLength: 1, maxLength: 6 }), (paths) => {
        const index = new PathIndex();
        const accepted: string[] = [];
        for (const path of paths) {
          const problem = index.add(path);
          // model: the path conflicts with an accepted one when a prefix matches without regard to
          // case but not exactly, or one is a proper prefix folder of the other.
          const prefixes = (x: string) => x.split('/').map((_, i, all) => all.slice(0, i + 1).join('/'));
          const conflict = accepted.some((other) => {
            const mine = prefixes(path);
            const theirs = prefixes(other);
            for (let i = 0; i < Math.min(mine.length, theirs.length); i++) {
              if (mine[i] !== theirs[i] && mine[i].toLowerCase() === theirs[i].toLowerCase()) return true;
              if (mine[i] !== theirs[i]) return false;
            }
            return mine.length !== theirs.length; // one is a folder of the other
          });
          expect(problem !== undefined, `${path} after ${JSON.stringify(accepted)}: ${problem}`).toBe(conflict);
          if (!problem) accepted.push(path);
        }
      }),
      { numRuns: 300 },
    );
  });
});
