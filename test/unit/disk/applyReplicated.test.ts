/**
 * An HA member's apply of its leader's record (disk/applyReplicated.ts) is made as the member's
 * own commits are: in the repository's writers' queue, so never beside a pack merge or repack of
 * the same repository, its pack kept until the ref moves; and the packs records add are merged by
 * cfghub's own merge, in the queue, as a commit's are.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyReplicatedEntry } from '../../../src/disk/applyReplicated.js';
import type { JournalEntry } from '../../../src/disk/journal/journalRecords.js';
import { PACKS_BEFORE_MERGE } from '../../../src/disk/objects/consolidatePacks.js';
import { readRef } from '../../../src/disk/refs/refs.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { encodeObject, serializeCommit } from '../../../src/git/gitObjects.js';
import { buildPack } from '../../../src/git/packWriter.js';
import { BRANCH_REF } from '../../../src/layout/layout.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { tempDir } from '../../support/paths.js';
import { holdsFor } from '../../support/poll.js';

describe("a member's apply of a leader's record", () => {
  let dir: ReturnType<typeof tempDir>;
  let repository: GitRepository;
  const git = (...args: string[]) =>
    execFileSync('git', ['--git-dir', repository.gitdir, ...args], { encoding: 'utf8' });
  const packFolder = () => readdirSync(join(repository.gitdir, 'objects', 'pack'));

  beforeEach(async () => {
    dir = tempDir();
    repository = await createRepository(new RepositoryRegistry(dir.path), {
      account: 'acme',
      name: 'member',
      levels: ['Env'],
    });
  });
  afterEach(() => dir.remove());

  /** The record a leader would send for a commit on the member's head (the same tree, a new message). */
  let turn = 0;
  function recordOnHead(): JournalEntry {
    const head = readRef(repository.gitdir, BRANCH_REF)!;
    const tree = git('rev-parse', `${head}^{tree}`).trim();
    const author = { name: 'leader', email: 'leader@example.com', timestamp: 1_700_000_000 + turn++ };
    const commit = encodeObject(
      'commit',
      serializeCommit({ tree, parents: [head], author, committer: author, message: `record ${turn}\n` }),
    );
    const pack = buildPack([commit]);
    return {
      repository: 'acme/member.git',
      ref: BRANCH_REF,
      old: head,
      new: commit.oid,
      before: '',
      after: '',
      packName: pack.name,
      pack: pack.pack,
      index: pack.index,
    };
  }

  it("waits for the repository's writers' queue: nothing is written while a pack merge holds it", async () => {
    const entry = recordOnHead();
    let endMerge!: () => void;
    const merging = repository.exclusive(() => new Promise<void>((resolve) => (endMerge = resolve)));
    const applied = applyReplicatedEntry(repository, entry);
    await holdsFor(300, () => {
      expect(readRef(repository.gitdir, BRANCH_REF)).toBe(entry.old);
      expect(packFolder().filter((name) => name.startsWith(entry.packName))).toEqual([]);
    });
    endMerge();
    await merging;
    expect(await applied).toEqual({ kind: 'applied' });
    expect(readRef(repository.gitdir, BRANCH_REF)).toBe(entry.new);
    expect(packFolder().filter((name) => name.endsWith('.keep'))).toEqual([]); // let go once the ref moved
    expect((await repository.headSnapshot()).commitId).toBe(entry.new); // the next read sees it at once
    git('fsck', '--strict', '--no-dangling');
  });

  it("merges the packs records add, in the queue, and every record's commit stays whole", async () => {
    const records = PACKS_BEFORE_MERGE + 8;
    for (let i = 0; i < records; i++)
      expect(await applyReplicatedEntry(repository, recordOnHead())).toEqual({ kind: 'applied' });
    await repository.exclusive(async () => undefined); // the merge scheduled after the last apply
    await repository.objects.settled(); // and the removal of the packs it merged
    expect(repository.maintenanceProblem).toBeUndefined();
    expect(packFolder().filter((name) => name.endsWith('.pack')).length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE + 1);
    expect(Number(git('rev-list', '--count', BRANCH_REF).trim())).toBe(records + 1);
    git('fsck', '--strict', '--no-dangling');
  });

  it('is the same record again when the ref is there already, and behind when it is elsewhere', async () => {
    const entry = recordOnHead();
    expect(await applyReplicatedEntry(repository, entry)).toEqual({ kind: 'applied' });
    expect(await applyReplicatedEntry(repository, entry)).toEqual({ kind: 'already' });
    expect(await applyReplicatedEntry(repository, { ...entry, old: '0'.repeat(40), new: '1'.repeat(40) })).toEqual({
      kind: 'behind',
      head: entry.new,
    });
  });
});
