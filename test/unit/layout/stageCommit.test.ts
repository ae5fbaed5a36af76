/**
 * Staging a push as git objects, on real bare repositories on disk:
 * what stageCommit keeps in memory is what readSnapshot reads back from git; a push of one key
 * writes a bounded number of objects whatever the repository's size; the same state always gives
 * the same tree; names in trees check out everywhere; `git fsck --strict` stays clean.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPush } from '../../../src/domain/applyPush.js';
import { contextId } from '../../../src/domain/context.js';
import type { RepoSettings } from '../../../src/domain/model.js';
import type { PushElement } from '../../../src/domain/pushRequest.js';
import { createBareRepository } from '../../../src/disk/createRepository.js';
import {
  encodeObject,
  isTreeEntry,
  parseTree,
  serializeTree,
  TREE_MODE,
  type Signature,
} from '../../../src/git/gitObjects.js';
import { keyPath } from '../../../src/layout/layout.js';
import { ObjectStore } from '../../../src/disk/objects/objectStore.js';
import { readSnapshot } from '../../../src/layout/readSnapshot.js';
import { GitRepository } from '../../../src/disk/repository.js';
import type { Snapshot } from '../../../src/layout/snapshot.js';
import { stageCommit, type StagedCommit } from '../../../src/layout/stageCommit.js';
import { gitEnv } from '../../support/gitCli.js';
import { deleteValueEl, fileEl, keyEl, settingsWith, valueEl } from '../../support/mapState.js';
import { MemoryObjects, writePack } from '../../support/memoryObjects.js';

function packIndexes(gitdir: string): string[] {
  const folder = join(gitdir, 'objects', 'pack');
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.idx')) : [];
}

const LEVELS = ['Environment', 'Application'];
const SETTINGS: RepoSettings = settingsWith(LEVELS, { description: 'unit test', created: '2023-11-14T22:13:20Z' });
let clock = 1_700_000_000;
const author = (): Signature => ({ name: 'cfghub', email: 'cfghub@localhost', timestamp: clock++ });

let root: string;
let counter = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'cfghub-stage-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function newRepository(): Promise<GitRepository> {
  const name = `repo${counter++}`;
  const accountDir = join(root, 'acme');
  await createBareRepository(accountDir, name, SETTINGS, author(), `Create repository acme/${name}\n`);
  return new GitRepository('acme', name, join(accountDir, `${name}.git`));
}

function git(gitdir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], {
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  });
}

function fsck(gitdir: string): { code: number; output: string } {
  try {
    const out = execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling', '--no-progress'], {
      env: gitEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { code: 0, output: out };
  } catch (error) {
    const e = error as { status?: number; stdout?: string; stderr?: string };
    return { code: e.status ?? -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** applyPush then stageCommit; fails the test when the push is refused. */
function stage(base: Snapshot, data: PushElement[], force = false): StagedCommit {
  const outcome = applyPush(base, { enableKeyCreation: true, data }, { forceKeyPush: force });
  if (!outcome.ok) throw new Error(`push refused: ${outcome.reason}`);
  return stageCommit(base, outcome.changes, { message: 'A push\n', author: author() });
}

/** Stages and commits a push to disk; returns the new head snapshot. */
async function commit(
  repository: GitRepository,
  data: PushElement[],
): Promise<{ staged: StagedCommit; snapshot: Snapshot }> {
  const head = repository.head();
  const base = await repository.snapshot(head);
  const staged = stage(base, data);
  expect(staged.commitId).not.toBeNull();
  const update = await repository.commit(staged, head);
  expect(update).toEqual({ ok: true });
  expect(repository.head()).toBe(staged.commitId);
  return { staged, snapshot: staged.snapshot };
}

