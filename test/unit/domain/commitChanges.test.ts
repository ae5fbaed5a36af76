/**
 * Reading commit messages back (comment and trailers), and the pure rules of history and revert:
 * what changed in a key, and undoing a change three-way on a later version of the key.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commitMessage, parseCommitMessage } from '../../../src/domain/commitMessage.js';
import { revertKey, summarizeKeyChange } from '../../../src/domain/keyChanges.js';
import { keyWith } from '../../support/records.js';

const key = keyWith;

describe('parseCommitMessage', () => {
  it('reads back the comment and provenance commitMessage wrote (property)', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9 -]{0,20}[a-z0-9]$/);
    fc.assert(
      fc.property(
        fc.option(fc.stringMatching(/^[A-Za-z][^\n]{0,30}(\n\n[A-Za-z][^\n:]{0,30})?$/), { nil: undefined }),
        fc.option(word, { nil: undefined }),
        fc.option(word, { nil: undefined }),
        (comment, applicationName, tokenLabel) => {
          const parsed = parseCommitMessage(commitMessage(comment, { applicationName, tokenLabel }));
          expect(parsed.comment).toBe(comment ?? '');
          expect(parsed.applicationName).toBe(applicationName);
          expect(parsed.tokenLabel).toBe(tokenLabel);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a message written with plain git whole, even when its last paragraph looks like trailers of others', () => {
    expect(parseCommitMessage('Fix: the thing\n')).toEqual({ comment: 'Fix: the thing' });
    expect(parseCommitMessage('Title\n\nSigned-off-by: A <a@x>\n')).toEqual({
      comment: 'Title\n\nSigned-off-by: A <a@x>',
    });
    expect(parseCommitMessage('Title\n\nSigned-off-by: A <a@x>\nToken: ci\n')).toEqual({
      comment: 'Title',
      tokenLabel: 'ci',
    });
  });
});

describe('summarizeKeyChange', () => {
  it('lists values added, modified and deleted by context, and changed fields', () => {
    const before = key([
      ['*;*', 'a'],
      ['Prod;*', 'p'],
      ['Dev;*', 'd'],
    ]);
    const after = key(
      [
        ['*;*', 'a'],
        ['prod;*', 'p'],
        ['Dev;*', 'd2', false],
        ['Stage;*', 's'],
      ],
      { readme: 'R' },
    );
    expect(summarizeKeyChange(before, after)).toEqual({
      key: 'db.host',
      change: 'modified',
      fields: { readme: { before: '', after: 'R' } },
      values: [
        {
          context: 'Dev;*',
          change: 'modified',
          before: { value: 'd', active: true },
          after: { value: 'd2', active: false },
        },
        {
          context: 'prod;*',
          change: 'modified',
          before: { value: 'p', active: true },
          after: { value: 'p', active: true },
        },
        { context: 'Stage;*', change: 'added', after: { value: 's', active: true } },
      ],
    });
    expect(summarizeKeyChange(null, before).change).toBe('added');
    expect(summarizeKeyChange(before, null).change).toBe('deleted');
  });
});

describe('revertKey', () => {
  const before = key([
    ['*;*', 'a'],
    ['Prod;*', 'p'],
  ]);
  const after = key(
    [
      ['*;*', 'a'],
      ['Prod;*', 'p2'],
      ['Dev;*', 'd'],
    ],
    { vdt: 'Code' },
  );

  it('puts back what the change touched, and keeps what later changes did elsewhere', () => {
    const head = key(
      [
        ['*;*', 'later'],
        ['Prod;*', 'p2'],
        ['Dev;*', 'd'],
      ],
      { vdt: 'Code', readme: 'later readme' },
    );
    expect(revertKey(before, after, head)).toEqual({
      ok: true,
      record: key(
        [
          ['*;*', 'later'],
          ['Prod;*', 'p'],
        ],
        { readme: 'later readme' },
      ),
    });
  });

  it('is a no-op for facets already undone, and refuses a facet changed since, naming it', () => {
    expect(revertKey(before, after, before)).toEqual({ ok: true, record: before });
    const head = key(
      [
        ['*;*', 'a'],
        ['Prod;*', 'p3'],
        ['Dev;*', 'd'],
      ],
      { vdt: 'Code' },
    );
    expect(revertKey(before, after, head)).toEqual({
      ok: false,
      reason: 'key db.host: its value for context Prod;* was changed again by a later commit',
    });
    expect(revertKey(before, after, { ...after, vdt: 'JSON' })).toEqual({
      ok: false,
      reason: 'key db.host: its vdt was changed again by a later commit',
    });
  });

  it('deletes a key the change created, unless a later change added to it; recreates a key the change deleted', () => {
    expect(revertKey(null, before, before)).toEqual({ ok: true, record: null });
    expect(
      revertKey(
        null,
        before,
        key([
          ['*;*', 'a'],
          ['Prod;*', 'p'],
          ['Dev;*', 'x'],
        ]),
      ),
    ).toEqual({ ok: false, reason: 'key db.host: values were added to it by a later commit' });
    expect(revertKey(before, null, null)).toEqual({ ok: true, record: before });
    expect(revertKey(before, null, key([['*;*', 'new']]))).toMatchObject({ ok: false });
  });
});
