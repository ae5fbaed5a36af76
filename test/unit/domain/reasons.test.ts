/**
 * Refusal reasons travel in the ETag header: quoted, single-line,
 * printable ASCII with no `"` inside. Texts bound for logs and stderr never carry a filesystem path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerSafeReason, shown, withoutPaths } from '../../../src/domain/reasons.js';

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Any text, with `"`, line breaks, control characters, lone surrogates and astral characters mixed in. */
const anyText = fc
  .array(
    fc.oneof(
      fc.constantFrom('"', '\n', '\r', '\u0000', '\u007f', '\ud800', '\udc00', '\u2028', '🎉'),
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.string({ unit: 'grapheme-ascii', maxLength: 8 }),
    ),
    { maxLength: 100 },
  )
  .map((parts) => parts.join(''));

describe('headerSafeReason', () => {
  it('keeps a plain reason as it is', () => {
    const reason = 'data[2] key db.port: value is not an Integer';
    expect(headerSafeReason(reason)).toBe(reason);
  });

  it.each([
    ['a "quoted" word', 'a ?quoted? word'],
    ['two\nlines', 'two?lines'],
    ['cr\r\nlf', 'cr??lf'],
    ['tab\there', 'tab?here'],
    ['nul\u0000', 'nul?'],
    ['del\u007f', 'del?'],
    ['café', 'caf?'],
    ['emoji 🎉', 'emoji ??'],
    ['\u2028sep', '?sep'],
    ['\u00a0nbsp', '?nbsp'],
  ])('replaces what an ETag cannot carry: %j -> %j', (reason, safe) => {
    expect(headerSafeReason(reason)).toBe(safe);
  });

  it('keeps every printable ASCII character except `"`', () => {
    let all = '';
    for (let code = 0x20; code <= 0x7e; code++) all += String.fromCharCode(code);
    expect(headerSafeReason(all)).toBe(all.replace('"', '?'));
  });

  it('cuts reasons over 400 characters and marks the cut', () => {
    expect(headerSafeReason('x'.repeat(400))).toBe('x'.repeat(400));
    expect(headerSafeReason('x'.repeat(401))).toBe(`${'x'.repeat(400)}...`);
  });

  it('gives a single-line printable-ASCII text without `"` for any input (property)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const safe = headerSafeReason(text);
        expect(safe).toMatch(PRINTABLE_ASCII);
        expect(safe).not.toContain('"');
        expect(safe.length).toBeLessThanOrEqual(403);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps safe input unchanged up to the limit (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[\x20\x21\x23-\x7e]{0,400}$/), (text) => {
        expect(headerSafeReason(text)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});

describe('shown', () => {
  it('makes a client-supplied name safe and short', () => {
    expect(shown('db.port')).toBe('db.port');
    expect(shown('bad"name\n')).toBe('bad?name?');
    expect(shown('é')).toBe('?');
    expect(shown('k'.repeat(80))).toBe('k'.repeat(80));
    expect(shown('k'.repeat(81))).toBe(`${'k'.repeat(80)}...`);
  });

  it('is always printable ASCII without `"`, at most 83 characters (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'binary' }), (text) => {
        const safe = shown(text);
        expect(safe).toMatch(PRINTABLE_ASCII);
        expect(safe).not.toContain('"');
        expect(safe.length).toBeLessThanOrEqual(83);
      }),
      { numRuns: 300 },
    );
  });
});

describe('withoutPaths', () => {
  it.each([
    [
      "ENOENT: no such file or directory, open '/srv/cfghub/repos/acme/app.git/HEAD'",
      "ENOENT: no such file or directory, open '<path>'",
    ],
    ['EACCES: permission denied, mkdir "/var/lib/cfghub/acme"', 'EACCES: permission denied, mkdir "<path>"'],
    ['failed at /home/user/repos/x.git: bad', 'failed at <path>: bad'],
    ['C:\\Users\\me\\repos\\acme\\app.git is locked', '<path> is locked'],
    ['D:/data/repos/x is locked', '<path> is locked'],
    ['from /a/b to /c/d', 'from <path> to <path>'],
    ['    at readRef (/opt/cfghub/src/disk/refs.ts:19:23)', '    at readRef (<path>:19:23)'],
    ['/tmp/x', '<path>'],
  ])('strips the path from %j', (text, stripped) => {
    expect(withoutPaths(text)).toBe(stripped);
  });

  it('leaves texts without paths alone', () => {
    for (const text of [
      'repository acme/app does not exist',
      'key db.port: value is not an Integer',
      'a / b',
      'no paths here',
      '',
    ]) {
      expect(withoutPaths(text)).toBe(text);
    }
  });

  it('leaves no absolute path of two or more segments behind (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._-]{1,10}$/);
    const path = fc.array(segment, { minLength: 2, maxLength: 6 }).map((s) => `/${s.join('/')}`);
    const words = fc.stringMatching(/^[A-Za-z ,.]{0,20}$/);
    fc.assert(
      fc.property(words, path, fc.constantFrom("'", '"', ' ', '('), words, (before, p, quote, after) => {
        const out = withoutPaths(`${before}${quote}${p}${quote} ${after}`);
        expect(out).not.toContain(p);
        expect(out).toContain('<path>');
      }),
      { numRuns: 300 },
    );
  });

  // A one-segment absolute path, such as a repositories folder `/repos` (a common choice in
  // containers: `--repos /repos`), is a path too.
  it('strips a one-segment absolute path too', () => {
    expect(withoutPaths("EACCES: permission denied, mkdir '/repos'")).toBe("EACCES: permission denied, mkdir '<path>'");
  });
});