/** A snapshot as plain data, for comparing snapshots built in different ways. */
function view(snapshot: Snapshot): unknown {
  const keys = [...snapshot.keys()].map((k) => ({
    ...k,
    values: k.values.map((v) => ({ ...v, context: [...v.context] })),
  }));
  keys.sort((a, b) => (a.key.toLowerCase() < b.key.toLowerCase() ? -1 : 1));
  const files = [...snapshot.files()].map((f) => ({ ...f, context: [...f.context] }));
  files.sort((a, b) => {
    const x = `${a.path}\n${contextId(a.context)}`;
    const y = `${b.path}\n${contextId(b.context)}`;
    return x < y ? -1 : 1;
  });
  return {
    commitId: snapshot.commitId,
    treeId: snapshot.treeId,
    settings: snapshot.settings,
    keyCount: snapshot.keyCount,
    valueCount: snapshot.valueCount,
    // Staging keeps each shard's count as keys change; reading counts them: the two agree.
    shardValueCounts: [...snapshot.shards].map(([name, shard]) => [name, shard.valueCount]).sort(),
    keys,
    files,
  };
}

const RICH_PUSH: PushElement[] = [
  keyEl('DB.Port', {
    vdt: 'Integer',
    readme: 'The port.\nSecond line: with # and "quotes"',
    values: [valueEl('Prod;*', '5432'), valueEl('*;*', 5433), valueEl('Dev;App-1', null, { active: false })],
  }),
  keyEl('db.host', {
    values: [valueEl('Prod;*', '  spaced  '), valueEl('dev;*', '- not a list'), valueEl('PROD;x', 'multi\nline\n')],
  }),
  keyEl('con', { vdt: 'Boolean', values: [valueEl(';', true)] }),
  keyEl('weird*[key](1)+', { vdt: 'JSON', values: [valueEl('*;*', { a: [1, null, 'x'] })] }),
  keyEl('tpl', { vdt: 'FileRef', values: [valueEl('Prod;*', '/conf/app.properties')] }),
  fileEl('/conf/app.properties', 'Prod;*', { content: 'host=${ db.host }\nport=${DB.PORT}\n' }),
  fileEl('conf/app.properties', 'Dev;*', { content: 'dev\n' }),
  fileEl('con/nul.txt', 'Dev;*', { content: 'reserved names\n' }),
  fileEl('a:b*c?.txt', '*;*', { content: 'forbidden characters\n' }),
  fileEl('trailing.', '*;*', { content: 'trailing dot\n' }),
  fileEl('100%/ünïcödé 🎉.txt', '*;*', { content: 'unicode\r\n' }),
  fileEl('old/notes.md', 'Prod;*', { content: 'inactive', active: false }),
];

