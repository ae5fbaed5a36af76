/**
 * Model-based fuzzing of pushes: random sequences of valid and
 * invalid pushes go to the real server and to a small in-memory model of keys, values and
 * files. After every step the server's export equals the model's state (and after each sequence
 * so does the export of a new server reading the disk), a refused or malformed push leaves HEAD
 * where it was, a push that changes nothing makes no commit, and nothing
 * answers 5xx. `npm test` runs 50 sequences of 30 to 50 pushes; `npm run
 * test:fuzz` runs 400.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { LONE_SURROGATE } from '../../src/domain/filePath.js';
import { referencedKeys } from '../../src/domain/names.js';
import { createRepository } from '../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { anyText } from '../support/arbitraries.js';
import { recordFigures } from '../support/figures.js';
import { pushTo, serverForFile, startTestServer } from '../support/harness.js';

const RUNS = Number(process.env.CFGHUB_FUZZ_RUNS ?? 50);

/** Small pools, so that pushes collide: the same keys, contexts and files again and again. */
const KEYS = ['a', 'A', 'b', 'db.host', 'Port', 'x-1'];
const CONTEXTS = ['*;*', 'Production;*', 'Production;Web', '*;Web', 'Dev;Api'];
const PATHS = ['app.properties', 'conf/db.yaml', 'conf/log.xml'];

type ValidElement =
  | { readonly kind: 'set'; readonly key: string; readonly values: readonly (readonly [string, string])[] }
  | { readonly kind: 'deleteValue'; readonly key: string; readonly context: string }
  | { readonly kind: 'deleteKey'; readonly key: string }
  | { readonly kind: 'setFile'; readonly path: string; readonly context: string; readonly content: string }
  | { readonly kind: 'deleteFile'; readonly path: string; readonly context: string };

/** Elements every push containing them is refused for (304), whatever the state. */
const REFUSED_ELEMENTS: Record<string, unknown> = {
  wrongLevels: { key: 'a', values: [{ context: '*;*;*', value: 'x' }] },
  badKeyName: { key: 'no spaces allowed', values: [{ context: '*;*', value: 'x' }] },
  traversal: { file: 'conf/../../etc/passwd', context: '*;*', content: 'x' },
  gitFolder: { file: '.git/config', context: '*;*', content: 'x' },
  notAnInteger: { key: 'typed.count', vdt: 'Integer', values: [{ context: '*;*', value: 'twelve' }] },
  missingReference: { file: 'conf/ref.txt', context: '*;*', content: 'host=${ never.created }' },
  badContextItem: { key: 'a', values: [{ context: 'Prod uction;*', value: 'x' }] },
};

/** Bodies refused as malformed (400), whatever the state. */
const MALFORMED_BODIES: Record<string, string> = {
  syntax: '{"changeComment": "x", "data": [',
  unknownField: JSON.stringify({ data: [{ key: 'a', valeus: [] }] }),
  bothKeyAndFile: JSON.stringify({ data: [{ key: 'a', file: 'f', values: [] }] }),
  notAnArray: JSON.stringify({ data: { key: 'a' } }),
  badOpp: JSON.stringify({ data: [{ key: 'a', opp: 'remove' }] }),
};

type Step =
  | {
      readonly kind: 'push';
      readonly enableKeyCreation: boolean;
      readonly elements: readonly ValidElement[];
      readonly refused?: { at: number; name: string };
    }
  | { readonly kind: 'malformed'; readonly name: string };

const value = fc.oneof(fc.constantFrom('x', 'y', '', '0', 'true'), anyText);
/** File contents: any text (some holding `${ key }`), or a template referencing keys of the pool. */
const content = fc.oneof(
  { weight: 3, arbitrary: value },
  { weight: 1, arbitrary: fc.constantFrom(...KEYS).map((key) => `${key}=\${ ${key} }\n`) },
);
const validElement: fc.Arbitrary<ValidElement> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      key: fc.constantFrom(...KEYS),
      values: fc.uniqueArray(fc.tuple(fc.constantFrom(...CONTEXTS), value), {
        minLength: 1,
        maxLength: 3,
        selector: ([c]) => c,
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteValue' as const),
      key: fc.constantFrom(...KEYS),
      context: fc.constantFrom(...CONTEXTS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteKey' as const), key: fc.constantFrom(...KEYS) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('setFile' as const),
      path: fc.constantFrom(...PATHS),
      context: fc.constantFrom(...CONTEXTS),
      content,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deleteFile' as const),
      path: fc.constantFrom(...PATHS),
      context: fc.constantFrom(...CONTEXTS),
    }),
  },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('push' as const),
      enableKeyCreation: fc.boolean(),
      elements: fc.array(validElement, { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.boolean(),
        fc.array(validElement, { maxLength: 3 }),
        fc.nat(),
        fc.constantFrom(...Object.keys(REFUSED_ELEMENTS)),
      )
      .map(([enableKeyCreation, elements, at, name]) => ({
        kind: 'push' as const,
        enableKeyCreation,
        elements,
        refused: { at: at % (elements.length + 1), name },
      })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('malformed' as const),
      name: fc.constantFrom(...Object.keys(MALFORMED_BODIES)),
    }),
  },
);

/** The model: keys by lower-cased name (with the spelling they were created with) and files by path and context. */
interface Model {
  readonly keys: Map<string, { name: string; values: Map<string, string> }>;
  readonly files: Map<string, string>;
}

const copy = (model: Model): Model => ({
  keys: new Map([...model.keys].map(([id, k]) => [id, { name: k.name, values: new Map(k.values) }])),
  files: new Map(model.files),
});

