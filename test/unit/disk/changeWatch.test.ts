/**
 * The change watch (src/disk/refs/changeWatch.ts) on real folders: it trusts a head read until the
 * ref file is replaced or a folder on the way to it moves, and never trusts one it cannot watch;
 * watching named entries only (the token file), it ignores the others.
 * Through GitRepository: a commit made by plain git shows on the next read once the event loop
 * has passed its poll phase, as every request waits for before it reads the head (watchEventOrder.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeWatch, RECHECK_MS } from '../../../src/disk/refs/changeWatch.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { pollPhase } from '../../support/eventLoop.js';

let root: string;
const watches: ChangeWatch[] = [];
afterEach(() => {
  for (const watch of watches.splice(0)) watch.close();
  rmSync(root, { recursive: true, force: true });
});

/** A repository folder with a ref file, as the watch sees it: `<root>/acme/app.git/refs/heads/main`. */
function layout(): { gitdir: string; ref: string } {
  root = mkdtempSync(join(tmpdir(), 'cfghub-headwatch-'));
  const gitdir = join(root, 'acme', 'app.git');
  mkdirSync(join(gitdir, 'refs', 'heads'), { recursive: true });
  mkdirSync(join(gitdir, 'objects', 'pack'), { recursive: true });
  const ref = join(gitdir, 'refs', 'heads', 'main');
  writeFileSync(ref, `${'a'.repeat(40)}\n`);
  return { gitdir, ref };
}

/** Replaces the ref file by rename, as git and cfghub do. */
function replaceRef(ref: string, id: string): void {
  writeFileSync(`${ref}.lock`, `${id.repeat(40)}\n`);
  renameSync(`${ref}.lock`, ref);
}

function watchOf(gitdir: string, now: () => number = () => 0): ChangeWatch {
  const watch = ChangeWatch.ofHead(root, gitdir, now);
  watches.push(watch);
  return watch;
}

/**
 * A second repository's head watch, made before the watch under test: `barrier()` replaces its ref
 * and waits until it has seen that. inotify events are read in the order they happened, so by
 * then every event of an earlier change has been delivered to every watch.
 */
function witness(): { barrier: () => Promise<void> } {
  const gitdir = join(root, 'acme', 'witness.git');
  mkdirSync(join(gitdir, 'refs', 'heads'), { recursive: true });
  const ref = join(gitdir, 'refs', 'heads', 'main');
  writeFileSync(ref, `${'a'.repeat(40)}\n`);
  const watch = watchOf(gitdir);
  watch.beginCheck();
  let round = 0;
  return {
    barrier: async () => {
      replaceRef(ref, (++round % 10).toString());
      expect(await untilChanged(watch), 'the witness saw its ref replaced').toBe(true);
      watch.beginCheck();
    },
  };
}

/** Waits until the watch no longer trusts its head (events arrive through the event loop). */
async function untilChanged(watch: ChangeWatch): Promise<boolean> {
  for (let i = 0; i < 200 && watch.unchanged(); i++) await new Promise((done) => setTimeout(done, 5));
  return !watch.unchanged();
}