describe('stageCommit and readSnapshot agree', () => {
  let repository: GitRepository;
  beforeAll(async () => {
    repository = await newRepository();
  });

  it('re-reading each commit from disk, without a previous snapshot, gives the snapshot stageCommit returned', async () => {
    const pushes: PushElement[][] = [
      RICH_PUSH,
      [
        keyEl('db.port', { values: [valueEl('prod;*', '6543'), deleteValueEl('*;*')] }),
        keyEl('NEW', { readme: 'r' }),
        fileEl('old/notes.md', 'prod;*', { content: 'now active' }),
      ],
      [
        keyEl('con', { opp: 'delete' }),
        fileEl('trailing.', '*;*', { opp: 'delete' }),
        fileEl('extra/x.txt', 'PROD;*', { content: 'adopts Prod' }),
      ],
      [keyEl('new', { opp: 'delete' }), keyEl('weird*[KEY](1)+', { values: [deleteValueEl('*;*')] })],
    ];
    for (const data of pushes) {
      const { staged, snapshot } = await commit(repository, data);
      const fresh = await readSnapshot(new ObjectStore(repository.gitdir), staged.commitId!);
      expect(view(fresh)).toEqual(view(snapshot));
      // the incremental path (reusing the previous snapshot's parts) agrees as well
      const incremental = await readSnapshot(
        new ObjectStore(repository.gitdir),
        staged.commitId!,
        (await repository.snapshot(repository.head())) as Snapshot,
      );
      expect(view(incremental)).toEqual(view(snapshot));
    }
    const last = await readSnapshot(new ObjectStore(repository.gitdir), repository.head());
    expect(last.file(`extra/x.txt\nprod;*`)?.context).toEqual(['Prod', '*']);
    expect(last.key('db.port')?.values).toEqual([
      { context: ['Dev', 'App-1'], value: null, active: false },
      { context: ['Prod', '*'], value: '6543', active: true },
    ]);
  });

  it('lays the repository out as the contract says, readable with plain git', () => {
    const head = repository.head();
    const paths = git(repository.gitdir, 'ls-tree', '-r', '--name-only', '-z', head).split('\0').filter(Boolean);
    expect(paths).toContain('repository.yaml');
    expect(paths).toContain(keyPath('DB.Port'));
    expect(paths).toContain('files/Prod;_/conf/app.properties');
    expect(paths).toContain('files/Dev;_/%63on/%6Eul.txt');
    expect(paths).toContain('files/_;_/a%3Ab%2Ac%3F.txt');
    expect(paths).toContain('files/Prod;_/old/notes.md');
    expect(paths.some((p) => p.startsWith('inactive-files/'))).toBe(false);
    expect(git(repository.gitdir, 'show', `${head}:files/Prod;_/conf/app.properties`)).toBe(
      'host=${ db.host }\nport=${DB.PORT}\n',
    );
    const keyFile = git(repository.gitdir, 'show', `${head}:${keyPath('db.port')}`);
    expect(keyFile).toMatch(/^key: DB\.Port\n/);
    expect(keyFile).toContain('context: Prod;*');
    expect(git(repository.gitdir, 'log', '--format=%s', head).trim().split('\n')).toEqual([
      'A push',
      'A push',
      'A push',
      'A push',
      'Create repository acme/repo0',
    ]);
  });

  it('leaves `git fsck --strict` clean', () => {
    expect(fsck(repository.gitdir)).toEqual({ code: 0, output: '' });
  });

  it('re-reads the snapshot of random pushes from the staged objects (property)', async () => {
    const base = await repository.headSnapshot();
    const memory = new MemoryObjects(new ObjectStore(repository.gitdir));
    await fc.assert(
      fc.asyncProperty(fc.array(randomPush, { minLength: 1, maxLength: 4 }), async (pushes) => {
        let snapshot = base;
        for (const data of pushes) {
          const outcome = applyPush(snapshot, { enableKeyCreation: true, data }, { forceKeyPush: true });
          if (!outcome.ok) continue;
          const staged = stageCommit(snapshot, outcome.changes, { message: 'p\n', author: author() });
          if (staged.commitId === null) continue;
          memory.add(staged.objects);
          snapshot = staged.snapshot;
          expect(view(await readSnapshot(memory.asObjectStore(), staged.commitId))).toEqual(view(snapshot));
          // The keys tree made from the previous one (SerializedTree.withIds) is the one made afresh.
          const fresh = [...snapshot.shards].map(([name, shard]) => ({ name, mode: TREE_MODE, oid: shard.treeId }));
          expect(snapshot.keysTreeId).toBe(
            fresh.length === 0 ? undefined : encodeObject('tree', serializeTree(fresh)).oid,
          );
        }
      }),
      { numRuns: 60 },
    );
  });
});

// --- random pushes ---------------------------------------------------------------------------------

