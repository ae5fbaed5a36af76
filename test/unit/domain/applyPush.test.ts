/**
 * The push transaction as pure logic: a model-based property test of key and
 * value upserts and deletes against a tiny in-memory model, and example tests of the rules about
 * order, references, files and refusals.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPush, type PushOutcome } from '../../../src/domain/applyPush.js';
import { contextId } from '../../../src/domain/context.js';
import { fileId, type FileRecord, type PushChanges } from '../../../src/domain/model.js';
import { keyId } from '../../../src/domain/names.js';
import type { KeyElement, PushElement, PushRequest, ValueElement } from '../../../src/domain/pushRequest.js';
import { deleteValueEl, fileEl, keyEl, keyRecord, MapState, settingsWith, valueEl } from '../../support/mapState.js';

const LEVELS = ['Environment', 'Application'];
const NO_FORCE = { forceKeyPush: false };

function push(state: MapState, data: PushElement[], more: Partial<PushRequest> = {}, force = false): PushOutcome {
  return applyPush(state, { enableKeyCreation: true, data, ...more }, { forceKeyPush: force });
}

function applied(
  state: MapState,
  data: PushElement[],
  more: Partial<PushRequest> = {},
  force = false,
): { changes: PushChanges; after: MapState } {
  const outcome = push(state, data, more, force);
  if (!outcome.ok) throw new Error(`expected the push to apply, refused: ${outcome.reason}`);
  return { changes: outcome.changes, after: state.with(outcome.changes) };
}

function refused(state: MapState, data: PushElement[], more: Partial<PushRequest> = {}, force = false): string {
  const outcome = push(state, data, more, force);
  if (outcome.ok) throw new Error('expected the push to be refused');
  return outcome.reason;
}

const empty = () => new MapState(settingsWith(LEVELS));

// --- the model -----------------------------------------------------------------------------------

interface ModelValue {
  readonly context: readonly string[];
  readonly value: string | null;
  readonly active: boolean;
}

interface ModelKey {
  readonly key: string;
  readonly readme: string;
  readonly deprecated: boolean;
  readonly vdt: string;
  readonly push: boolean;
  readonly values: ReadonlyMap<string, ModelValue>;
}

type Model = ReadonlyMap<string, ModelKey>;

interface ModelPush {
  readonly data: KeyElement[];
  readonly enableKeyCreation?: boolean;
  readonly force: boolean;
}

type ModelOutcome = { ok: true; model: Model } | { ok: false; blame: ReadonlySet<number> };

const modelContext = (text: string) => text.split(';').map((item) => (item.trim() === '' ? '*' : item.trim()));
const modelContextId = (context: readonly string[]) => context.join(';').toLowerCase();
const modelText = (value: unknown): string | null =>
  value === null ? null : typeof value === 'string' ? value : String(value);

function modelFits(vdt: string, text: string | null): boolean {
  if (text === null || vdt === 'Text') return true;
  if (vdt === 'Boolean') return text === 'true' || text === 'false';
  if (vdt === 'Integer') return /^[+-]?\d+$/.test(text) && BigInt(text) >= -(2n ** 31n) && BigInt(text) < 2n ** 31n;
  throw new Error(`the model does not know ${vdt}`);
}

/** What the contract says a push of key elements does. */
function modelPush(model: Model, request: ModelPush): ModelOutcome {
  const draft = new Map(model);
  const touchedBy = new Map<string, Set<number>>();
  const creation = request.enableKeyCreation ?? request.force;
  for (let i = 0; i < request.data.length; i++) {
    const element = request.data[i];
    const id = element.key.toLowerCase();
    const committed = model.get(id);
    if (committed && !committed.push && !request.force) return { ok: false, blame: new Set([i]) };
    if (!touchedBy.has(id)) touchedBy.set(id, new Set());
    touchedBy.get(id)!.add(i);
    const current = draft.get(id);
    if (element.opp === 'delete') {
      if (element.values !== undefined) return { ok: false, blame: new Set([i]) };
      draft.delete(id);
      continue;
    }
    // Deleting values of a key that does not exist is a no-op: the key is not created.
    const onlyDeletesValues = (element.values?.length ?? 0) > 0 && element.values!.every((v) => v.opp === 'delete');
    if (!current && onlyDeletesValues) continue;
    if (!current && !creation) return { ok: false, blame: new Set([i]) };
    const values = new Map(current?.values ?? []);
    for (const v of element.values ?? []) {
      const context = modelContext(v.context!);
      const cid = modelContextId(context);
      const existing = values.get(cid);
      if (v.opp === 'delete') {
        values.delete(cid);
        continue;
      }
      values.set(cid, {
        context: existing?.context ?? context,
        value: v.hasValue ? modelText(v.value) : (existing?.value ?? null),
        active: v.active ?? true,
      });
    }
    draft.set(id, {
      key: current?.key ?? element.key,
      readme: element.readme ?? current?.readme ?? '',
      deprecated: element.deprecated ?? current?.deprecated ?? false,
      vdt: element.vdt ?? current?.vdt ?? 'Text',
      push: element.push ?? current?.push ?? true,
      values,
    });
  }
  const blame = new Set<number>();
  for (const [id, indices] of touchedBy) {
    const key = draft.get(id);
    if (key && [...key.values.values()].some((v) => !modelFits(key.vdt, v.value)))
      for (const i of indices) blame.add(i);
  }
  return blame.size > 0 ? { ok: false, blame } : { ok: true, model: draft };
}