/** The model after a push of valid elements, or 'refused'. */
function apply(model: Model, elements: readonly ValidElement[], enableKeyCreation: boolean): Model | 'refused' {
  const next = copy(model);
  for (const element of elements) {
    switch (element.kind) {
      case 'set': {
        const id = element.key.toLowerCase();
        let key = next.keys.get(id);
        if (!key) {
          if (!enableKeyCreation) return 'refused';
          key = { name: element.key, values: new Map() };
          next.keys.set(id, key);
        }
        for (const [context, text] of element.values) key.values.set(context, text);
        break;
      }
      case 'deleteValue':
        next.keys.get(element.key.toLowerCase())?.values.delete(element.context);
        break;
      case 'deleteKey':
        next.keys.delete(element.key.toLowerCase());
        break;
      case 'setFile':
        if (LONE_SURROGATE.test(element.content)) return 'refused'; // UTF-8 cannot hold it
        next.files.set(`${element.path}@${element.context}`, element.content);
        break;
      case 'deleteFile':
        next.files.delete(`${element.path}@${element.context}`);
        break;
    }
  }
  // A `${ key }` in any file must name a key that exists once the push is applied.
  for (const content of next.files.values()) {
    if (referencedKeys(content).some((name) => !next.keys.has(name.toLowerCase()))) return 'refused';
  }
  return next;
}

function wire(element: ValidElement): unknown {
  switch (element.kind) {
    case 'set':
      return { key: element.key, values: element.values.map(([context, text]) => ({ context, value: text })) };
    case 'deleteValue':
      return { key: element.key, values: [{ context: element.context, opp: 'delete' }] };
    case 'deleteKey':
      return { key: element.key, opp: 'delete' };
    case 'setFile':
      return { file: element.path, context: element.context, content: element.content };
    case 'deleteFile':
      return { file: element.path, context: element.context, opp: 'delete' };
  }
}

function modelView(model: Model): { keys: Record<string, string[]>; files: Record<string, string> } {
  const keys: Record<string, string[]> = {};
  for (const key of model.keys.values()) keys[key.name] = [...key.values].map(([c, v]) => `${c}=${v}`).sort();
  return { keys, files: Object.fromEntries([...model.files].sort()) };
}

async function serverView(url: string, repository: string): Promise<ReturnType<typeof modelView>> {
  const response = await fetch(`${url}/rest/export/${repository}`);
  expect(response.status).toBe(200);
  const { data } = (await response.json()) as { data: any[] };
  const keys: Record<string, string[]> = {};
  const files: [string, string][] = [];
  for (const element of data) {
    if ('key' in element) keys[element.key] = element.values.map((v: any) => `${v.context}=${v.value}`).sort();
    else files.push([`${element.file}@${element.context}`, element.content]);
  }
  return { keys, files: Object.fromEntries(files.sort()) };
}

const fixture = serverForFile();
let registry: RepositoryRegistry;

beforeAll(() => {
  registry = new RepositoryRegistry(fixture.repos);
});

describe('random sequences of valid and invalid pushes', () => {
  it(
    'keep the server equal to the model after every step, HEAD still on every refusal, and never a 5xx',
    async () => {
      let sequence = 0;
      let steps = 0;
      let badInputs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 30, maxLength: 50 }), async (sequenceSteps) => {
          const name = `run${sequence++}`;
          const repository = await createRepository(registry, {
            account: 'fuzz',
            name,
            levels: ['Environment', 'Application'],
            tokenFreePush: true,
            tokenFreePull: true,
          });
          const head = () => readFileSync(join(repository.gitdir, 'refs/heads/main'), 'utf8').trim();
          let model: Model = { keys: new Map(), files: new Map() };
          for (const [n, s] of sequenceSteps.entries()) {
            steps++;
            const before = head();
            let expected: Model | 'refused' | 'malformed';
            let answer;
            if (s.kind === 'malformed') {
              badInputs++;
              expected = 'malformed';
              answer = await pushTo(fixture.server.url, `/rest/push/fuzz/${name}`, MALFORMED_BODIES[s.name]);
            } else {
              const data = s.elements.map(wire);
              if (s.refused) {
                badInputs++;
                data.splice(s.refused.at, 0, REFUSED_ELEMENTS[s.refused.name]);
              }
              expected = s.refused ? 'refused' : apply(model, s.elements, s.enableKeyCreation);
              answer = await pushTo(fixture.server.url, `/rest/push/fuzz/${name}`, {
                changeComment: `step ${n}`,
                enableKeyCreation: s.enableKeyCreation,
                data,
              });
            }
            const label = `step ${n} of fuzz/${name}: ${JSON.stringify(s)} answered ${answer.status} ${answer.etag ?? ''} ${answer.body}`;
            expect(answer.status, label).toBe(expected === 'malformed' ? 400 : expected === 'refused' ? 304 : 200);
            if (typeof expected === 'object') {
              const changed = JSON.stringify(modelView(expected)) !== JSON.stringify(modelView(model));
              expect(head() !== before, `${label}: a commit exactly when the state changed`).toBe(changed);
              expect(answer.etag).toBe(`"${head()}"`);
              model = expected;
            } else {
              expect(head(), `${label}: HEAD unchanged`).toBe(before);
            }
            expect(await serverView(fixture.server.url, `fuzz/${name}`), label).toEqual(modelView(model));
          }
          // What is on disk, read by a new server with nothing cached, is the model too.
          const fresh = await startTestServer(fixture.repos);
          try {
            expect(await serverView(fresh.url, `fuzz/${name}`), `fuzz/${name} read back from disk`).toEqual(
              modelView(model),
            );
          } finally {
            await fresh.close();
          }
        }),
        // No shrinking: each attempt replays HTTP pushes; the failing step's label says enough.
        { numRuns: RUNS, endOnFailure: true },
      );
      recordFigures('fuzz', { sequences: sequence, steps, badInputs });
    },
    RUNS * 3_000,
  );
});