const keyPool = fc.constantFrom(
  'db.port',
  'DB.PORT',
  'Db.Host',
  'db.host',
  'con',
  'CON',
  'aux.x',
  'a*b',
  'list[0]',
  'x.',
  'X.',
);
const itemPool = fc.constantFrom('Prod', 'prod', 'PROD', 'Dev', 'dev', 'con', 'Con', 'a.b', '*', '');
const contextText = fc.tuple(itemPool, itemPool).map(([a, b]) => `${a};${b}`);
const pathPool = fc.constantFrom(
  'conf/app.txt',
  'Conf/app.txt',
  'conf/App.txt',
  'conf',
  'conf/x/y',
  'nul',
  'NUL.txt',
  'com1/lpt9.log',
  'a:b',
  'q?',
  'p|q',
  'end.',
  'end ',
  'ünï/cödé',
  'ÜNÏ/x',
  '%41',
  'a%2Ab',
  'x.yaml',
  'keys',
  'repository.yaml',
);
const valuePool = fc.constantFrom<unknown>('1', 'x', '', null, 'multi\nline', ': y', 42, true);
const randomElement: fc.Arbitrary<PushElement> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        key: keyPool,
        readme: fc.option(fc.constantFrom('', 'doc', '# x'), { nil: undefined }),
        values: fc.array(fc.tuple(contextText, valuePool, fc.boolean()), { maxLength: 3 }),
      })
      .map(({ key, readme, values }) =>
        keyEl(key, { readme, values: values.map(([c, v, del]) => (del ? deleteValueEl(c) : valueEl(c, v))) }),
      ),
  },
  { weight: 1, arbitrary: keyPool.map((key) => keyEl(key, { opp: 'delete' })) },
  {
    weight: 3,
    arbitrary: fc
      .record({
        path: pathPool,
        context: contextText,
        content: fc.option(fc.constantFrom('', 'text', 'a\r\nb', '🎉'), { nil: undefined }),
        active: fc.option(fc.boolean(), { nil: undefined }),
      })
      .map(({ path, context, content, active }) => fileEl(path, context, { content, active })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(pathPool, contextText).map(([path, context]) => fileEl(path, context, { opp: 'delete' })),
  },
);
const randomPush = fc.array(randomElement, { minLength: 1, maxLength: 6 });

// --- bounded writes ----------------------------------------------------------------------------------