/** The state as the model sees it, for comparison. */
function viewOfState(state: MapState): unknown {
  return Object.fromEntries(
    [...state.keyMap]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, k]) => [
        id,
        {
          key: k.key,
          readme: k.readme,
          deprecated: k.deprecated,
          vdt: k.vdt,
          push: k.push,
          values: Object.fromEntries(
            k.values
              .map((v) => [contextId(v.context), { context: [...v.context], value: v.value, active: v.active }])
              .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
          ),
        },
      ]),
  );
}

function viewOfModel(model: Model): unknown {
  return Object.fromEntries(
    [...model]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, k]) => [
        id,
        {
          key: k.key,
          readme: k.readme,
          deprecated: k.deprecated,
          vdt: k.vdt,
          push: k.push,
          values: Object.fromEntries(
            [...k.values]
              .map(([cid, v]) => [cid, { context: [...v.context], value: v.value, active: v.active }])
              .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
          ),
        },
      ]),
  );
}

const keyPool = fc.constantFrom('db.port', 'DB.Port', 'db.PORT', 'app.name', 'App.Name', 'x', 'X');
const itemPool = fc.constantFrom('Prod', 'prod', 'PROD', 'Dev', 'dev', '*', '', ' Prod ', ' * ');
const contextText = fc.tuple(itemPool, itemPool).map(([a, b]) => `${a};${b}`);
const valuePool = fc.constantFrom<unknown>('1', '42', '-7', '2147483648', 'true', 'false', 'abc', '', 7, true, null);

const valueElement: fc.Arbitrary<ValueElement> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({ context: contextText, value: valuePool, active: fc.option(fc.boolean(), { nil: undefined }) })
      .map(({ context, value, active }) => ({ context, value, hasValue: true, active })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ context: contextText, active: fc.option(fc.boolean(), { nil: undefined }) })
      .map(({ context, active }) => ({ context, hasValue: false, active })),
  },
  { weight: 2, arbitrary: contextText.map((context) => deleteValueEl(context)) },
);

const keyElement: fc.Arbitrary<KeyElement> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        key: keyPool,
        readme: fc.option(fc.constantFrom('', 'first', 'Second'), { nil: undefined }),
        deprecated: fc.option(fc.boolean(), { nil: undefined }),
        vdt: fc.option(fc.constantFrom('Text', 'Integer', 'Boolean'), { nil: undefined, freq: 2 }),
        push: fc.option(fc.boolean(), { nil: undefined, freq: 1 }),
        values: fc.option(fc.array(valueElement, { maxLength: 4 }), { nil: undefined, freq: 6 }),
      })
      .map((fields) => ({ kind: 'key' as const, ...fields })),
  },
  { weight: 2, arbitrary: keyPool.map((key) => keyEl(key, { opp: 'delete' })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(keyPool, contextText)
      .map(([key, context]) => keyEl(key, { opp: 'delete', values: [valueEl(context, '1')] })),
  },
);

const modelPushArb: fc.Arbitrary<ModelPush> = fc.record({
  data: fc.array(keyElement, { minLength: 1, maxLength: 5 }),
  enableKeyCreation: fc.option(fc.boolean(), { nil: undefined, freq: 3 }).map((v) => (v === false ? false : v)),
  force: fc.boolean(),
});

