/** Access rules and context groups as pure functions. */
import { describe, expect, it } from 'vitest';
import { decide, ruleProblem, type AccessRule, type RuleSet } from '../../../src/domain/accessRules.js';
import { GroupIndex, groupChangeProblem, groupConflict } from '../../../src/domain/contextGroups.js';
import type { KeyRecord } from '../../../src/domain/model.js';
import { contextWeight, groupWeight, levelWeight, requestContext, resolveValue } from '../../../src/domain/resolve.js';

const set = (rules: AccessRule[], stopOnFirstMatch = true, unmatchedEditable = false): RuleSet => ({
  name: 'team',
  stopOnFirstMatch,
  unmatchedEditable,
  rules,
});
const value = (key: string, context: string) => ({ kind: 'value' as const, key, context: context.split(';') });
const groups = new GroupIndex(
  ['Env', 'Dc'],
  [
    { level: 'Dc', name: 'EU', members: ['Frankfurt', 'Dublin'] },
    { level: 'Dc', name: 'Cloud', members: ['Frankfurt', 'Oregon'] },
    { level: 'Dc', name: 'US', members: ['Oregon'] },
  ],
);

describe('decide', () => {
  it('lets the first matching rule decide when stopOnFirstMatch is on', () => {
    const rules = set([
      { match: 'StartsWith', key: 'a.', canEdit: true },
      { match: 'Is', key: 'a.b', canEdit: false },
    ]);
    expect(decide(rules, value('a.b', '*;*'), GroupIndex.EMPTY)).toMatchObject({ editable: true, rule: 1 });
  });

  it('lets any denying match decide when stopOnFirstMatch is off', () => {
    const rules = set(
      [
        { match: 'StartsWith', key: 'a.', canEdit: true },
        { match: 'Is', key: 'a.b', canEdit: false },
      ],
      false,
    );
    expect(decide(rules, value('a.b', '*;*'), GroupIndex.EMPTY)).toMatchObject({ editable: false, rule: 2 });
    expect(decide(rules, value('a.c', '*;*'), GroupIndex.EMPTY)).toMatchObject({ editable: true, rule: 1 });
  });

  it('falls back to unmatchedEditable, both ways', () => {
    expect(decide(set([], true, false), value('k', '*;*'), GroupIndex.EMPTY).editable).toBe(false);
    expect(decide(set([], true, true), value('k', '*;*'), GroupIndex.EMPTY).editable).toBe(true);
  });

  it('never matches a file by a key rule, nor a key own fields by a value rule', () => {
    const rules = set([
      { match: 'Contains', key: 'conf', canEdit: true },
      { match: 'ContainsAny', context: ['Production'], canEdit: true },
    ]);
    expect(decide(rules, { kind: 'file', path: 'app.conf', context: ['Test', '*'] }, GroupIndex.EMPTY).editable).toBe(
      false,
    );
    expect(decide(rules, { kind: 'key', key: 'x' }, GroupIndex.EMPTY).editable).toBe(false);
  });

  it('lets Resolves see through groups: a value on a group resolves for its members', () => {
    const rules = set([{ match: 'Resolves', context: ['Production', 'Frankfurt'], canEdit: true }]);
    expect(decide(rules, value('k', 'Production;EU'), groups).editable).toBe(true);
    expect(decide(rules, value('k', 'Production;US'), groups).editable).toBe(false);
  });

  it('checks the shape of a rule', () => {
    expect(ruleProblem({ match: 'Resolves', context: ['a'], canEdit: true }, 2)).toMatch(/2 items/);
    expect(ruleProblem({ match: 'Is', key: '', canEdit: true }, 2)).toMatch(/1 to 120/);
  });
});

describe('groups in resolution', () => {
  const key = (values: [string, string][]): KeyRecord => ({
    key: 'k',
    readme: '',
    deprecated: false,
    vdt: 'Text',
    push: true,
    values: values.map(([c, v]) => ({ context: c.split(';'), value: v, active: true })),
  });

  it("weighs a group just below an item of its level and above every wider level (ConfigHub's numbers)", () => {
    expect(levelWeight(1, 2)).toBe(5120);
    expect(groupWeight(1, 2)).toBe(5119);
    expect(groupWeight(0, 2)).toBe(2558);
    for (let n = 1; n <= 10; n++) {
      for (let i = 0; i < n; i++) {
        let wider = 0;
        for (let j = 0; j < i; j++) wider += levelWeight(j, n);
        expect(groupWeight(i, n)).toBeGreaterThan(wider);
        expect(groupWeight(i, n)).toBeLessThan(levelWeight(i, n));
      }
    }
    expect(contextWeight(['Production', 'EU'], requestContext(['Production', 'Frankfurt'], groups))).toBe(2560 + 5119);
    expect(contextWeight(['Production', 'EU'], requestContext(['Production', 'Oregon'], groups))).toBe(-1);
  });

  it("lets a member's own value win over its group's", () => {
    const k = key([
      ['*;EU', 'group'],
      ['*;Dublin', 'own'],
    ]);
    expect(resolveValue(k, requestContext(['x', 'Dublin'], groups))?.value).toBe('own');
    expect(resolveValue(k, requestContext(['x', 'Frankfurt'], groups))?.value).toBe('group');
    expect(resolveValue(k, requestContext(['x', 'Frankfurt']))).toBeUndefined(); // groups off
  });

  it('finds a conflict only between groups that share a member with equal weight', () => {
    expect(
      groupConflict(
        key([
          ['P;EU', 'a'],
          ['P;Cloud', 'b'],
        ]),
        groups,
      ),
    ).toMatch(/P;EU and P;Cloud/);
    expect(
      groupConflict(
        key([
          ['P;EU', 'a'],
          ['P;US', 'b'],
        ]),
        groups,
      ),
    ).toBeUndefined();
    expect(
      groupConflict(
        key([
          ['P;EU', 'a'],
          ['*;Cloud', 'b'],
        ]),
        groups,
      ),
    ).toBeUndefined();
    expect(
      groupConflict(
        key([
          ['P;EU', 'a'],
          ['Q;Cloud', 'b'],
        ]),
        groups,
      ),
    ).toBeUndefined();
  });

  it('refuses a group of groups and a group as a member', () => {
    const list = [{ level: 'Dc', name: 'EU', members: ['Frankfurt'] }];
    expect(groupChangeProblem(list, 'Dc', 'World', 'EU')).toMatch(/cannot hold a group/);
    expect(groupChangeProblem([...list, { level: 'Dc', name: 'World', members: [] }], 'Dc', 'Frankfurt', 'x')).toMatch(
      /cannot be a member/,
    );
    expect(groupChangeProblem(list, 'Dc', 'Cloud', 'Frankfurt')).toBeUndefined();
  });
});