describe('ChangeWatch of a head ref', () => {
  it('trusts the head read until the ref file is replaced', async () => {
    const { gitdir, ref } = layout();
    const watch = watchOf(gitdir);
    watch.beginCheck();
    expect(watch.unchanged()).toBe(true);
    replaceRef(ref, 'b');
    expect(await untilChanged(watch)).toBe(true);
    watch.beginCheck(); // read again: trusted again, and still watching
    expect(watch.unchanged()).toBe(true);
    replaceRef(ref, 'c');
    expect(await untilChanged(watch)).toBe(true);
  });

  it('keeps trusting it when other parts of the repository change', async () => {
    const { gitdir } = layout();
    const { barrier } = witness();
    const watch = watchOf(gitdir);
    watch.beginCheck();
    writeFileSync(join(gitdir, 'objects', 'pack', 'pack-x.pack'), 'x');
    writeFileSync(join(gitdir, 'packed-refs'), '# pack-refs with: peeled\n');
    mkdirSync(join(gitdir, 'refs', 'tags'));
    mkdirSync(join(root, 'acme', 'other.git'));
    await barrier();
    expect(watch.unchanged()).toBe(true);
  });

  for (const [what, moved] of [
    ['the repository folder', (gitdir: string) => join(gitdir, '..', 'app-moved.git')],
    ['the account folder', (gitdir: string) => join(gitdir, '..', '..', 'acme-moved')],
    ['the refs folder', (gitdir: string) => join(gitdir, 'refs-moved')],
  ] as const) {
    it(`stops trusting it when ${what} is moved away, and watches the folder put in its place`, async () => {
      const { gitdir, ref } = layout();
      const watch = watchOf(gitdir);
      watch.beginCheck();
      const from =
        what === 'the repository folder'
          ? gitdir
          : what === 'the account folder'
            ? join(root, 'acme')
            : join(gitdir, 'refs');
      renameSync(from, moved(gitdir));
      expect(await untilChanged(watch)).toBe(true);
      mkdirSync(join(gitdir, 'refs', 'heads'), { recursive: true });
      writeFileSync(ref, `${'d'.repeat(40)}\n`);
      watch.beginCheck();
      expect(watch.unchanged()).toBe(true);
      replaceRef(ref, 'e'); // in the new folder
      expect(await untilChanged(watch)).toBe(true);
    });
  }

  it('stops trusting it when the repository folder is removed', async () => {
    const { gitdir } = layout();
    const watch = watchOf(gitdir);
    watch.beginCheck();
    rmSync(gitdir, { recursive: true, force: true });
    expect(await untilChanged(watch)).toBe(true);
    watch.beginCheck(); // nothing to watch any more
    expect(watch.unchanged()).toBe(false);
  });

  it('never trusts a head it cannot watch', () => {
    const { gitdir } = layout();
    rmSync(join(gitdir, 'refs', 'heads'), { recursive: true });
    const watch = watchOf(gitdir);
    watch.beginCheck();
    expect(watch.unchanged()).toBe(false);
  });

  it(`trusts a head for at most ${RECHECK_MS} ms, whatever the watches say`, () => {
    const { gitdir } = layout();
    let now = 5_000;
    const watch = watchOf(gitdir, () => now);
    watch.beginCheck();
    now += RECHECK_MS - 1;
    expect(watch.unchanged()).toBe(true);
    now += 1;
    expect(watch.unchanged()).toBe(false);
  });

  it('forgets the head when told (after a commit of its own)', () => {
    const { gitdir } = layout();
    const watch = watchOf(gitdir);
    watch.beginCheck();
    watch.invalidate();
    expect(watch.unchanged()).toBe(false);
  });
});

describe('ChangeWatch of named entries', () => {
  it('ignores other entries of the folder and sees the named one replaced', async () => {
    root = mkdtempSync(join(tmpdir(), 'cfghub-changewatch-'));
    const folder = join(root, '.cfghub');
    mkdirSync(folder);
    writeFileSync(join(folder, 'tokens.json'), '{}');
    const { barrier } = witness();
    const watch = new ChangeWatch(root, folder, ['tokens.json'], () => 0);
    watches.push(watch);
    watch.beginCheck();
    writeFileSync(join(folder, 'tokens.json.lock'), '');
    writeFileSync(join(folder, 'other.json'), '{}');
    await barrier();
    expect(watch.unchanged()).toBe(true);
    writeFileSync(join(folder, 'tokens.json.tmp'), '{"tokens":[]}');
    renameSync(join(folder, 'tokens.json.tmp'), join(folder, 'tokens.json'));
    expect(await untilChanged(watch)).toBe(true);
  });
});

describe('GitRepository.head with the watch', () => {
  it('shows a commit made by plain git once the event loop has read its events', async () => {
    root = mkdtempSync(join(tmpdir(), 'cfghub-headwatch-'));
    const registry = new RepositoryRegistry(root);
    try {
      const repository = await createRepository(registry, { account: 'acme', name: 'app', levels: ['Environment'] });
      const first = repository.head();
      for (let round = 0; round < 20; round++) {
        const before = repository.head();
        const tree = execFileSync('git', ['rev-parse', `${before}^{tree}`], { cwd: repository.gitdir })
          .toString()
          .trim();
        const commit = execFileSync('git', ['commit-tree', tree, '-p', before, '-m', `outside ${round}`], {
          cwd: repository.gitdir,
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: 't',
            GIT_AUTHOR_EMAIL: 't@t',
            GIT_COMMITTER_NAME: 't',
            GIT_COMMITTER_EMAIL: 't@t',
          },
        })
          .toString()
          .trim();
        execFileSync('git', ['update-ref', 'refs/heads/main', commit, before], { cwd: repository.gitdir });
        await pollPhase();
        expect(repository.head()).toBe(commit);
      }
      expect(repository.head()).not.toBe(first);
    } finally {
      registry.close();
    }
  });
});
