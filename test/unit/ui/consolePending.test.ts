/**
 * The web console's collected changes (src/ui/pending.ts): each change is one push element in the
 * order it was made, key creation is enabled only when a change creates a key, and a refusal's
 * `data[N]` finds the change it names.
 */
import { describe, expect, it } from 'vitest';
import { pushBody, refusedIndex, type PendingChange } from '../../../src/ui/pending.js';

describe('the console push body', () => {
  const changes: PendingChange[] = [
    { kind: 'value', key: 'db.host', context: 'Production;*', value: 'db2', active: true },
    { kind: 'delete-value', key: 'db.host', context: 'Staging;*' },
    { kind: 'delete-key', key: 'old.key' },
    { kind: 'file', path: 'conf/a.properties', context: '*;*', content: 'x=${ db.host }\n', active: false },
    { kind: 'delete-file', path: 'conf/b.properties', context: '*;*' },
  ];

  it('makes one element per change, in order, in the push format', () => {
    expect(pushBody(changes, 'Move it')).toEqual({
      changeComment: 'Move it',
      enableKeyCreation: false,
      data: [
        { key: 'db.host', values: [{ context: 'Production;*', value: 'db2', active: true }] },
        { key: 'db.host', values: [{ context: 'Staging;*', opp: 'delete' }] },
        { key: 'old.key', opp: 'delete' },
        { file: 'conf/a.properties', context: '*;*', content: 'x=${ db.host }\n', active: false },
        { file: 'conf/b.properties', context: '*;*', opp: 'delete' },
      ],
    });
  });

  it('enables key creation only for a push that creates a key', () => {
    const body = pushBody([{ kind: 'new-key', key: 'k', vdt: 'Integer', readme: 'r', context: '*;*', value: '1' }], '');
    expect(body).toMatchObject({
      enableKeyCreation: true,
      data: [{ key: 'k', vdt: 'Integer', readme: 'r', values: [{ context: '*;*', value: '1' }] }],
    });
  });

  it('finds the change a refusal names', () => {
    expect(refusedIndex('data[2] key db.port: value is not an Integer')).toBe(2);
    expect(refusedIndex('data[0].values[1] key a: context has 3 items')).toBe(0);
    expect(refusedIndex('the repository does not allow token-free pushes')).toBeUndefined();
    expect(refusedIndex('xdata[1] key')).toBeUndefined();
  });
});
