/**
 * Answers serialized in slices give the very bytes and ETag of the one-piece
 * serialization they replace: `JSON.stringify` (compact and pretty), `answerOf`, and a pull's text
 * with `generatedOn` last and its ETag made of the content alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonSteps, STRING_RUN } from '../../../../src/lib/jsonSteps.js';
import { runSteps } from '../../../../src/lib/steps.js';
import { jsonAnswer, pullAnswer } from '../../../../src/service/answers/answerInSlices.js';
import { answerOf, type Answer } from '../../../../src/service/answers/readCache.js';
import { TimeSlices } from '../../../../src/lib/timeSlices.js';

function text(value: unknown, pretty: boolean): string | undefined {
  const pieces: string[] = [];
  runSteps(jsonSteps(value, pretty, (piece) => pieces.push(piece)));
  return pieces.length === 0 ? undefined : pieces.join('');
}

const strings = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('__proto__', 'constructor', '\u2028', '"\\', ''),
);
const values = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    strings,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value')),
    fc.dictionary(strings, tie('value')),
    fc.dictionary(strings, tie('value')).map((members) => Object.assign(Object.create(null) as object, members)),
    fc.date({ noInvalidDate: true }),
  ),
})).value;

/** A string longer than a run, with a surrogate pair across each run boundary and lone halves. */
const long = `${'a'.repeat(STRING_RUN - 1)}😀${'b\n"'.repeat(STRING_RUN)}\ud800x\udc00${'é'.repeat(STRING_RUN - 2)}😀😀`;

describe('jsonSteps', () => {
  it('writes exactly the text of JSON.stringify, compact and pretty, for any JSON-like value', () => {
    fc.assert(
      fc.property(values, fc.boolean(), (value, pretty) => {
        expect(text(value, pretty)).toBe(pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it('cuts a long string into runs without splitting a surrogate pair', () => {
    for (const pretty of [false, true])
      expect(text({ files: { 'a.txt': { content: long } }, list: [long, undefined] }, pretty)).toBe(
        JSON.stringify(
          { files: { 'a.txt': { content: long } }, list: [long, undefined] },
          null,
          pretty ? 2 : undefined,
        ),
      );
  });

  it('pauses between members, so a large value is serialized in slices', async () => {
    const slices = new TimeSlices(0); // every step is a slice's worth
    const properties = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, { val: `v${i}` }]));
    const answer = await jsonAnswer({ properties }, false, slices);
    expect(answer.bytes.toString()).toBe(JSON.stringify({ properties }));
    expect(slices.yields).toBeGreaterThan(100);
  });
});

/** Bytes compared as text (a deep comparison of large Buffers is slow), and the ETag and type. */
function expectSame(actual: Answer, expected: Answer): void {
  expect(actual.bytes.toString('utf8')).toBe(expected.bytes.toString('utf8'));
  expect(actual.bytes.equals(expected.bytes)).toBe(true);
  expect([actual.etag, actual.contentType]).toEqual([expected.etag, expected.contentType]);
}

describe('answers made in slices', () => {
  it('jsonAnswer gives the bytes and ETag of answerOf(JSON.stringify(body))', async () => {
    for (const body of [{}, { a: [1, 'é', null], b: { c: long } }, [], 'text']) {
      for (const pretty of [false, true]) {
        const expected = answerOf(pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body), 'application/json');
        expectSame(await jsonAnswer(body, pretty), expected);
      }
    }
  });

  it('pullAnswer puts generatedOn last and makes the ETag of the content without it, as the one-piece pull did', async () => {
    const generatedOn = '2026-11-25T01:02:03Z';
    const bodies: Record<string, unknown>[] = [
      {},
      {
        files: { 'big.txt': { content: long, 'content-type': 'text/plain' } },
        properties: { x: { val: 'y' } },
        account: 'a',
        repo: 'r',
        context: 'P;*',
      },
    ];
    for (const body of bodies) {
      for (const pretty of [false, true]) {
        const stringify = (value: unknown) => (pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value));
        const expected = answerOf(stringify({ ...body, generatedOn }), 'application/json', stringify(body));
        expectSame(await pullAnswer(body, pretty, generatedOn), expected);
      }
    }
  });
});