describe('applyPush against a model (property)', () => {
  it('sequences of key and value upserts and deletes give the state the model gives', () => {
    fc.assert(
      fc.property(fc.array(modelPushArb, { minLength: 1, maxLength: 8 }), (pushes) => {
        let state = empty();
        let model: Model = new Map();
        for (const request of pushes) {
          const expected = modelPush(model, request);
          const outcome = applyPush(
            state,
            { enableKeyCreation: request.enableKeyCreation, data: request.data },
            { forceKeyPush: request.force },
          );
          if (!expected.ok) {
            expect(outcome.ok, JSON.stringify(request)).toBe(false);
            if (outcome.ok) return;
            const named = /^data\[(\d+)\]/.exec(outcome.reason);
            expect(named, outcome.reason).not.toBeNull();
            expect([...expected.blame], outcome.reason).toContain(Number(named![1]));
            continue;
          }
          expect(outcome.ok, outcome.ok ? '' : `${outcome.reason} for ${JSON.stringify(request)}`).toBe(true);
          if (!outcome.ok) return;
          // the changes mention only keys the push touched, and no files
          const touched = new Set(request.data.map((e) => keyId(e.key)));
          for (const id of outcome.changes.keys.keys()) expect(touched).toContain(id);
          expect(outcome.changes.files.size).toBe(0);
          state = state.with(outcome.changes);
          model = expected.model;
          expect(viewOfState(state)).toEqual(viewOfModel(model));
        }
      }),
      { numRuns: 300 },
    );
  });
});

// --- keys and values: examples -------------------------------------------------------------------