describe('a push of one key writes a bounded number of objects', () => {
  let repository: GitRepository;
  let big: Snapshot;

  beforeAll(async () => {
    repository = await newRepository();
    const base = await repository.headSnapshot();
    const data = Array.from({ length: 2000 }, (_, i) =>
      keyEl(`key.${i}`, {
        vdt: i % 2 ? 'Integer' : 'Text',
        values: [valueEl('Prod;*', String(i)), valueEl('*;*', String(i + 1))],
      }),
    );
    const staged = stage(base, data);
    // a fixture: written as one pack (as after `git gc`), then the branch moved with plain git
    writePack(repository.gitdir, staged.objects);
    git(repository.gitdir, 'update-ref', 'refs/heads/main', staged.commitId!, base.commitId);
    big = staged.snapshot;
    expect(git(repository.gitdir, 'rev-parse', 'refs/heads/main^{tree}').trim()).toBe(big.treeId);
    expect(big.keyCount).toBe(2000);
    expect(big.valueCount).toBe(4000);
  });

  const types = (staged: StagedCommit) => staged.objects.map((o) => o.type);

  it('updating a value: blob, shard tree, keys tree, root tree, commit', () => {
    const staged = stage(big, [keyEl('KEY.1234', { values: [valueEl('prod;*', '99')] })]);
    expect(types(staged)).toEqual(['blob', 'tree', 'tree', 'tree', 'commit']);
  });

  it('creating a key: the same five objects', () => {
    const staged = stage(big, [keyEl('brand.new', { values: [valueEl('Dev;*', 'x')] })]);
    expect(staged.objects).toHaveLength(5);
    expect(types(staged).sort()).toEqual(['blob', 'commit', 'tree', 'tree', 'tree']);
  });

  it('deleting a key: no blob, only the trees on its path and the commit', () => {
    const staged = stage(big, [keyEl('key.7', { opp: 'delete' })]);
    expect(types(staged)).toEqual(['tree', 'tree', 'tree', 'commit']);
  });

  it('every staged object is new, and committing adds exactly those objects, as one new pack', async () => {
    const packsBefore = packIndexes(repository.gitdir);
    const staged = stage(big, [keyEl('key.42', { readme: 'changed' })]);
    const check = execFileSync('git', ['--git-dir', repository.gitdir, 'cat-file', '--batch-check'], {
      env: gitEnv(),
      input: staged.objects.map((o) => o.oid).join('\n') + '\n',
      encoding: 'utf8',
    });
    expect(check.trim().split('\n')).toEqual(staged.objects.map((o) => `${o.oid} missing`));
    expect(await repository.commit(staged, big.commitId)).toEqual({ ok: true });
    const added = packIndexes(repository.gitdir).filter((name) => !packsBefore.includes(name));
    expect(added).toHaveLength(1);
    const listed = git(repository.gitdir, 'verify-pack', '-v', join(repository.gitdir, 'objects', 'pack', added[0]));
    const ids = listed
      .split('\n')
      .filter((line) => /^[0-9a-f]{40} /.test(line))
      .map((line) => line.slice(0, 40));
    expect(ids.sort()).toEqual(staged.objects.map((o) => o.oid).sort());
    expect(git(repository.gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(staged.commitId);
    expect(git(repository.gitdir, 'show', `${staged.commitId}:${keyPath('key.42')}`)).toContain('readme: changed');
  });

  it('a large repository passes `git fsck --strict`', () => {
    expect(fsck(repository.gitdir)).toEqual({ code: 0, output: '' });
  });

  it("a push of one file writes the file's blob and the trees on its path", () => {
    const staged = stage(big, [fileEl('conf/app.txt', 'Prod;*', { content: 'x' })]);
    // blob, conf/, Prod;_/, files/, root, commit, and (see the skipped test below) the unchanged keys tree
    expect(staged.objects.length).toBeLessThanOrEqual(7);
    expect(staged.objects.filter((o) => o.type === 'blob')).toHaveLength(1);
  });

  // stageCommit promises "objects to write, none of which the repository is known to hold
  // already": a push that changes only files must not stage the unchanged `keys` tree again.
  it('a push of one file stages no object the repository already holds', () => {
    const staged = stage(big, [fileEl('conf/app.txt', 'Prod;*', { content: 'x' })]);
    const existing = new Set(
      git(repository.gitdir, 'ls-tree', '-t', '-r', '--format=%(objectname)', big.commitId).split('\n'),
    );
    for (const object of staged.objects) expect(existing.has(object.oid), `${object.type} ${object.oid}`).toBe(false);
  });
});

// --- the same state, the same tree ---------------------------------------------------------------------

describe('the same state always gives the same tree', () => {
  let base: Snapshot;
  beforeAll(async () => {
    base = await (await newRepository()).headSnapshot();
  });

  /** Distinct changes whose end state does not depend on their order. */
  const keyNames = ['alpha', 'Beta', 'gamma.x', 'DELTA', 'e[1]', 'con', 'z*'];
  const contexts = ['Prod;*', 'Dev;*', '*;*', 'Prod;App', 'Dev;App-2'];
  const paths = ['conf/app.txt', 'conf/db.txt', 'readme.md', 'deep/a/b/c.txt', 'nul.txt'];
  const change = fc.oneof(
    fc
      .tuple(fc.constantFrom(...keyNames), fc.subarray(contexts, { minLength: 0 }))
      .map(([key, ctxs]) => ({ kind: 'key' as const, key, ctxs })),
    fc
      .tuple(fc.constantFrom(...paths), fc.constantFrom(...contexts), fc.boolean())
      .map(([path, context, active]) => ({ kind: 'file' as const, path, context, active })),
  );

  function elementsOf(
    c: { kind: 'key'; key: string; ctxs: string[] } | { kind: 'file'; path: string; context: string; active: boolean },
    reverseValues: boolean,
  ): PushElement {
    if (c.kind === 'file') return fileEl(c.path, c.context, { content: `content of ${c.path}`, active: c.active });
    const values = c.ctxs.map((ctx) => valueEl(ctx, `${c.key}@${ctx}`));
    return keyEl(c.key, { readme: `about ${c.key}`, values: reverseValues ? values.reverse() : values });
  }

  function treeAfter(pushes: PushElement[][]): string {
    let snapshot = base;
    for (const data of pushes) {
      const outcome = applyPush(snapshot, { enableKeyCreation: true, data }, { forceKeyPush: false });
      if (!outcome.ok) throw new Error(outcome.reason);
      snapshot = stageCommit(snapshot, outcome.changes, { message: 'p\n', author: author() }).snapshot;
    }
    return snapshot.treeId;
  }

  it('whatever the order of the changes, the values in an element, and how they are split into pushes (property)', () => {
    const unique = fc.uniqueArray(change, {
      minLength: 1,
      maxLength: 10,
      selector: (c) => (c.kind === 'key' ? `k:${c.key.toLowerCase()}` : `f:${c.path}\n${c.context.toLowerCase()}`),
    });
    fc.assert(
      fc.property(
        unique.chain((changes) =>
          fc.tuple(
            fc.constant(changes),
            fc.shuffledSubarray(changes, { minLength: changes.length, maxLength: changes.length }),
            fc.array(fc.boolean(), { minLength: changes.length, maxLength: changes.length }),
          ),
        ),
        ([changes, shuffled, cuts]) => {
          const inOrder = treeAfter([changes.map((c) => elementsOf(c, false))]);
          const pushes: PushElement[][] = [[]];
          shuffled.forEach((c, i) => {
            pushes[pushes.length - 1].push(elementsOf(c, true));
            if (cuts[i]) pushes.push([]);
          });
          expect(treeAfter(pushes.filter((p) => p.length > 0))).toBe(inOrder);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('adding then removing a key, a value or a file gives back the same tree', () => {
    const start = treeAfter([
      [keyEl('a', { values: [valueEl('Prod;*', '1')] }), fileEl('f.txt', 'Prod;*', { content: 'x' })],
    ]);
    const roundabout = treeAfter([
      [keyEl('a', { values: [valueEl('Prod;*', '1')] }), fileEl('f.txt', 'Prod;*', { content: 'x' })],
      [keyEl('temp'), keyEl('a', { values: [valueEl('Dev;*', '2')] }), fileEl('g.txt', 'Dev;*', { content: 'y' })],
      [
        keyEl('temp', { opp: 'delete' }),
        keyEl('a', { values: [deleteValueEl('dev;*')] }),
        fileEl('g.txt', 'dev;*', { opp: 'delete' }),
      ],
    ]);
    expect(roundabout).toBe(start);
    expect(treeAfter([[keyEl('a'), keyEl('a', { opp: 'delete' })]])).toBe(base.treeId);
  });

  it('a push that changes nothing makes no commit and writes nothing', () => {
    const outcome = applyPush(
      base,
      {
        enableKeyCreation: true,
        data: [keyEl('k'), keyEl('K', { opp: 'delete' }), fileEl('f', '*;*', { opp: 'delete' })],
      },
      { forceKeyPush: false },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const staged = stageCommit(base, outcome.changes, { message: 'p\n', author: author() });
    expect(staged.commitId).toBeNull();
    expect(staged.objects).toEqual([]);
    expect(staged.snapshot).toBe(base);
    const once = stage(base, [keyEl('k', { values: [valueEl('Prod;*', 'v')] })]);
    const again = applyPush(
      once.snapshot,
      { data: [keyEl('K', { values: [valueEl('prod;*', 'v')] })] },
      { forceKeyPush: false },
    );
    expect(
      again.ok && stageCommit(once.snapshot, again.changes, { message: 'p\n', author: author() }).commitId,
    ).toBeNull();
  });
});

// --- names in trees ---------------------------------------------------------------------------------

describe('every tree checks out on Linux, macOS and Windows', () => {
  let base: Snapshot;
  beforeAll(async () => {
    base = await (await newRepository()).headSnapshot();
  });

  function* trees(memory: MemoryObjects, oid: string, path: string): Generator<{ path: string; names: string[] }> {
    const entries = parseTree(memory.readSync(oid).content);
    yield { path, names: entries.map((e) => e.name) };
    for (const entry of entries)
      if (isTreeEntry(entry) && memory.has(entry.oid)) yield* trees(memory, entry.oid, `${path}${entry.name}/`);
  }

  it('no two names in a folder differ only by case, and no name is one Windows forbids (property)', () => {
    fc.assert(
      fc.property(fc.array(randomPush, { minLength: 1, maxLength: 5 }), (pushes) => {
        const memory = new MemoryObjects();
        let snapshot = base;
        for (const data of pushes) {
          const outcome = applyPush(snapshot, { enableKeyCreation: true, data }, { forceKeyPush: true });
          if (!outcome.ok) continue;
          const staged = stageCommit(snapshot, outcome.changes, { message: 'p\n', author: author() });
          if (staged.commitId === null) continue;
          memory.add(staged.objects);
          snapshot = staged.snapshot;
        }
        if (!memory.has(snapshot.treeId)) return;
        for (const { path, names } of trees(memory, snapshot.treeId, '')) {
          const folded = new Map<string, string>();
          for (const name of names) {
            const other = folded.get(name.toLowerCase());
            expect(other, `${path}${name} and ${path}${other}`).toBeUndefined();
            folded.set(name.toLowerCase(), name);
            expect(name, path).not.toMatch(/[<>:"|?*\\\u0000-\u001f]/);
            expect(name, path).not.toMatch(/[. ]$/);
            expect(name.split('.')[0], path).not.toMatch(/^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

// --- git's own safety checks ----------------------------------------------------------------------------

describe('what git itself refuses', () => {
  /**
   * Each push is accepted by the path rules of the contract; the contract also promises that
   * `git fsck --strict` stays clean and that a clone checks out. So each must either be refused
   * (a 304) or be stored so that git accepts it.
   */
  async function refusedOrAcceptedByGit(data: PushElement[]): Promise<void> {
    const repository = await newRepository();
    const head = repository.head();
    const base = await repository.snapshot(head);
    const outcome = applyPush(base, { enableKeyCreation: true, data }, { forceKeyPush: false });
    if (!outcome.ok) return;
    const staged = stageCommit(base, outcome.changes, { message: 'p\n', author: author() });
    expect(await repository.commit(staged, head)).toEqual({ ok: true });
    expect(fsck(repository.gitdir)).toEqual({ code: 0, output: '' });
    const clone = join(root, `clone-${counter++}`);
    execFileSync('git', ['clone', '--quiet', repository.gitdir, clone], {
      env: gitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  it('ordinary dot-files are fine', async () => {
    await refusedOrAcceptedByGit([
      fileEl('.gitignore', '*;*', { content: '*.log\n' }),
      fileEl('x/.github/ci.yml', '*;*', { content: 'on: push\n' }),
    ]);
  });

  // `git~1` is the NTFS short name of `.git`: git fsck --strict reports "hasDotgit" and `git clone`
  // refuses to check it out even on Linux, because core.protectNTFS is on by default.
  it('a `git~1` path segment', async () => {
    await refusedOrAcceptedByGit([fileEl('git~1/config', '*;*', { content: 'x' })]);
  });

  // `.g\u200cit` is `.git` with an ignorable ZERO WIDTH NON-JOINER, which HFS+ drops; git fsck
  // --strict reports "hasDotgit: contains '.git'".
  it('a `.git` segment hidden by an ignorable Unicode character (HFS+)', async () => {
    await refusedOrAcceptedByGit([fileEl('.g\u200cit/config', '*;*', { content: 'x' })]);
  });

  // A file named `.gitmodules` is checked by git fsck wherever it is in the tree; a submodule url
  // git considers dangerous makes `git fsck --strict` fail ("gitmodulesUrl").
  it('a `.gitmodules` file with a dangerous url', async () => {
    await refusedOrAcceptedByGit([
      fileEl('.gitmodules', '*;*', { content: '[submodule "x"]\n\tpath = x\n\turl = -oProxyCommand=evil\n' }),
    ]);
  });

  // A `.gitattributes` line longer than 2,048 bytes (well under the 1 MiB file limit) makes
  // `git fsck --strict` fail ("gitattributesLineLength").
  it('a `.gitattributes` file with a long line', async () => {
    await refusedOrAcceptedByGit([fileEl('.gitattributes', '*;*', { content: `${'a'.repeat(3000)} text\n` })]);
  });
});
