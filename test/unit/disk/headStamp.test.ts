/**
 * GitRepository.head never returns a head because the ref file merely looks like the one read
 * last. On ext4 a replaced ref's inode number goes to the next new file at once, and before Linux
 * 6.13 file times are stamped to the timer tick, so a ref replaced twice within one tick can come
 * back with the inode, mtime and size seen first. That is made here deterministically: the ref
 * file is rewritten in place (same inode, same size) and its mtime set back to the one read, to
 * the nanosecond; the read must still show the new commit.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

describe('GitRepository.head and a ref file that looks unchanged', () => {
  it('reads the commit the file holds, not the one remembered for its inode, mtime and size', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cfghub-headstamp-'));
    const registry = new RepositoryRegistry(root);
    try {
      const repository = await createRepository(registry, { account: 'acme', name: 'app', levels: ['Environment'] });
      const ref = join(repository.gitdir, 'refs', 'heads', 'main');
      const before = repository.head();
      const seen = statSync(ref, { bigint: true });
      const tree = execFileSync('git', ['rev-parse', `${before}^{tree}`], { cwd: repository.gitdir })
        .toString()
        .trim();
      const commit = execFileSync('git', ['commit-tree', tree, '-p', before, '-m', 'outside'], {
        cwd: repository.gitdir,
        env: GIT_ENV,
      })
        .toString()
        .trim();
      writeFileSync(ref, `${commit}\n`);
      const seconds = seen.mtimeNs / 1_000_000_000n;
      const nanoseconds = (seen.mtimeNs % 1_000_000_000n).toString().padStart(9, '0');
      execFileSync('touch', ['-m', '-d', `@${seconds}.${nanoseconds}`, ref]);
      const now = statSync(ref, { bigint: true });
      expect(`${now.ino}:${now.mtimeNs}:${now.size}`).toBe(`${seen.ino}:${seen.mtimeNs}:${seen.size}`);
      for (let i = 0; i < 200 && repository.head() !== commit; i++) await new Promise((done) => setTimeout(done, 5));
      expect(repository.head()).toBe(commit);
    } finally {
      registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