describe('keys', () => {
  it('creates a key with the defaults of the contract', () => {
    const { after } = applied(empty(), [keyEl('db.port')]);
    expect(after.key('db.port')).toEqual({
      key: 'db.port',
      readme: '',
      deprecated: false,
      vdt: 'Text',
      push: true,
      values: [],
    });
  });

  it('matches keys without regard to case and keeps the case first created', () => {
    let { after } = applied(empty(), [keyEl('DB.Port', { values: [valueEl('Prod;*', '1')] })]);
    ({ after } = applied(after, [keyEl('db.PORT', { readme: 'r', values: [valueEl('prod;*', '2')] })]));
    expect([...after.keys()]).toHaveLength(1);
    expect(after.key('db.port')!.key).toBe('DB.Port');
    expect(after.key('db.port')!.readme).toBe('r');
  });

  it('keeps the stored value of every field an element leaves out, vdt included', () => {
    const state = new MapState(settingsWith(LEVELS), [
      keyRecord('k', {
        readme: 'doc',
        deprecated: true,
        vdt: 'Integer',
        push: true,
        values: [{ context: ['Prod', '*'], value: '5', active: false }],
      }),
    ]);
    const { after } = applied(state, [keyEl('K')]);
    expect(after.key('k')).toEqual(state.key('k'));
  });

  it('keeps a key when its last value is deleted', () => {
    const state = new MapState(settingsWith(LEVELS), [
      keyRecord('k', { values: [{ context: ['Prod', '*'], value: 'v', active: true }] }),
    ]);
    const { after } = applied(state, [keyEl('k', { values: [deleteValueEl('PROD;*')] })]);
    expect(after.key('k')).toEqual(keyRecord('k'));
  });

  it('treats deleting a key or value that does not exist as a no-op', () => {
    const state = new MapState(settingsWith(LEVELS), [keyRecord('k')]);
    const { after } = applied(
      state,
      [keyEl('nope', { opp: 'delete' }), keyEl('k', { values: [deleteValueEl('Dev;*')] })],
      { enableKeyCreation: false },
    );
    expect(after.keyMap).toEqual(state.keyMap);
  });

  it('refuses a key that does not exist while key creation is off, naming the element', () => {
    expect(refused(empty(), [keyEl('a'), keyEl('b')], { enableKeyCreation: false })).toBe(
      'data[0] key a: key does not exist and key creation is off (enableKeyCreation)',
    );
    const state = new MapState(settingsWith(LEVELS), [keyRecord('a')]);
    expect(refused(state, [keyEl('A'), keyEl('b')], { enableKeyCreation: false })).toMatch(/^data\[1\] key b: /);
  });

  it('lets a force-key-push token create keys unless the push turns creation off', () => {
    expect(applyPush(empty(), { data: [keyEl('a')] }, { forceKeyPush: true }).ok).toBe(true);
    expect(applyPush(empty(), { data: [keyEl('a')] }, NO_FORCE).ok).toBe(false);
    expect(applyPush(empty(), { enableKeyCreation: false, data: [keyEl('a')] }, { forceKeyPush: true }).ok).toBe(false);
  });

  it('refuses writing or deleting a key whose push flag is false, unless the token forces it', () => {
    const state = new MapState(settingsWith(LEVELS), [keyRecord('Locked', { push: false })]);
    expect(refused(state, [keyEl('x'), keyEl('locked', { readme: 'r' })])).toBe(
      'data[1] key locked: push is disabled for this key',
    );
    expect(refused(state, [keyEl('LOCKED', { opp: 'delete' })])).toBe(
      'data[0] key LOCKED: push is disabled for this key',
    );
    expect(push(state, [keyEl('locked', { readme: 'r' })], {}, true).ok).toBe(true);
  });

  it('refuses invalid key names, showing them safely', () => {
    expect(refused(empty(), [keyEl('ok'), keyEl('bad key')])).toBe(
      'data[1] key bad key: key names are 1-120 letters, digits and . _ - + [ ] ( ) *',
    );
    expect(refused(empty(), [keyEl('')])).toMatch(/^data\[0\] key : key names/);
    expect(refused(empty(), [keyEl('a"b\nc')])).toMatch(/^data\[0\] key a\?b\?c: /);
    expect(refused(empty(), [keyEl('k'.repeat(121))])).toMatch(/^data\[0\] key k+\.\.\.: key names/);
  });

  it('refuses deleting a key with values', () => {
    const state = new MapState(settingsWith(LEVELS), [keyRecord('k')]);
    expect(refused(state, [keyEl('k', { opp: 'delete', values: [] })])).toBe(
      'data[0] key k: deleting a key takes no values',
    );
  });

  it('refuses an unknown vdt, and any vdt but Text when value data types are off', () => {
    expect(refused(empty(), [keyEl('k', { vdt: 'integer' })])).toMatch(
      /^data\[0\] key k: unknown vdt integer \(one of Text, Code, /,
    );
    const off = new MapState(settingsWith(LEVELS, { vdtEnabled: false }));
    expect(refused(off, [keyEl('k', { vdt: 'Integer' })])).toBe(
      'data[0] key k: value data types are off in this repository, so vdt must be Text',
    );
    expect(push(off, [keyEl('k', { vdt: 'Text' })]).ok).toBe(true);
  });

  it('refuses a security group (none exists yet) but ignores a password on a key without one', () => {
    expect(refused(empty(), [keyEl('k', { securityGroup: 'admins' })])).toMatch(/^data\[0\] key k: security group/);
    expect(push(empty(), [keyEl('k', { securityGroup: '', password: 'secret' })]).ok).toBe(true);
  });
});

describe('security groups', () => {
  const group = {
    name: 'Secrets',
    keyId: '0123456789abcdef',
    kdf: { name: 'scrypt' as const, salt: 'c2FsdA==', N: 16384, r: 8, p: 1 },
    wrappedKey: 'enc:v1:password:x:y',
  };
  const withGroup = (
    keys = [
      keyRecord('secret', {
        securityGroup: 'Secrets',
        values: [{ context: ['*', '*'], value: 'plain', active: true }],
      }),
    ],
    files: FileRecord[] = [],
  ) => new MapState(settingsWith(LEVELS), keys, files, [group]);
  const pushAs = (state: MapState, data: PushElement[], unlocked: boolean) =>
    applyPush(state, { enableKeyCreation: true, data }, { forceKeyPush: false, unlocked: () => unlocked });

  it('needs the group for any change to a secured key, and for moving a key in or out', () => {
    const locked = 'data[0] key secret: the password for security group Secrets is missing or wrong';
    for (const element of [
      keyEl('secret', { values: [valueEl('*;*', 'x')] }),
      keyEl('secret', { opp: 'delete' }),
      keyEl('secret', { readme: 'r' }),
      keyEl('secret', { securityGroup: '' }),
    ]) {
      expect(pushAs(withGroup(), [element], false)).toEqual({ ok: false, kind: 'security', reason: locked });
      expect(pushAs(withGroup(), [element], true).ok).toBe(true);
    }
    expect(
      pushAs(withGroup(), [keyEl('open', { securityGroup: 'secrets', values: [valueEl('*;*', 'x')] })], false),
    ).toEqual({
      ok: false,
      kind: 'security',
      reason: 'data[0] key open: the password for security group Secrets is missing or wrong',
    });
    const moved = pushAs(
      withGroup(),
      [
        keyEl('new', { securityGroup: 'SECRETS', values: [valueEl('*;*', 'x')] }),
        keyEl('secret', { securityGroup: '' }),
      ],
      true,
    );
    if (!moved.ok) throw new Error(moved.reason);
    expect(moved.changes.keys.get('new')?.securityGroup).toBe('Secrets');
    expect(moved.changes.keys.get('secret')).not.toHaveProperty('securityGroup');
  });

  it('refuses a sealed value, plain file content that looks like an encrypted file, and deleting a key a sealed file uses', () => {
    expect(
      pushAs(withGroup(), [keyEl('secret', { values: [valueEl('*;*', 'enc:v1:abc:def:ghi')] })], true),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/sealed ciphertext/) });
    expect(
      pushAs(withGroup(), [fileEl('f.txt', '*;*', { content: 'cfghub-encrypted-file: v1\nx' })], true),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/marks an encrypted file/) });
    const sealedFile: FileRecord = {
      path: 'f.txt',
      context: ['*', '*'],
      content: 'enc:v1:sealed',
      active: true,
      securityGroup: 'Secrets',
      references: ['used'],
    };
    const state = withGroup([keyRecord('used')], [sealedFile]);
    expect(pushAs(state, [keyEl('used', { opp: 'delete' })], false)).toEqual({
      ok: false,
      kind: 'reference',
      reason: 'data[0] key used: cannot delete, file f.txt references it',
    });
  });
});

