/**
 * The push journal (src/disk/journal/pushJournal.ts, journalReplay.ts): a 200 is durable through the
 * journal's one fdatasync, and what a power cut takes of the push's own files is restored at the
 * next start. A power cut is played on the real server process and real repositories: the server
 * is killed with SIGKILL after its 200, then the files the push wrote without fsyncs are taken
 * away as the cut would (its pack, its index, and the ref put back to the very file it was before
 * the move, kept by a hard link so its inode and times are the old ones). Checked with git.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, headOf, keysAtHead, pushTo, tempDir } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';
import { until } from '../support/poll.js';
import { PushJournal } from '../../src/disk/journal/pushJournal.js';
import { listen } from '../../src/lib/telemetry.js';

let dir: ReturnType<typeof tempDir>;
beforeAll(() => {
  dir = tempDir('cfghub-journal-');
});
afterAll(() => dir.remove());

const setKey = (key: string) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*;*', value: key }] }],
});

const journalFolder = (repos: string) => join(repos, '.cfghub', 'journal');
const journals = (repos: string) =>
  fs.existsSync(journalFolder(repos)) ? fs.readdirSync(journalFolder(repos)).filter((f) => f.endsWith('.journal')) : [];
const packFiles = (gitdir: string) => new Set(fs.readdirSync(join(gitdir, 'objects', 'pack')));

function replayEvents(server: ServerProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.includes('"event":"journal-replayed"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * A repository, a server process, one acknowledged push, then the server killed. Returns what a
 * power cut would need: the ref's file from before the push (a hard link) and the push's new pack files.
 */
async function pushThenKill(name: string) {
  cliOk(
    dir.path,
    'repo',
    'create',
    name,
    '--context',
    'Environment,Application',
    '--token-free-push',
    '--token-free-pull',
  );
  const gitdir = gitdirOf(dir.path, name);
  const before = headOf(dir.path, name);
  const refBefore = join(dir.path, `${name.replace('/', '-')}-ref-before`);
  fs.linkSync(join(gitdir, 'refs/heads/main'), refBefore);
  const packsBefore = packFiles(gitdir);
  const server = await startServerProcess(dir.path);
  const answer = await pushTo(server.url, `/rest/push/${name}`, setKey('acknowledged.push'));
  expect(answer.status).toBe(200);
  const after = headOf(dir.path, name);
  expect(after).not.toBe(before);
  expect(await server.kill()).toBe('SIGKILL');
  expect(journals(dir.path)).toHaveLength(1); // left by the killed process
  const pushed = [...packFiles(gitdir)].filter((file) => !packsBefore.has(file));
  expect(pushed.filter((file) => file.endsWith('.pack'))).toHaveLength(1);
  return { gitdir, before, after, refBefore, pushed };
}

/** What a power cut takes of a push whose files were not fsynced: its pack files, and the ref's move. */
function cutPower(gitdir: string, refBefore: string, pushed: readonly string[]): void {
  for (const file of pushed) fs.rmSync(join(gitdir, 'objects', 'pack', file));
  fs.renameSync(refBefore, join(gitdir, 'refs/heads/main'));
}

/** A PushJournal of its own in a temporary folder, with the fsyncs (fdatasyncs included) counted. */
function journalAlone() {
  const folder = tempDir('cfghub-journal-alone-');
  const fsyncs = { count: 0 };
  const stop = listen({ fsync: () => fsyncs.count++ });
  return { folder, journal: new PushJournal(folder.path), fsyncs, stop };
}

/** A record of repository `r<n>` whose pack is `packBytes` bytes. */
const entry = (n: number, packBytes: number) => ({
  repository: `acme/r${n}.git`,
  ref: 'refs/heads/main',
  old: '1'.repeat(40),
  new: '2'.repeat(40),
  before: 'none',
  after: 'none',
  packName: `pack-${'3'.repeat(40)}`,
  pack: Buffer.alloc(packBytes, n),
  index: Buffer.alloc(50, n),
});

