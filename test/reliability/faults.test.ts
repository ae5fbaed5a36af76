/**
 * Bad days: a server clock far off, a full disk, a repository the server may not
 * write, damaged objects. Each gets a clear answer, not `500 internal error`, is logged once with
 * its cause, leaves no temporary file and the repository untouched.
 *
 * - Stale ref locks are judged on the file system's clock: with the server's clock a day behind
 *   (Debian's libfaketime), a dead writer's old lock is still removed; a day ahead, a live writer's
 *   fresh lock is still kept (its writer then finishes and the push goes through after it).
 * - `ENOSPC` on a small tmpfs (skipped with a message where mounting is not permitted): 507.
 * - A repository the server's user may not write (the server runs as `nobody` through `setpriv`;
 *   skipped with a message where that is impossible): 503 naming the reason; reads still work.
 * - A flipped byte in a pack, a deleted pack, a truncated loose object, a delta that does not fit
 *   its base, a pack entry of a reserved type, a missing object: 409 `repository_damaged` naming
 *   the repository and the object, never a path (the last three were 500s once).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diskFull } from '../../src/service/admin/storageHealth.js';
import { readPackEntries } from '../../src/git/packEntries.js';
import { assemblePack } from '../../src/git/packWriter.js';
import { holderNote, holderPath } from '../../src/disk/refs/lockHolder.js';
import { cliOk, git, gitdirOf, headOf, pushTo, startTestServer, tempDir } from '../support/harness.js';
import { keyPath, plainGitCommit } from '../support/reads.js';
import { startServerProcess } from '../support/serverProcess.js';
import { FAKETIME_LIBRARY, fakeTimeEnv } from '../support/fakeTime.js';
import { holdsFor, tracked, until } from '../support/poll.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir('cfghub-faults-');
});
afterAll(() => dir.remove());

const setKey = (key: string, value = key) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*;*', value }] }],
});

function createRepository(repos: string, name: string): string {
  cliOk(
    repos,
    'repo',
    'create',
    name,
    '--context',
    'Environment,Application',
    '--token-free-push',
    '--token-free-pull',
  );
  return gitdirOf(repos, name);
}

/**
 * Resolves once a push has written its pack and tried the ref's lock: the pack's `.keep` stays
 * while the ref is locked by another writer (see GitRepository.commitWith).
 */
function pushFoundLock(gitdir: string): Promise<void> {
  return until(() => leftovers(gitdir).some((file) => file.endsWith('.keep')), 'the push at the locked ref');
}

/** Files in the pack folder a failed write must not leave: temporary files, `.keep` marks, the ref lock. */
function leftovers(gitdir: string): string[] {
  const pack = fs
    .readdirSync(join(gitdir, 'objects/pack'))
    .filter((f) => f.startsWith('.cfghub-tmp-') || f.startsWith('tmp_') || f.endsWith('.keep'));
  return [...pack, ...(fs.existsSync(join(gitdir, 'refs/heads/main.lock')) ? ['main.lock'] : [])];
}