describe('values', () => {
  it('identifies values by context without regard to case and keeps the first spelling', () => {
    const { after } = applied(empty(), [
      keyEl('k', { values: [valueEl('Prod;MyApp', 'a')] }),
      keyEl('K', { values: [valueEl('PROD;myapp', 'b'), valueEl(' prod ; MYAPP ', 'c')] }),
    ]);
    expect(after.key('k')!.values).toEqual([{ context: ['Prod', 'MyApp'], value: 'c', active: true }]);
  });

  it('treats `*`, an empty item and spaces alike', () => {
    const { after } = applied(empty(), [
      keyEl('k', { values: [valueEl(';', 'a'), valueEl('*;*', 'b'), valueEl(' ; * ', 'c')] }),
    ]);
    expect(after.key('k')!.values).toEqual([{ context: ['*', '*'], value: 'c', active: true }]);
  });

  it('sets active to true unless the element says otherwise, and keeps the value when the element has none', () => {
    const state = new MapState(settingsWith(LEVELS), [
      keyRecord('k', { values: [{ context: ['a', 'b'], value: 'v', active: false }] }),
    ]);
    expect(applied(state, [keyEl('k', { values: [valueEl('A;B')] })]).after.key('k')!.values).toEqual([
      { context: ['a', 'b'], value: 'v', active: true },
    ]);
    expect(applied(state, [keyEl('k', { values: [valueEl('a;b', 'w')] })]).after.key('k')!.values).toEqual([
      { context: ['a', 'b'], value: 'w', active: true },
    ]);
    expect(
      applied(state, [keyEl('k', { values: [valueEl('a;b', null, { active: false })] })]).after.key('k')!.values,
    ).toEqual([{ context: ['a', 'b'], value: null, active: false }]);
  });

  it('stores numbers and booleans as their JSON text, and objects for Map keys', () => {
    const { after } = applied(empty(), [
      keyEl('n', { vdt: 'Double', values: [valueEl('a;*', 1.5)] }),
      keyEl('b', { vdt: 'Boolean', values: [valueEl('a;*', false)] }),
      keyEl('m', { vdt: 'Map', values: [valueEl('a;*', { x: [1] })] }),
    ]);
    expect(after.key('n')!.values[0].value).toBe('1.5');
    expect(after.key('b')!.values[0].value).toBe('false');
    expect(after.key('m')!.values[0].value).toBe('{"x":[1]}');
  });

  it('refuses a value without context, naming the value element', () => {
    const noContext: ValueElement = { value: 'x', hasValue: true };
    expect(refused(empty(), [keyEl('k', { values: [valueEl('a;b', '1'), noContext] })])).toBe(
      'data[0].values[1] key k: value has no context',
    );
  });

  it('refuses a context with the wrong number of items or an invalid item', () => {
    expect(refused(empty(), [keyEl('a'), keyEl('k', { values: [valueEl('a;b;c', '1')] })])).toBe(
      'data[1].values[0] key k: context has 3 items, the repository has 2 levels',
    );
    expect(refused(empty(), [keyEl('k', { values: [valueEl('a b;c', '1')] })])).toMatch(
      /^data\[0\]\.values\[0\] key k: context item 1 /,
    );
  });

  it('refuses a value that does not fit the key type, naming it and never echoing it', () => {
    const reason = refused(empty(), [
      keyEl('db.port', { vdt: 'Integer', values: [valueEl('a;*', '5432'), valueEl('b;*', 'secret-text')] }),
    ]);
    expect(reason).toBe('data[0].values[1] key db.port: value is not an Integer');
    expect(reason).not.toContain('secret-text');
  });

  it('re-checks existing values when the vdt changes, naming the element that changed it', () => {
    const state = new MapState(settingsWith(LEVELS), [
      keyRecord('k', { values: [{ context: ['Prod', '*'], value: 'abc', active: true }] }),
    ]);
    expect(refused(state, [keyEl('other'), keyEl('K', { vdt: 'Integer' })])).toBe(
      'data[1] key k: the value at context Prod;*: value is not an Integer',
    );
    const fixed = [keyEl('k', { vdt: 'Integer', values: [valueEl('prod;*', '12')] })];
    expect(applied(state, fixed).after.key('k')!.vdt).toBe('Integer');
  });

  it('checks types at the end of the push, so a later element can fix a value', () => {
    const ok = applied(empty(), [
      keyEl('k', { vdt: 'Integer', values: [valueEl('a;*', 'x')] }),
      keyEl('k', { values: [valueEl('A;*', '1')] }),
    ]);
    expect(ok.after.key('k')!.values[0].value).toBe('1');
    const retyped = applied(empty(), [keyEl('k', { values: [valueEl('a;*', 'x')] }), keyEl('k', { vdt: 'Text' })]);
    expect(retyped.after.key('k')!.values[0].value).toBe('x');
  });

  it('refuses a structured value for a key that is not JSON, Map or List', () => {
    expect(refused(empty(), [keyEl('k', { values: [valueEl('a;*', { x: 1 })] })])).toBe(
      'data[0].values[0] key k: value is a JSON object but the key is a Text',
    );
  });

  it('applies elements in array order', () => {
    const { after } = applied(empty(), [
      keyEl('k', { values: [valueEl('a;*', '1')] }),
      keyEl('k', { opp: 'delete' }),
      keyEl('K', { values: [valueEl('b;*', '2')] }),
    ]);
    expect(after.key('k')).toEqual(keyRecord('K', { values: [{ context: ['b', '*'], value: '2', active: true }] }));
  });
});

