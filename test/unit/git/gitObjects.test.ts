/**
 * Git's object encoding, checked against the real git CLI: blob ids (`git hash-object`), tree
 * order and ids (`git mktree`), commit ids (`git commit-tree`), loose-object bytes git can read,
 * and parsing of trees and commits back.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BLOB_MODE,
  encodeObject,
  parseCommit,
  parseTree,
  serializeCommit,
  SerializedTree,
  serializeTree,
  TREE_MODE,
  type CommitFields,
  type TreeEntry,
} from '../../../src/git/gitObjects.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

let repo: TempGit;
beforeAll(() => {
  repo = tempGit();
});
afterAll(() => repo.remove());

const hex40 = fc.stringMatching(/^[0-9a-f]{40}$/);

/** The oid git gives a tree made of these entries (mktree sorts them itself). */
function gitMktree(entries: readonly TreeEntry[]): string {
  const input = entries
    .map((e) => `${e.mode === TREE_MODE ? '040000 tree' : `${e.mode} blob`} ${e.oid}\t${e.name}\0`)
    .join('');
  return repo.git(['mktree', '-z', '--missing'], input).trim();
}

/** Writes an encoded object as a loose object file, as cfghub's object store does. */
function writeLoose(object: { oid: string; deflated: Buffer }): void {
  const folder = join(repo.gitdir, 'objects', object.oid.slice(0, 2));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, object.oid.slice(2)), object.deflated);
}

describe('encodeObject', () => {
  it.each([
    ['an empty blob', Buffer.alloc(0)],
    ['text', Buffer.from('hello world\n')],
    ['text without a final newline', Buffer.from('key: a')],
    ['unicode', Buffer.from('ünïcödé 🎉\r\n')],
    ['binary bytes', Buffer.from([0, 1, 2, 255, 254, 0, 10, 13])],
    ['a large blob', Buffer.alloc(300_000, 'x')],
    // Up to 64 KiB an object is hashed in one call with its header, above it as a stream (encodeObject).
    ['a blob of 65,536 bytes', Buffer.alloc(65_536, 'y')],
    ['a blob of 65,537 bytes', Buffer.alloc(65_537, 'y')],
  ])('gives %s the id of `git hash-object --stdin`', (_, content) => {
    expect(encodeObject('blob', content).oid).toBe(repo.git(['hash-object', '--stdin'], content).trim());
  });

  it('gives any blob the id of `git hash-object` (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const content = Buffer.from(bytes);
        expect(encodeObject('blob', content).oid).toBe(repo.git(['hash-object', '--stdin'], content).trim());
      }),
      { numRuns: 25 },
    );
  });

  it('deflates the wrapped object so that git reads it back as a loose object', () => {
    const content = Buffer.from('stored by cfghub\n');
    const object = encodeObject('blob', content);
    expect(object.type).toBe('blob');
    expect(inflateSync(object.deflated)).toEqual(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]));
    writeLoose(object);
    expect(repo.git(['cat-file', '-t', object.oid]).trim()).toBe('blob');
    expect(repo.gitBinary(['cat-file', 'blob', object.oid])).toEqual(content);
  });
});