function available(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

describe('stale ref locks on the file system clock, whatever the server clock says', () => {
  const faketime = FAKETIME_LIBRARY !== undefined;

  it.skipIf(!faketime)('a server a day behind still removes a lock older than the threshold', async () => {
    const name = 'clock/behind';
    const gitdir = createRepository(dir.path, name);
    const lock = join(gitdir, 'refs/heads/main.lock');
    fs.writeFileSync(lock, `${headOf(dir.path, name)}\n`);
    const old = new Date(Date.now() - 10_000); // 10 s old on the file system's clock; the threshold is 2 s
    fs.utimesSync(lock, old, old);
    const server = await startServerProcess(dir.path, {
      ...fakeTimeEnv({ FAKETIME: '-1d' }),
      CFGHUB_STALE_LOCK_SECONDS: '2',
    });
    try {
      const answer = await pushTo(server.url, `/rest/push/${name}`, setKey('after.dead.writer'));
      expect(answer.status).toBe(200);
      // Its age on the file system's clock (10 s and the server's start), not a day less.
      const age = Number(/"event":"stale-lock-removed".*"ageSeconds":(\d+)/.exec(server.output())?.[1]);
      expect(age).toBeGreaterThanOrEqual(9);
      expect(age).toBeLessThan(600);
    } finally {
      await server.stop();
    }
  });

  it.skipIf(!faketime)(
    "a server a day ahead keeps a live writer's fresh lock, and its push goes through after it",
    async () => {
      const name = 'clock/ahead';
      const gitdir = createRepository(dir.path, name);
      const server = await startServerProcess(dir.path, {
        ...fakeTimeEnv({ FAKETIME: '+1d' }),
        CFGHUB_STALE_LOCK_SECONDS: '30',
      });
      try {
        // Another writer (plain git) moves the ref under a lock it holds for a while.
        const head = headOf(dir.path, name);
        const lock = join(gitdir, 'refs/heads/main.lock');
        const other = plainGitCommitWithoutRef(gitdir, head);
        fs.writeFileSync(lock, `${other}\n`);
        const pushing = tracked(pushTo(server.url, `/rest/push/${name}`, setKey('while.locked')));
        await pushFoundLock(gitdir);
        // The push retries meanwhile, and the lock is never taken away.
        await holdsFor(700, () => {
          expect(fs.existsSync(lock)).toBe(true);
          expect(pushing.settled()).toBe(false);
        });
        fs.renameSync(lock, join(gitdir, 'refs/heads/main')); // the other writer commits
        const answer = await pushing.promise;
        expect(answer.status).toBe(200);
        expect(server.output()).not.toMatch(/stale-lock-removed/);
        // Both writes are there: the other writer's commit is the parent of the push's.
        expect(git(gitdir, 'rev-parse', 'refs/heads/main~1').trim()).toBe(other);
      } finally {
        await server.stop();
      }
    },
  );

  it("keeps a live cfghub writer's lock however old, and removes one whose holder died", async () => {
    const name = 'clock/holder';
    const gitdir = createRepository(dir.path, name);
    const lock = join(gitdir, 'refs/heads/main.lock');
    const old = new Date(Date.now() - 10_000); // far past the threshold of 1 s
    const server = await startServerProcess(dir.path, { CFGHUB_STALE_LOCK_SECONDS: '1' });
    try {
      // This test process plays a cfghub writer stalled under its lock: alive, so its lock stays.
      const other = plainGitCommitWithoutRef(gitdir, headOf(dir.path, name));
      fs.writeFileSync(lock, `${other}\n`);
      fs.utimesSync(lock, old, old);
      fs.writeFileSync(holderPath(lock), holderNote(fs.statSync(lock).ino));
      const pushing = tracked(pushTo(server.url, `/rest/push/${name}`, setKey('behind.stalled.writer')));
      await pushFoundLock(gitdir);
      // The push retries meanwhile, past the threshold, and the lock is never taken away.
      await holdsFor(1500, () => {
        expect(fs.existsSync(lock)).toBe(true);
        expect(pushing.settled()).toBe(false);
      });
      fs.renameSync(lock, join(gitdir, 'refs/heads/main')); // the stalled writer finishes
      fs.rmSync(holderPath(lock));
      expect((await pushing.promise).status).toBe(200);
      expect(git(gitdir, 'rev-parse', 'refs/heads/main~1').trim()).toBe(other);
      expect(server.output()).not.toMatch(/stale-lock-removed/);

      // A note naming a process that is gone: the lock goes by its age.
      fs.writeFileSync(lock, `${other}\n`);
      fs.utimesSync(lock, old, old);
      fs.writeFileSync(holderPath(lock), holderNote(fs.statSync(lock).ino).replace(` ${process.pid} `, ' 999999999 '));
      expect((await pushTo(server.url, `/rest/push/${name}`, setKey('after.dead.writer'))).status).toBe(200);
      await until(() => /stale-lock-removed/.test(server.output()), 'the stale-lock-removed log line');
      expect(fs.existsSync(holderPath(lock))).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it.skipIf(faketime)('is skipped: faketime is not installed (apt-get install faketime; .ci/run installs it)', () => {
    console.log('[faults] faketime missing: the clock tests were skipped');
  });
});

/** A commit on top of `head` made with plain git, without moving the ref. */
function plainGitCommitWithoutRef(gitdir: string, head: string): string {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Other',
    GIT_AUTHOR_EMAIL: 'o@example.com',
    GIT_COMMITTER_NAME: 'Other',
    GIT_COMMITTER_EMAIL: 'o@example.com',
  };
  return execFileSync('git', ['--git-dir', gitdir, 'commit-tree', `${head}^{tree}`, '-p', head, '-m', 'other writer'], {
    env,
    encoding: 'utf8',
  }).trim();
}

describe('a full disk', () => {
  // Mounted only when this test runs (not while tests are collected), and always unmounted.
  let mount = '';
  let mounted = false;
  beforeAll(() => {
    mount = tempDir('cfghub-tmpfs-').path;
    mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount]).status === 0;
    if (!mounted) console.log('[faults] mount -t tmpfs not permitted: the ENOSPC test was skipped');
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [mount]);
    fs.rmSync(mount, { recursive: true, force: true });
  });

  it('answers 507 insufficient_storage naming the repository, leaves nothing behind, and recovers (skipped where mounting a tmpfs is not permitted)', async (ctx) => {
    if (!mounted) ctx.skip();
    const name = 'disk/full';
    const gitdir = createRepository(mount, name);
    const server = await startTestServer(mount);
    try {
      expect((await pushTo(server.url, `/rest/push/${name}`, setKey('before'))).status).toBe(200);
      const head = headOf(mount, name);
      const filler = join(mount, 'filler');
      spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' }); // until ENOSPC
      const answer = await pushTo(server.url, `/rest/push/${name}`, setKey('too.much', 'x'.repeat(100_000)));
      expect(answer.status).toBe(507);
      expect(answer.json).toMatchObject({ error: 'insufficient_storage', repository: name });
      expect(answer.body).not.toContain(mount);
      expect(diskFull()).toMatchObject({ repository: name });
      expect(headOf(mount, name)).toBe(head);
      expect(leftovers(gitdir)).toEqual([]);
      const logged = server.logs.filter((line) => line.event === 'storage-full');
      expect(logged).toHaveLength(1);
      expect(String(logged[0].problem)).toMatch(/no space left/);
      expect(server.logText()).not.toContain(mount);

      fs.rmSync(filler);
      expect((await pushTo(server.url, `/rest/push/${name}`, setKey('after'))).status).toBe(200);
      expect(diskFull()).toBeUndefined();
      git(gitdir, 'fsck', '--strict', '--no-dangling');
    } finally {
      await server.close();
    }
  });
});

