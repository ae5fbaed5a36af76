/**
 * A read replica after a power cut: every mirror whole, at the head it had fetched. The power cut
 * is played as the push journal's tests play it, on real processes and real repositories: the
 * replica (under strace, which records every fsync, rename and link of it and of its git
 * children) fetches a push and a new repository, is killed with SIGKILL, then every file it wrote
 * since whose data no fsync covered loses its data (truncated to nothing: the name kept, the
 * content not, as on a file system that journals metadata only or not at all). Checked with
 * `git fsck` and by the replica serving again.
 */
import * as fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, headOf, pushTo, tempDir } from '../support/harness.js';
import { eventually } from '../support/replicas.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';

const APP = 'acme/app';
const LATER = 'acme/later';
const dirs = {
  primary: tempDir('cfghub-cut-primary-'),
  replica: tempDir('cfghub-cut-replica-'),
  trace: tempDir('cfghub-cut-trace-'),
};
const running: ServerProcess[] = [];
let token: string;

beforeAll(() => {
  cliOk(dirs.primary.path, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull');
  token = cliOk(dirs.primary.path, 'token', 'create', '--replication').trim();
});

afterAll(async () => {
  for (const server of running) await server.kill();
  for (const dir of Object.values(dirs)) dir.remove();
});

/** Every file under a folder, with what tells a changed one: inode, size, modification time. */
function files(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const stat = fs.statSync(path);
        found.set(path, `${stat.ino}:${stat.size}:${stat.mtimeMs}`);
      }
    }
  };
  walk(root);
  return found;
}

/**
 * The paths whose data a traced process fsynced: each fsynced file, and every name it was then
 * renamed or linked to (git writes a temporary file, fsyncs it, and moves it into place), the
 * files of a renamed folder included (a new mirror is made aside and renamed into place whole).
 */
function fsyncedPaths(trace: string): Set<string> {
  const durable = new Set<string>();
  for (const line of trace.split('\n')) {
    const synced = /\b(?:fsync|fdatasync)\(\d+<([^>]+)>\) = 0/.exec(line);
    if (synced) durable.add(synced[1]);
    const moved = /\b(?:rename|link|renameat2?|linkat)\((?:[^,]*, )?"([^"]+)", (?:[^,]*, )?"([^"]+)".*\) = 0/.exec(
      line,
    );
    if (!moved) continue;
    const [, from, to] = moved;
    if (durable.has(from)) durable.add(to);
    for (const path of [...durable]) if (path.startsWith(`${from}/`)) durable.add(to + path.slice(from.length));
  }
  return durable;
}

const push = (url: string, value: string) =>
  pushTo(url, `/rest/push/${APP}`, {
    enableKeyCreation: true,
    data: [{ key: 'feature.flag', values: [{ context: '*', value }] }],
  });

describe('a read replica after a power cut', () => {
  it('keeps every mirror whole at the head it fetched: what it fetched was fsynced before the ref moved', async () => {
    const primary = await startServerProcess(dirs.primary.path);
    running.push(primary);
    const traceFile = join(dirs.trace.path, 'replica.trace');
    const strace = [
      'strace',
      '-f',
      '--seccomp-bpf',
      '-qq',
      '-y',
      '-e',
      'signal=none',
      '-e',
      'trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat',
      '-o',
      traceFile,
    ];
    const replica = await startServerProcess(dirs.replica.path, { CFGHUB_REPLICATION_TOKEN: token }, strace, [
      '--replica-of',
      primary.url,
    ]);
    running.push(replica);
    await eventually(
      'the first mirror',
      () =>
        fs.existsSync(gitdirOf(dirs.replica.path, APP)) &&
        headOf(dirs.replica.path, APP) === headOf(dirs.primary.path, APP)
          ? true
          : undefined,
      20_000,
    );
    const before = files(dirs.replica.path);

    // A small push (git would unpack it into loose objects) and a new repository, both fetched.
    const pushed = await push(primary.url, 'after-the-cut');
    expect(pushed.status).toBe(200);
    const head = pushed.etag!.replace(/"/g, '');
    cliOk(dirs.primary.path, 'repo', 'create', LATER, '--context', 'Env', '--token-free-pull');
    await eventually(
      'both fetched',
      () =>
        headOf(dirs.replica.path, APP) === head &&
        fs.existsSync(gitdirOf(dirs.replica.path, LATER)) &&
        headOf(dirs.replica.path, LATER) === headOf(dirs.primary.path, LATER)
          ? true
          : undefined,
      20_000,
    );

    // The cut: the server process killed outright (strace, its parent, then writes out its record and ends).
    const server = Number(
      execFileSync('pgrep', ['-P', String(replica.pid)], { encoding: 'utf8' })
        .trim()
        .split('\n')[0],
    );
    process.kill(server, 'SIGKILL');
    await replica.exited;
    const durable = fsyncedPaths(fs.readFileSync(traceFile, 'utf8'));
    const written = [...files(dirs.replica.path)].filter(
      ([path, stamp]) => before.get(path) !== stamp && !path.includes(`${join('.cfghub', 'replica-work')}`),
    );
    expect(written.length).toBeGreaterThan(0);
    const lost = written.filter(([path]) => !durable.has(path)).map(([path]) => path);
    for (const path of lost) fs.truncateSync(path, 0);
    // What a cut may take is only what the replica does not need: its own records' scratch, nothing of a mirror.
    expect(
      lost.filter(
        (path) =>
          path.startsWith(gitdirOf(dirs.replica.path, APP)) || path.startsWith(gitdirOf(dirs.replica.path, LATER)),
      ),
    ).toEqual([]);

    for (const name of [APP, LATER]) git(gitdirOf(dirs.replica.path, name), 'fsck', '--strict', '--no-dangling');
    expect(headOf(dirs.replica.path, APP)).toBe(head);
    const again = await startServerProcess(
      dirs.replica.path,
      { CFGHUB_REPLICATION_TOKEN: token },
      [],
      ['--replica-of', primary.url],
    );
    running.push(again);
    const answer = await fetch(`${again.url}/rest/pull/${APP}`, { headers: { Context: 'Prod' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('commit')).toBe(head);
    expect(await answer.text()).toContain('after-the-cut');
  });
});