// --- files and references -----------------------------------------------------------------------

function fileRecord(path: string, context: string[], content = '', active = true): FileRecord {
  return { path, context, content, active };
}

describe('files', () => {
  it('stores a file by path (case-sensitive) and context (not), dropping one leading slash', () => {
    const { after, changes } = applied(empty(), [fileEl('/conf/app.txt', 'Prod;*', { content: 'x' })]);
    expect([...changes.files.keys()]).toEqual([fileId('conf/app.txt', 'prod;*')]);
    expect(after.file(fileId('conf/app.txt', 'prod;*'))).toEqual(fileRecord('conf/app.txt', ['Prod', '*'], 'x'));
  });

  it('keeps content when an element leaves it out, and makes files active by default', () => {
    const state = new MapState(settingsWith(LEVELS), [], [fileRecord('a.txt', ['Prod', '*'], 'old', false)]);
    const { after } = applied(state, [fileEl('a.txt', 'PROD;*')]);
    expect(after.file(fileId('a.txt', 'prod;*'))).toEqual(fileRecord('a.txt', ['Prod', '*'], 'old', true));
    const inactive = applied(state, [fileEl('a.txt', 'prod;*', { content: 'new', active: false })]).after;
    expect(inactive.file(fileId('a.txt', 'prod;*'))).toEqual(fileRecord('a.txt', ['Prod', '*'], 'new', false));
  });

  it('adopts the spelling of an existing file context for a new file', () => {
    const state = new MapState(settingsWith(LEVELS), [], [fileRecord('a.txt', ['Prod', 'MyApp'])]);
    const { after } = applied(state, [fileEl('b.txt', 'PROD;myapp', { content: 'b' })]);
    expect(after.file(fileId('b.txt', 'prod;myapp'))!.context).toEqual(['Prod', 'MyApp']);
  });

  it('adopts the spelling of a file context written earlier in the same push', () => {
    const { after } = applied(empty(), [fileEl('a.txt', 'Dev;*'), fileEl('b.txt', 'DEV;'), fileEl('c.txt', 'dev;*')]);
    for (const path of ['a.txt', 'b.txt', 'c.txt'])
      expect(after.file(fileId(path, 'dev;*'))!.context).toEqual(['Dev', '*']);
  });

  it('deletes a file variant, and deleting a missing one is a no-op', () => {
    const state = new MapState(
      settingsWith(LEVELS),
      [],
      [fileRecord('a.txt', ['Prod', '*']), fileRecord('a.txt', ['Dev', '*'])],
    );
    const { after } = applied(state, [
      fileEl('a.txt', 'prod;*', { opp: 'delete' }),
      fileEl('zzz', 'Dev;*', { opp: 'delete' }),
    ]);
    expect([...after.files()]).toEqual([fileRecord('a.txt', ['Dev', '*'])]);
  });

  it.each([
    ['', 'file path is empty'],
    ['a/../b', "file path has a '..' segment"],
    ['a/.GIT/b', "file path has a '.git' segment"],
    ['a\\b', 'file path contains a backslash'],
    ['x'.repeat(1025), 'file path is longer than 1024 characters'],
  ])('refuses the path %j, naming the element', (path, problem) => {
    expect(refused(empty(), [keyEl('k'), fileEl(path, '*;*')])).toMatch(
      new RegExp(`^data\\[1\\] file .*: ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  it('refuses a file without context or with a bad one', () => {
    expect(refused(empty(), [fileEl('a.txt', undefined)])).toBe('data[0] file a.txt: file has no context');
    expect(refused(empty(), [fileEl('a.txt', 'a')])).toBe(
      'data[0] file a.txt: context has 1 item, the repository has 2 levels',
    );
  });

  it('refuses a new path that differs only in case from another, or that is a folder of a file', () => {
    const state = new MapState(settingsWith(LEVELS), [], [fileRecord('conf/app.txt', ['Prod', '*'])]);
    expect(refused(state, [fileEl('x', '*;*'), fileEl('Conf/other.txt', 'Dev;*')])).toBe(
      'data[1] file Conf/other.txt: path Conf differs only in case from conf',
    );
    expect(refused(state, [fileEl('conf/app.txt/x', 'Dev;*')])).toBe(
      'data[0] file conf/app.txt/x: path conf/app.txt is already a file, so it cannot be a folder',
    );
    expect(push(state, [fileEl('conf/app.txt', 'Dev;*')]).ok).toBe(true);
  });
});

describe('references are checked at the end of the push', () => {
  it('a template may reference a key created later in the same push', () => {
    for (const data of [
      [fileEl('app.conf', 'Prod;*', { content: 'host=${ db.host }' }), keyEl('db.host')],
      [keyEl('db.host'), fileEl('app.conf', 'Prod;*', { content: 'host=${ db.host }' })],
    ]) {
      expect(push(empty(), data).ok).toBe(true);
    }
  });

  it('matches template references to keys without regard to case', () => {
    const state = new MapState(settingsWith(LEVELS), [keyRecord('DB.Host')]);
    expect(push(state, [fileEl('app.conf', 'Prod;*', { content: '${db.HOST}' })]).ok).toBe(true);
  });

  it('refuses a template that references a key that will not exist', () => {
    expect(refused(empty(), [keyEl('a'), fileEl('app.conf', 'Prod;*', { content: '${ missing }' })])).toBe(
      'data[1] file app.conf: template references key missing, which does not exist',
    );
    const state = new MapState(settingsWith(LEVELS), [keyRecord('db.host')]);
    expect(
      refused(state, [fileEl('app.conf', 'Prod;*', { content: '${db.host}' }), keyEl('db.host', { opp: 'delete' })]),
    ).toMatch(/^data\[0\] file app\.conf: template references key db\.host/);
  });

  it('refuses deleting a key that a file still references, naming the key element', () => {
    const state = new MapState(
      settingsWith(LEVELS),
      [keyRecord('DB.Host')],
      [fileRecord('app.conf', ['Prod', '*'], 'h=${db.host}', false)],
    );
    expect(refused(state, [keyEl('other'), keyEl('db.host', { opp: 'delete' })])).toBe(
      'data[1] key DB.Host: cannot delete, file app.conf references it',
    );
    expect(push(state, [keyEl('db.host', { opp: 'delete' }), fileEl('app.conf', 'prod;*', { opp: 'delete' })]).ok).toBe(
      true,
    );
    expect(
      push(state, [fileEl('app.conf', 'prod;*', { content: 'no refs' }), keyEl('db.host', { opp: 'delete' })]).ok,
    ).toBe(true);
  });

  it('a FileRef value may name a file pushed later in the same push, with or without a leading slash', () => {
    for (const data of [
      [keyEl('tpl', { vdt: 'FileRef', values: [valueEl('Prod;*', 'conf/app.txt')] }), fileEl('conf/app.txt', 'Prod;*')],
      [
        fileEl('/conf/app.txt', 'Dev;*'),
        keyEl('tpl', { vdt: 'FileEmbed', values: [valueEl('Prod;*', '/conf/app.txt')] }),
      ],
    ]) {
      expect(push(empty(), data).ok).toBe(true);
    }
  });

  it('refuses a FileRef value that names no file (paths are case-sensitive)', () => {
    const state = new MapState(settingsWith(LEVELS), [], [fileRecord('conf/app.txt', ['Prod', '*'])]);
    expect(refused(state, [keyEl('tpl', { vdt: 'FileRef', values: [valueEl('Prod;*', 'Conf/App.txt')] })])).toBe(
      'data[0].values[0] key tpl: value names no file of the repository',
    );
    expect(push(state, [keyEl('tpl', { vdt: 'FileRef', values: [valueEl('Prod;*', null)] })]).ok).toBe(true);
  });

  it('refuses deleting the last variant of a file a FileRef value points at, but not one of several', () => {
    const state = new MapState(
      settingsWith(LEVELS),
      [keyRecord('Tpl', { vdt: 'FileRef', values: [{ context: ['*', '*'], value: 'a.txt', active: true }] })],
      [fileRecord('a.txt', ['Prod', '*']), fileRecord('a.txt', ['Dev', '*'])],
    );
    expect(push(state, [fileEl('a.txt', 'Prod;*', { opp: 'delete' })]).ok).toBe(true);
    expect(
      refused(state, [fileEl('a.txt', 'Prod;*', { opp: 'delete' }), fileEl('a.txt', 'Dev;*', { opp: 'delete' })]),
    ).toMatch(/^data\[[01]\] file a\.txt: cannot delete, key Tpl refers to it$/);
    expect(
      push(state, [
        fileEl('a.txt', 'Prod;*', { opp: 'delete' }),
        fileEl('a.txt', 'Dev;*', { opp: 'delete' }),
        keyEl('tpl', { opp: 'delete' }),
      ]).ok,
    ).toBe(true);
  });

  it('refuses retyping a key to FileRef when its values name no file', () => {
    const state = new MapState(settingsWith(LEVELS), [
      keyRecord('k', { values: [{ context: ['*', '*'], value: 'nope.txt', active: true }] }),
    ]);
    expect(refused(state, [keyEl('k', { vdt: 'FileRef' })])).toBe(
      'data[0] key k: the value at context *;*: value names no file of the repository',
    );
  });
});

describe('a push that changes nothing', () => {
  it('a key created and deleted in the same push leaves the state as it was', () => {
    const { after } = applied(empty(), [keyEl('k', { values: [valueEl('a;*', '1')] }), keyEl('K', { opp: 'delete' })]);
    expect([...after.keys()]).toEqual([]);
  });
});