describe('a repository the server may not write', () => {
  // The server runs as nobody; the repositories (created by this user) are readable, not writable.
  const canDropPrivileges = process.getuid?.() === 0 && available('setpriv');

  it.skipIf(!canDropPrivileges)(
    'answers 503 repository_unwritable with the reason; reads still work; nothing changes',
    async () => {
      const repos = tempDir('cfghub-readonly-');
      try {
        fs.chmodSync(repos.path, 0o755);
        const name = 'locked/down';
        const gitdir = createRepository(repos.path, name);
        const head = headOf(repos.path, name);
        const server = await startServerProcess(repos.path, {}, [
          'setpriv',
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
        ]);
        try {
          const answer = await pushTo(server.url, `/rest/push/${name}`, setKey('refused'));
          expect(answer.status).toBe(503);
          expect(answer.json).toMatchObject({ error: 'repository_unwritable', repository: name });
          expect(answer.json.message).toMatch(/permission denied/);
          expect(answer.body).not.toContain(repos.path);
          expect((await fetch(`${server.url}/rest/export/${name}`)).status).toBe(200);
          // The log line reaches this process through a pipe, maybe after the answer did.
          const logged = () => server.output().match(/"event":"repository-unwritable"/g) ?? [];
          await until(() => logged().length > 0, 'the repository-unwritable log line');
          expect(logged()).toHaveLength(1);
        } finally {
          await server.stop();
        }
        expect(headOf(repos.path, name)).toBe(head);
        expect(leftovers(gitdir)).toEqual([]);
        git(gitdir, 'fsck', '--strict', '--no-dangling');
      } finally {
        repos.remove();
      }
    },
  );

  it.skipIf(canDropPrivileges)('is skipped: the tests cannot run the server as another user', () => {
    console.log('[faults] not root or no setpriv: the unwritable repository test was skipped');
  });
});