describe('the push journal', () => {
  it('restores an acknowledged push whose pack and ref move a power cut took', async () => {
    const name = 'acme/power-cut';
    const { gitdir, before, after, refBefore, pushed } = await pushThenKill(name);
    cutPower(gitdir, refBefore, pushed);
    expect(headOf(dir.path, name)).toBe(before);
    expect(() => git(gitdir, 'cat-file', '-e', after)).toThrow();

    const restarted = await startServerProcess(dir.path);
    try {
      expect(headOf(dir.path, name)).toBe(after);
      expect(keysAtHead(gitdir)).toEqual(['acknowledged.push']);
      git(gitdir, 'fsck', '--strict', '--no-dangling');
      expect(replayEvents(restarted)).toEqual([
        expect.objectContaining({ repository: name, records: 1, packsRestored: 1, refMoved: true }),
      ]);
      expect(JSON.stringify(replayEvents(restarted))).not.toContain(dir.path);
      expect(journals(dir.path)).toEqual([]);
      const pull = await fetch(`${restarted.url}/rest/pull/${name}`, { headers: { Context: 'Production;App' } });
      expect(((await pull.json()) as { properties: Record<string, unknown> }).properties['acknowledged.push']).toEqual({
        val: 'acknowledged.push',
      });
    } finally {
      await restarted.stop();
    }
  });

  it('never undoes a change made to the ref after the push (a rollback with git update-ref)', async () => {
    const name = 'acme/rolled-back';
    const { gitdir, before, after, refBefore } = await pushThenKill(name);
    fs.rmSync(refBefore);
    git(gitdir, 'update-ref', 'refs/heads/main', before, after); // by hand, after the 200
    const restarted = await startServerProcess(dir.path);
    try {
      expect(headOf(dir.path, name)).toBe(before);
      expect(replayEvents(restarted)).toEqual([
        expect.objectContaining({ repository: name, records: 1, packsRestored: 0, refMoved: false }),
      ]);
      expect(journals(dir.path)).toEqual([]);
      git(gitdir, 'fsck', '--strict');
    } finally {
      await restarted.stop();
    }
  });

  it('does not replay a record torn by the cut: that push was never acknowledged', async () => {
    const name = 'acme/torn';
    const { gitdir, before, refBefore, pushed } = await pushThenKill(name);
    cutPower(gitdir, refBefore, pushed);
    const [journal] = journals(dir.path);
    const path = join(journalFolder(dir.path), journal);
    const bytes = fs.readFileSync(path);
    bytes.fill(0, 4096 + 100); // the record's end never reached the disk
    fs.writeFileSync(path, bytes);
    const restarted = await startServerProcess(dir.path);
    try {
      expect(headOf(dir.path, name)).toBe(before);
      expect(keysAtHead(gitdir)).toEqual([]);
      git(gitdir, 'fsck', '--strict', '--no-dangling');
      expect(journals(dir.path)).toEqual([]);
      expect((await pushTo(restarted.url, `/rest/push/${name}`, setKey('next.push'))).status).toBe(200);
    } finally {
      await restarted.stop();
    }
  });

  it('is deleted at a clean stop, its pushes kept', async () => {
    const name = 'acme/clean-stop';
    cliOk(dir.path, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
    const server = await startServerProcess(dir.path);
    try {
      for (let i = 0; i < 3; i++)
        expect((await pushTo(server.url, `/rest/push/${name}`, setKey(`k${i}`))).status).toBe(200);
      expect(journals(dir.path)).toHaveLength(1);
    } finally {
      await server.stop();
    }
    expect(journals(dir.path)).toEqual([]);
    expect(keysAtHead(gitdirOf(dir.path, name))).toEqual(['k0', 'k1', 'k2']);
  });

  it('of a worker that died is replayed by the primary at once, not at the next start', async () => {
    const repos = tempDir('cfghub-journal-workers-');
    try {
      const name = 'acme/workers';
      cliOk(repos.path, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
      const server = await startServerProcess(repos.path, { CFGHUB_WORKERS: '2' });
      try {
        for (let i = 0; i < 4; i++)
          expect((await pushTo(server.url, `/rest/push/${name}`, setKey(`w${i}`))).status).toBe(200);
        const written = journals(repos.path);
        expect(written.length).toBeGreaterThan(0); // one per worker that took a push
        const listening = server
          .output()
          .split('\n')
          .find((line) => line.includes('"event":"listening"'))!;
        for (const pid of (JSON.parse(listening) as { pids: number[] }).pids) process.kill(pid, 'SIGKILL');
        // The primary logs a replay after deleting its journal: both are waited for.
        await until(
          () =>
            journals(repos.path).every((file) => !written.includes(file)) &&
            server.output().includes('"event":"journal-replayed"'),
          "the dead workers' journals replayed, deleted and logged",
        );
        expect(keysAtHead(gitdirOf(repos.path, name))).toEqual(['w0', 'w1', 'w2', 'w3']);
      } finally {
        await server.stop();
      }
    } finally {
      repos.remove();
    }
  });

  it('where no journal can be made, lets pushes make their own files durable (two rounds of fsyncs)', async () => {
    const repos = tempDir('cfghub-no-journal-');
    try {
      const name = 'acme/no-journal';
      cliOk(repos.path, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
      fs.mkdirSync(join(repos.path, '.cfghub'), { recursive: true });
      fs.writeFileSync(journalFolder(repos.path), 'not a folder'); // mkdir of the journal folder fails
      const server = await startServerProcess(repos.path);
      try {
        const before = headOf(repos.path, name);
        expect((await pushTo(server.url, `/rest/push/${name}`, setKey('still.durable'))).status).toBe(200);
        expect(headOf(repos.path, name)).not.toBe(before);
        expect(keysAtHead(gitdirOf(repos.path, name))).toEqual(['still.durable']);
      } finally {
        await server.stop();
      }
      expect(fs.readFileSync(journalFolder(repos.path), 'utf8')).toBe('not a folder');
      git(gitdirOf(repos.path, name), 'fsck', '--strict', '--no-dangling');
    } finally {
      repos.remove();
    }
  });

  it('is made with 1 MiB written ahead, and let go once it holds 4 MiB: the files its records named fsynced, the file deleted', async () => {
    const { folder, journal, fsyncs, stop } = journalAlone();
    try {
      const first = (await journal.file())!;
      first.letGo(); // each push lets its file go when done (see JournalFile.hold)
      const [firstName] = journals(folder.path);
      expect(fs.statSync(join(journalFolder(folder.path), firstName)).size).toBe(4096 + 1024 * 1024);
      // Four records of a 1 MiB pack each fill the first file; each names a file of its own to fsync.
      const named = Array.from({ length: 4 }, (_, n) => join(folder.path, `pushed-${n}`));
      for (const [n, path] of named.entries()) {
        fs.writeFileSync(path, `file ${n}`);
        const file = (await journal.file())!;
        expect(file).toBe(first);
        const ticket = await file.append(entry(n, 1024 * 1024));
        ticket.committed([path], [folder.path]);
        file.letGo();
      }
      expect(journals(folder.path)).toEqual([firstName]);
      fsyncs.count = 0;
      const next = (await journal.file())!; // the first is full: a new one, and the first let go
      expect(next).not.toBe(first);
      next.letGo();
      await journal.settled();
      expect(journals(folder.path)).toHaveLength(1);
      expect(journals(folder.path)).not.toContain(firstName);
      // The four named files and their folder, and the new journal's folder entry.
      expect(fsyncs.count).toBe(4 + 1 + 1);
      await journal.close();
      expect(journals(folder.path)).toEqual([]);
    } finally {
      stop();
      folder.remove();
    }
  });

  it('makes appends that arrive together durable with one fdatasync (group commit across repositories)', async () => {
    const { folder, journal, fsyncs, stop } = journalAlone();
    try {
      const file = (await journal.file())!;
      expect(file).toBeDefined();
      fsyncs.count = 0; // the file's making is not counted
      const tickets = await Promise.all(Array.from({ length: 20 }, (_, n) => file.append(entry(n, 100))));
      // The first append's fdatasync starts at once; the 19 written while it runs share the next.
      expect(fsyncs.count).toBe(2);
      for (const ticket of tickets) ticket.committed([], []);
      file.letGo();
      await journal.close();
      expect(fs.readdirSync(journalFolder(folder.path))).toEqual([]);
    } finally {
      stop();
      folder.remove();
    }
  });
});