describe('serializeTree', () => {
  const blob = encodeObject('blob', Buffer.from('x')).oid;
  const tree = encodeObject('tree', Buffer.alloc(0)).oid;

  it('sorts a folder as if its name ended in `/`, as git does', () => {
    const entries: TreeEntry[] = [
      { name: 'a0', mode: BLOB_MODE, oid: blob },
      { name: 'a', mode: TREE_MODE, oid: tree },
      { name: 'a.b', mode: BLOB_MODE, oid: blob },
      { name: 'a-b', mode: BLOB_MODE, oid: blob },
    ];
    const names = parseTree(serializeTree(entries)).map((e) => e.name);
    expect(names).toEqual(['a-b', 'a.b', 'a', 'a0']);
    expect(encodeObject('tree', serializeTree(entries)).oid).toBe(gitMktree(entries));
  });

  it('sorts a file `a` before `a.b` but a folder `a` after it', () => {
    const asFile = parseTree(
      serializeTree([
        { name: 'a.b', mode: BLOB_MODE, oid: blob },
        { name: 'a', mode: BLOB_MODE, oid: blob },
      ]),
    );
    expect(asFile.map((e) => e.name)).toEqual(['a', 'a.b']);
    const asFolder = parseTree(
      serializeTree([
        { name: 'a.b', mode: BLOB_MODE, oid: blob },
        { name: 'a', mode: TREE_MODE, oid: tree },
      ]),
    );
    expect(asFolder.map((e) => e.name)).toEqual(['a.b', 'a']);
  });

  it('sorts by bytes, not by UTF-16 code units or locale', () => {
    // U+FF21 (3 UTF-8 bytes, EF BC A1) sorts before U+1F389 (4 bytes, F0 9F 8E 89) in bytes,
    // but after it in UTF-16 code units (0xFF21 > 0xD83C).
    const entries: TreeEntry[] = [
      { name: '🎉', mode: BLOB_MODE, oid: blob },
      { name: 'Ａ', mode: BLOB_MODE, oid: blob },
      { name: 'B', mode: BLOB_MODE, oid: blob },
      { name: 'a', mode: BLOB_MODE, oid: blob },
      { name: 'é', mode: BLOB_MODE, oid: blob },
    ];
    expect(parseTree(serializeTree(entries)).map((e) => e.name)).toEqual(['B', 'a', 'é', 'Ａ', '🎉']);
    expect(encodeObject('tree', serializeTree(entries)).oid).toBe(gitMktree(entries));
  });

  it("gives the empty tree git's well-known id", () => {
    expect(encodeObject('tree', serializeTree([])).oid).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
  });

  it('gives any tree the id of `git mktree` (property)', () => {
    const name = fc
      .array(
        fc.constantFrom('a', 'b', 'A', '.', '-', '_', '0', '/'.replace('/', '~'), ' ', 'é', '🎉', 'Ａ', ';', '%'),
        { minLength: 1, maxLength: 4 },
      )
      .map((chars) => chars.join(''))
      .filter((n) => n !== '.' && n !== '..');
    const entry = fc.record({ name, mode: fc.constantFrom(BLOB_MODE, TREE_MODE, '100755'), oid: hex40 });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { minLength: 1, maxLength: 12, selector: (e) => e.name }), (entries) => {
        expect(encodeObject('tree', serializeTree(entries)).oid).toBe(gitMktree(entries));
      }),
      { numRuns: 40 },
    );
  });

  it('does not depend on the order entries are given in (property)', () => {
    const entry = fc.record({
      name: fc.stringMatching(/^[a-c.-]{1,3}$/).filter((n) => n !== '.' && n !== '..'),
      mode: fc.constantFrom(BLOB_MODE, TREE_MODE),
      oid: hex40,
    });
    fc.assert(
      fc.property(
        fc
          .uniqueArray(entry, { maxLength: 10, selector: (e) => e.name })
          .chain((entries) =>
            fc.tuple(
              fc.constant(entries),
              fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }),
            ),
          ),
        ([entries, shuffled]) => {
          expect(serializeTree(shuffled)).toEqual(serializeTree(entries));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('SerializedTree', () => {
  const entry = fc.record({
    name: fc.constantFrom('00', '0a', '1f', 'a', 'a.b', 'é', '🎉', 'ff', 'x-y'),
    mode: fc.constantFrom(BLOB_MODE, TREE_MODE),
    oid: hex40,
  });

  it('gives the tree of the same names with some ids replaced the id of `git mktree` (property)', () => {
    fc.assert(
      fc.property(
        fc
          .uniqueArray(entry, { minLength: 1, maxLength: 9, selector: (e) => e.name })
          .chain((entries) =>
            fc.tuple(fc.constant(entries), fc.array(fc.tuple(fc.nat(entries.length - 1), hex40), { maxLength: 4 })),
          ),
        ([entries, replaced]) => {
          const next = entries.map((e) => ({ ...e }));
          for (const [index, oid] of replaced) next[index].oid = oid;
          const patched = SerializedTree.of(entries).withIds(
            replaced.map(([index, oid]) => [entries[index].name, oid] as const),
          );
          expect(patched?.object.content).toEqual(serializeTree(next));
          expect(patched?.object.oid).toBe(gitMktree(next));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('leaves the tree it was made from as it was', () => {
    const tree = SerializedTree.of([{ name: 'a', mode: BLOB_MODE, oid: '1'.repeat(40) }]);
    tree.withIds([['a', '2'.repeat(40)]]);
    expect(parseTree(tree.object.content)[0].oid).toBe('1'.repeat(40));
  });

  it('gives undefined for a name that is not one of its entries, so the caller serializes afresh', () => {
    const tree = SerializedTree.of([{ name: 'a', mode: BLOB_MODE, oid: '1'.repeat(40) }]);
    expect(tree.withIds([['b', '2'.repeat(40)]])).toBeUndefined();
  });
});

describe('parseTree', () => {
  it('reads back what serializeTree wrote, in git order (property)', () => {
    const entry = fc.record({
      name: fc
        .string({ unit: 'grapheme', minLength: 1, maxLength: 6 })
        .filter((n) => !n.includes('\0') && !n.includes('/')),
      mode: fc.constantFrom(BLOB_MODE, TREE_MODE, '100755', '120000'),
      oid: hex40,
    });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { maxLength: 10, selector: (e) => e.name }), (entries) => {
        const parsed = parseTree(serializeTree(entries));
        const text = (e: TreeEntry) => `${e.mode} ${e.oid} ${e.name}`;
        expect(parsed.map(text).sort()).toEqual(entries.map(text).sort());
        expect(serializeTree(parsed)).toEqual(serializeTree(entries));
        // in git order: by the bytes of the name, a folder's name compared as if it ended in `/`
        const key = (e: TreeEntry) => Buffer.from(e.mode === TREE_MODE ? `${e.name}/` : e.name);
        for (let i = 1; i < parsed.length; i++)
          expect(Buffer.compare(key(parsed[i - 1]), key(parsed[i]))).toBeLessThan(0);
      }),
      { numRuns: 150 },
    );
  });

  it('reads a tree written by git', () => {
    const blob = repo.git(['hash-object', '-w', '--stdin'], 'content\n').trim();
    const sub = repo.git(['mktree'], `100644 blob ${blob}\tinner.txt\n`).trim();
    const root = repo
      .git(['mktree'], `100644 blob ${blob}\tz.txt\n040000 tree ${sub}\tdir\n100755 blob ${blob}\trun.sh\n`)
      .trim();
    const parsed = parseTree(repo.gitBinary(['cat-file', 'tree', root]));
    expect(parsed).toEqual([
      { mode: TREE_MODE, name: 'dir', oid: sub },
      { mode: '100755', name: 'run.sh', oid: blob },
      { mode: BLOB_MODE, name: 'z.txt', oid: blob },
    ]);
  });

  it.each([
    ['a truncated id', Buffer.concat([Buffer.from('100644 a\0'), Buffer.alloc(10)])],
    ['no NUL after the name', Buffer.from('100644 name-without-end')],
    ['no space after the mode', Buffer.from('100644')],
  ])('refuses %s', (_, content) => {
    expect(() => parseTree(content)).toThrow(/malformed tree/);
  });
});

describe('serializeCommit', () => {
  function gitCommitTree(fields: CommitFields): string {
    const args = ['commit-tree', fields.tree, ...fields.parents.flatMap((p) => ['-p', p])];
    return repo
      .git(args, fields.message, {
        GIT_AUTHOR_NAME: fields.author.name,
        GIT_AUTHOR_EMAIL: fields.author.email,
        GIT_AUTHOR_DATE: `@${fields.author.timestamp} +0000`,
        GIT_COMMITTER_NAME: fields.committer.name,
        GIT_COMMITTER_EMAIL: fields.committer.email,
        GIT_COMMITTER_DATE: `@${fields.committer.timestamp} +0000`,
      })
      .trim();
  }

  const emptyTree = () => repo.git(['mktree'], '').trim();

  it('gives a root commit the id of `git commit-tree`', () => {
    const fields: CommitFields = {
      tree: emptyTree(),
      parents: [],
      author: { name: 'cfghub', email: 'cfghub@localhost', timestamp: 1_700_000_000 },
      committer: { name: 'cfghub', email: 'cfghub@localhost', timestamp: 1_700_000_000 },
      message: 'Create repository acme/app\n',
    };
    const object = encodeObject('commit', serializeCommit(fields));
    expect(object.oid).toBe(gitCommitTree(fields));
  });

  it('gives commits with one and two parents, distinct author and committer, and odd messages the ids of git', () => {
    const tree = emptyTree();
    const base: CommitFields = {
      tree,
      parents: [],
      author: { name: 'Ann Author', email: 'ann@example.com', timestamp: 1 },
      committer: { name: 'Cid Committer', email: 'cid@example.com', timestamp: 2_000_000_000 },
      message: 'first\n',
    };
    const first = gitCommitTree(base);
    expect(encodeObject('commit', serializeCommit(base)).oid).toBe(first);
    const second = gitCommitTree({ ...base, parents: [first], message: 'second' });
    for (const message of [
      '',
      'no newline at the end',
      'Title\n\nBody\n\nToken: ci\n',
      'ünïcödé 🎉\n',
      '\n\nleading blank lines\n',
      'trailing blanks\n\n\n',
    ]) {
      for (const parents of [[first], [first, second]]) {
        const fields = { ...base, parents, message };
        expect(
          encodeObject('commit', serializeCommit(fields)).oid,
          JSON.stringify({ message, parents: parents.length }),
        ).toBe(gitCommitTree(fields));
      }
    }
  });

  it('writes commits that git reads and fsck accepts', () => {
    const fields: CommitFields = {
      tree: emptyTree(),
      parents: [],
      author: { name: 'cfghub', email: 'cfghub@localhost', timestamp: 1_700_000_123 },
      committer: { name: 'cfghub', email: 'cfghub@localhost', timestamp: 1_700_000_123 },
      message: 'A push\n\nToken: ci\n',
    };
    const commit = encodeObject('commit', serializeCommit(fields));
    writeLoose(commit);
    repo.git(['update-ref', 'refs/heads/check', commit.oid]);
    expect(repo.git(['log', '-1', '--format=%an <%ae> %at|%cn %ct|%B', commit.oid])).toBe(
      'cfghub <cfghub@localhost> 1700000123|cfghub 1700000123|A push\n\nToken: ci\n\n',
    );
    const fsck = repo.gitStatus(['fsck', '--strict', '--no-dangling']);
    expect(fsck.stderr).toBe('');
    expect(fsck.code).toBe(0);
  });
});

describe('parseCommit', () => {
  it('reads back the fields serializeCommit wrote (property)', () => {
    const signature = fc.record({
      name: fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,10}[A-Za-z]$/),
      email: fc.stringMatching(/^[a-z]{1,8}@[a-z]{1,8}\.[a-z]{2,3}$/),
      timestamp: fc.integer({ min: 0, max: 2 ** 33 }),
    });
    fc.assert(
      fc.property(
        hex40,
        fc.array(hex40, { maxLength: 3 }),
        signature,
        signature,
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        (tree, parents, author, committer, message) => {
          const parsed = parseCommit(serializeCommit({ tree, parents, author, committer, message }));
          expect(parsed).toEqual({
            tree,
            parents,
            committedAt: committer.timestamp,
            author: { name: author.name, email: author.email },
            message,
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a commit written by git, with a time zone and extra headers', () => {
    const tree = repo.git(['mktree'], '').trim();
    const env = {
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@x',
      GIT_AUTHOR_DATE: '@1600000000 +0200',
      GIT_COMMITTER_NAME: 'C',
      GIT_COMMITTER_EMAIL: 'c@x',
      GIT_COMMITTER_DATE: '@1650000000 -0530',
    };
    const parent = repo.git(['commit-tree', tree], 'parent\n', env).trim();
    const commit = repo.git(['commit-tree', tree, '-p', parent], 'child\n\nbody\n', env).trim();
    const parsed = parseCommit(repo.gitBinary(['cat-file', 'commit', commit]));
    expect(parsed).toEqual({
      tree,
      parents: [parent],
      committedAt: 1_650_000_000,
      author: { name: 'A', email: 'a@x' },
      message: 'child\n\nbody\n',
    });

    // A header git does not write by itself here (as in a signed commit): continuation lines are skipped.
    const raw = repo.gitBinary(['cat-file', 'commit', commit]).toString('utf8');
    const signed = raw.replace(
      /\n\n/,
      '\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\n',
    );
    expect(parseCommit(Buffer.from(signed))).toEqual(parsed);
  });

  it('refuses a commit without a tree', () => {
    expect(() => parseCommit(Buffer.from('parent abc\n\nmessage'))).toThrow(/malformed commit/);
  });
});