describe('damaged objects', () => {
  /** A repository with three keys pushed, each its own pack; returns it and the blob of key `k1`. */
  async function damagedRepository(name: string): Promise<{ gitdir: string; blob: string }> {
    const gitdir = createRepository(dir.path, name);
    const server = await startTestServer(dir.path);
    try {
      for (const key of ['k0', 'k1', 'k2'])
        expect((await pushTo(server.url, `/rest/push/${name}`, setKey(key))).status).toBe(200);
    } finally {
      await server.close();
    }
    return { gitdir, blob: git(gitdir, 'rev-parse', `refs/heads/main:${keyPath('k1')}`).trim() };
  }

  /** The pack (base path without extension) holding `oid`, and the object's offset in it. */
  function packHolding(gitdir: string, oid: string): { base: string; offset: number } {
    for (const name of fs.readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.endsWith('.idx'))) {
      const listing = execFileSync('git', ['show-index'], {
        input: fs.readFileSync(join(gitdir, 'objects/pack', name)),
        encoding: 'utf8',
      });
      const line = listing.split('\n').find((l) => l.split(' ')[1] === oid);
      if (line)
        return { base: join(gitdir, 'objects/pack', name.replace(/\.idx$/, '')), offset: Number(line.split(' ')[0]) };
    }
    throw new Error(`no pack holds ${oid}`);
  }

  /** `objects`: the damaged objects; the answer names one of them. */
  async function expectDamageAnswer(name: string, gitdir: string, objects: readonly string[]): Promise<void> {
    const files = fs.readdirSync(join(gitdir, 'objects/pack')).sort();
    const head = headOf(dir.path, name);
    const server = await startTestServer(dir.path);
    try {
      for (const answer of [
        await fetch(`${server.url}/rest/export/${name}`),
        await fetch(`${server.url}/rest/push/${name}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(setKey('k9')),
        }),
      ]) {
        const body = await answer.text();
        expect(answer.status, body).toBe(409);
        expect(JSON.parse(body)).toMatchObject({ error: 'repository_damaged', repository: name });
        expect(objects).toContain(JSON.parse(body).object);
        expect(JSON.parse(body).message).toContain(`object ${JSON.parse(body).object}`);
        expect(body).toContain(name);
        expect(body).not.toContain(dir.path);
        expect(body).not.toMatch(/\.pack|objects\//);
      }
      const logged = server.logs.filter((line) => line.event === 'repository-damaged');
      expect(logged).toHaveLength(2); // once per request
      expect(server.logText()).not.toContain(dir.path);
    } finally {
      await server.close();
    }
    expect(headOf(dir.path, name)).toBe(head);
    expect(fs.readdirSync(join(gitdir, 'objects/pack')).sort()).toEqual(files);
  }

  it('a flipped byte in a pack', async () => {
    const name = 'damage/flipped';
    const { gitdir, blob } = await damagedRepository(name);
    const { base, offset } = packHolding(gitdir, blob);
    fs.chmodSync(`${base}.pack`, 0o644);
    const bytes = fs.readFileSync(`${base}.pack`);
    bytes[offset + 20] ^= 0x40; // inside the object's stored data
    fs.writeFileSync(`${base}.pack`, bytes);
    await expectDamageAnswer(name, gitdir, [blob]);
  });

  it('a deleted pack', async () => {
    const name = 'damage/deleted';
    const { gitdir, blob } = await damagedRepository(name);
    const { base } = packHolding(gitdir, blob);
    const held = execFileSync('git', ['show-index'], { input: fs.readFileSync(`${base}.idx`), encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[1]);
    fs.rmSync(`${base}.pack`);
    fs.rmSync(`${base}.idx`);
    await expectDamageAnswer(name, gitdir, held);
  });

  /**
   * Repacks the repository into one pack without deltas (git, `--window=0`), then rewrites it with
   * the entry of `oid` replaced by `entry(bytes of the entry)`: the pack and its index are rebuilt
   * by cfghub's own pack code, so git never refuses the damage.
   */
  function rewriteEntry(gitdir: string, oid: string, entry: () => Buffer): void {
    git(gitdir, 'repack', '-a', '-d', '-f', '--window=0', '-q');
    const folder = join(gitdir, 'objects/pack');
    const [index] = fs.readdirSync(folder).filter((f) => f.endsWith('.idx'));
    const base = join(folder, index.replace(/\.idx$/, ''));
    const entries = readPackEntries(fs.readFileSync(`${base}.pack`), fs.readFileSync(`${base}.idx`))!;
    expect(entries).toBeDefined();
    const changed = entries.map((e) => (e.oid.toString('hex') === oid ? { oid: e.oid, bytes: entry(), crc: 0 } : e));
    const pack = assemblePack(changed);
    for (const file of fs.readdirSync(folder)) fs.rmSync(join(folder, file), { force: true });
    fs.writeFileSync(join(folder, `${pack.name}.pack`), pack.pack);
    fs.writeFileSync(join(folder, `${pack.name}.idx`), pack.index);
  }

  /** A pack entry's header: `type` (3 bits) and the inflated size. */
  function entryHeader(type: number, size: number): Buffer {
    const bytes = [(type << 4) | (size & 0x0f) | (size > 15 ? 0x80 : 0)];
    for (let rest = size >> 4; rest > 0; rest >>= 7) bytes.push((rest & 0x7f) | (rest > 127 ? 0x80 : 0));
    return Buffer.from(bytes);
  }

  it('a delta that does not fit its base (DeltaFormatError): 409 naming the repository and the object, history too', async () => {
    const name = 'damage/delta';
    const { gitdir, blob } = await damagedRepository(name);
    const other = git(gitdir, 'rev-parse', `refs/heads/main:${keyPath('k0')}`).trim();
    // A REF_DELTA on k0's blob that announces a base of 3 bytes: the base is longer.
    const delta = Buffer.from([3, 1, 0x01, 0x78]);
    rewriteEntry(gitdir, blob, () =>
      Buffer.concat([entryHeader(7, delta.length), Buffer.from(other, 'hex'), deflateSync(delta)]),
    );
    await expectDamageAnswer(name, gitdir, [blob]);
    await expectHistoryDamage(name, [blob]);
  });

  it('a pack entry of a reserved type (PackFormatError): 409 naming the repository and the object', async () => {
    const name = 'damage/entry-type';
    const { gitdir, blob } = await damagedRepository(name);
    rewriteEntry(gitdir, blob, () => Buffer.concat([entryHeader(5, 3), deflateSync(Buffer.from('abc'))]));
    await expectDamageAnswer(name, gitdir, [blob]);
  });

  it('a missing object (ObjectNotFoundError): 409 naming the repository and the object, history too', async () => {
    const name = 'damage/missing';
    const { gitdir, blob } = await damagedRepository(name);
    // Everything but k1's blob, repacked by git itself.
    git(gitdir, 'repack', '-a', '-d', '-f', '--window=0', '-q');
    const folder = join(gitdir, 'objects/pack');
    const [index] = fs.readdirSync(folder).filter((f) => f.endsWith('.idx'));
    const kept = execFileSync('git', ['show-index'], { input: fs.readFileSync(join(folder, index)), encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')[1])
      .filter((oid) => oid !== blob);
    const packed = execFileSync('git', ['--git-dir', gitdir, 'pack-objects', '-q', join(folder, 'pack')], {
      input: `${kept.join('\n')}\n`,
      encoding: 'utf8',
    }).trim();
    for (const file of fs.readdirSync(folder))
      if (!file.includes(packed)) fs.rmSync(join(folder, file), { force: true });
    await expectDamageAnswer(name, gitdir, [blob]);
    await expectHistoryDamage(name, [blob]);
  });

  it('a pack index cut short (PackIndexFormatError): 409 naming the repository, for reads, pushes and short commit ids', async () => {
    const name = 'damage/index';
    const { gitdir } = await damagedRepository(name);
    const head = headOf(dir.path, name);
    const all = git(gitdir, 'rev-list', '--objects', '--all')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(0, 40));
    git(gitdir, 'repack', '-a', '-d', '-f', '-q');
    const folder = join(gitdir, 'objects/pack');
    const [index] = fs.readdirSync(folder).filter((f) => f.endsWith('.idx'));
    fs.chmodSync(join(folder, index), 0o644);
    fs.truncateSync(join(folder, index), 600);
    await expectDamageAnswer(name, gitdir, all);
    const server = await startTestServer(dir.path);
    try {
      const answer = await fetch(`${server.url}/rest/diff/${name}`, { headers: { From: head.slice(0, 9) } });
      const body = await answer.text();
      expect(answer.status, body).toBe(409);
      expect(JSON.parse(body)).toMatchObject({ error: 'repository_damaged', repository: name });
      expect(body).not.toContain(dir.path);
    } finally {
      await server.close();
    }
  });

  /** The history of the damaged repository: 409 repository_damaged naming it and the object, no path, logged as damage. */
  async function expectHistoryDamage(name: string, objects: readonly string[]): Promise<void> {
    const server = await startTestServer(dir.path);
    try {
      const answer = await fetch(`${server.url}/rest/history/${name}`);
      const body = await answer.text();
      expect(answer.status, body).toBe(409);
      expect(JSON.parse(body)).toMatchObject({ error: 'repository_damaged', repository: name });
      expect(objects).toContain(JSON.parse(body).object);
      expect(JSON.parse(body).message).toContain(`repository ${name}`);
      expect(body).not.toContain(dir.path);
      expect(server.logs.filter((line) => line.event === 'repository-damaged')).toHaveLength(1);
    } finally {
      await server.close();
    }
  }

  it('a truncated loose object', async () => {
    const name = 'damage/truncated';
    const { gitdir } = await damagedRepository(name);
    plainGitCommit(
      gitdir,
      {
        [keyPath('k1')]:
          'key: k1\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*;*"\n    value: by plain git\n    active: true\n',
      },
      'by hand',
    );
    const blob = git(gitdir, 'rev-parse', `refs/heads/main:${keyPath('k1')}`).trim();
    const loose = join(gitdir, 'objects', blob.slice(0, 2), blob.slice(2));
    fs.chmodSync(loose, 0o644);
    fs.truncateSync(loose, Math.floor(fs.statSync(loose).size / 2));
    await expectDamageAnswer(name, gitdir, [blob]);
  });
});
