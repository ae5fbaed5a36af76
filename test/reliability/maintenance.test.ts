/**
 * git's own maintenance racing the server: no push answered 200 is ever lost, and git
 * can read, fsck and clone the repository afterwards.
 *
 * First the mechanisms, each made deterministic by running git at the one moment that broke:
 * - `git repack -a -d` and `git gc --prune=now` between a push's pack landing and its ref moving
 *   (a repack that walked the refs just before the ref moved deleted the push's only pack);
 * - `git prune --expire=now` (part of `gc --prune=now`) while a push's temporary files exist;
 * - pack merging with a multi-pack-index present (it stopped), and a multi-pack-index left naming
 *   a pack a merge deleted (git could not read the repository any more).
 * Then the race itself: clients push and pull while an operator's loop runs every maintenance
 * command for a bounded time; then every acknowledged push is checked through the REST API (a
 * fresh server reading the disk) and through `git cat-file`, `git fsck --strict` must be clean and
 * `git clone --no-local` must work.
 *
 * `npm test` races for 5 s; `npm run test:maintenance` for CFGHUB_MAINTENANCE_SECONDS (180).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PACKS_BEFORE_MERGE } from '../../src/disk/objects/consolidatePacks.js';
import { RefLock } from '../../src/disk/refs/refs.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { requireRepository } from '../../src/service/admin/repositories.js';
import { createTag } from '../../src/service/admin/tags.js';
import { recordFigures } from '../support/figures.js';
import { gitEnv } from '../support/gitCli.js';
import { cliOk, gitdirOf, pushTo, startTestServer, tempDir, type TestServer } from '../support/harness.js';
import { startServerProcess } from '../support/serverProcess.js';

const SECONDS = Number(process.env.CFGHUB_MAINTENANCE_SECONDS ?? 5);

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir('cfghub-maintenance-');
});
afterAll(() => (process.env.CFGHUB_KEEP_DIR ? console.log(`[maintenance] kept ${dir.path}`) : dir.remove()));

const execFileAsync = promisify(execFile);

/**
 * Runs git without blocking the event loop (the server of the first tests runs in this process: a
 * loop blocked for seconds makes its keep-alive timers reset the next request); returns stdout.
 */
async function gitOk(gitdir: string, ...args: string[]): Promise<string> {
  return (
    await execFileAsync('git', ['--git-dir', gitdir, ...args], { env: gitEnv(), encoding: 'utf8', maxBuffer: 64 << 20 })
  ).stdout;
}

/** Runs git without blocking the event loop; resolves with its exit code and stderr. */
function gitAsync(gitdir: string, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', ['--git-dir', gitdir, ...args], { env: gitEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/**
 * A push on a connection of its own: between pushes these tests run git for seconds, longer than
 * the server keeps an idle connection open, and a reused connection closed at that moment resets.
 */
function pushFresh(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; etag: string | null; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const request = http.request(
      `${url}${path}`,
      {
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            etag: (response.headers.etag as string | undefined) ?? null,
            body: text,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(data);
  });
}

const setKey = (key: string, value: string) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*;*', value }] }],
});

function createRepository(name: string): string {
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
  return gitdirOf(dir.path, name);
}

/** The value of every key at the head, as the REST export gives it. */
async function exported(url: string, name: string): Promise<Map<string, string>> {
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    http
      .get(`${url}/rest/export/${name}`, { agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, text: body }));
      })
      .on('error', reject);
  });
  expect(status, text).toBe(200);
  const { data } = JSON.parse(text) as { data: { key?: string; values?: { value: string }[] }[] };
  return new Map(data.filter((e) => e.key).map((e) => [e.key!, e.values![0].value]));
}

/** git reads everything: fsck (strict), every acknowledged commit by cat-file, and a clone by the pack protocol. */
async function expectGitReadsAll(gitdir: string, commits: readonly string[]): Promise<void> {
  await gitOk(gitdir, 'fsck', '--strict', '--no-dangling');
  if (commits.length > 0) {
    const checked = execFileSync('git', ['--git-dir', gitdir, 'cat-file', '--batch-check'], {
      env: gitEnv(),
      input: `${commits.join('\n')}\n`,
      encoding: 'utf8',
    });
    expect(checked.split('\n').filter((line) => line.endsWith(' missing'))).toEqual([]);
    const head = (await gitOk(gitdir, 'rev-parse', 'refs/heads/main')).trim();
    const history = new Set((await gitOk(gitdir, 'rev-list', head)).split('\n'));
    expect(commits.filter((commit) => !history.has(commit))).toEqual([]);
  }
  const clone = join(dir.path, `clone-${basename(gitdir)}-${Date.now()}`);
  await execFileAsync('git', ['clone', '--quiet', '--no-local', '--bare', gitdir, clone], { env: gitEnv() });
  await gitOk(clone, 'fsck', '--strict', '--no-dangling');
  fs.rmSync(clone, { recursive: true, force: true });
}

const packCount = (gitdir: string) =>
  fs.readdirSync(join(gitdir, 'objects/pack')).filter((name) => name.endsWith('.pack')).length;

describe('git maintenance at the worst moment of a push', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(dir.path);
  });
  afterAll(() => server.close());
  afterEach(() => vi.restoreAllMocks());

  it('git repack -a -d and gc --prune=now between the pack landing and the ref moving lose nothing', async () => {
    const name = 'acme/repack-window';
    const gitdir = createRepository(name);
    // The push's pack is in place, its ref not yet moved: git walks the refs now and deletes
    // every pack it may.
    const maintenance = maintainBeforeEveryRefSwap(gitdir);
    const commits: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await pushFresh(server.url, `/rest/push/${name}`, setKey(`window.${i}`, `v${i}`));
      expect(answer.status).toBe(200);
      commits.push(answer.etag!.replace(/"/g, ''));
    }
    expect(maintenance.ran).toBe(3);
    vi.restoreAllMocks();
    await expectGitReadsAll(gitdir, commits);
    const state = await exported(server.url, name);
    for (let i = 0; i < 3; i++) expect(state.get(`window.${i}`)).toBe(`v${i}`);
    // The `.keep` goes once the ref has moved: nothing is left marked.
    expect(fs.readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.endsWith('.keep'))).toEqual([]);
  });

  it('a push retried after finding its ref locked keeps its first pack marked until the ref moves, so git repack -a -d never lists it as deletable', async () => {
    // `git pack-refs` (also run by `git gc`) holds `main.lock` for a moment: the push's first
    // attempt wrote its pack and found the ref locked; the retry, within the same second, writes
    // the very same objects, so the very same pack. A `git repack -a -d` that listed that pack
    // between the attempts without a `.keep` deleted it after the retry had moved the ref: the
    // acknowledged push was gone (commit and tree missing for git fsck, 409 for the server).
    const name = 'acme/locked-retry';
    const gitdir = createRepository(name);
    const folder = join(gitdir, 'objects/pack');
    const lockFile = join(gitdir, 'refs/heads/main.lock');
    const before = new Set(fs.readdirSync(folder));
    const deletableAtRetry: string[][] = [];
    const acquire = RefLock.acquire.bind(RefLock);
    vi.spyOn(RefLock, 'acquire').mockImplementation(async (...args: Parameters<typeof RefLock.acquire>) => {
      if (fs.existsSync(lockFile) && fs.readdirSync(folder).some((f) => f.endsWith('.pack') && !before.has(f))) {
        // The first attempt's pack is in place and it found the ref locked: what would a
        // `git repack -a -d` listing the packs now take as deletable (a `.pack` without `.keep`)?
        const files = new Set(fs.readdirSync(folder));
        deletableAtRetry.push(
          [...files].filter((f) => f.endsWith('.pack') && !before.has(f) && !files.has(f.replace(/\.pack$/, '.keep'))),
        );
        fs.rmSync(lockFile); // git is done with the ref
      }
      return acquire(...args);
    });
    fs.writeFileSync(lockFile, `${(await gitOk(gitdir, 'rev-parse', 'refs/heads/main')).trim()}\n`); // as git pack-refs holds it
    const answer = await pushFresh(server.url, `/rest/push/${name}`, setKey('retried', 'kept'));
    expect(answer.status).toBe(200);
    vi.restoreAllMocks();
    expect(deletableAtRetry).toEqual([[]]);
    await gitOk(gitdir, 'repack', '-a', '-d', '-q');
    await gitOk(gitdir, 'gc', '--prune=now', '--quiet');
    await expectGitReadsAll(gitdir, [answer.etag!.replace(/"/g, '')]);
    expect((await exported(server.url, name)).get('retried')).toBe('kept');
  });

  it('git repack -a -d and gc --prune=now between a tag object landing and its ref moving lose no tag', async () => {
    const name = 'acme/tag-window';
    const gitdir = createRepository(name);
    expect((await pushFresh(server.url, `/rest/push/${name}`, setKey('tagged', 'x'))).status).toBe(200);
    // The tag object's pack is in place, the tag's ref not yet written.
    const maintenance = maintainBeforeEveryRefSwap(gitdir);
    const registry = new RepositoryRegistry(dir.path);
    try {
      await createTag(requireRepository(registry, 'acme', 'tag-window'), 'v1', 'release');
    } finally {
      registry.close();
    }
    expect(maintenance.ran).toBe(1);
    vi.restoreAllMocks();
    expect((await gitOk(gitdir, 'cat-file', '-t', 'refs/tags/v1')).trim()).toBe('tag');
    await expectGitReadsAll(gitdir, []);
    expect(fs.readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.endsWith('.keep'))).toEqual([]);
  });

  it('git prune --expire=now while a push writes its temporary files does not fail the push', async () => {
    const name = 'acme/prune-window';
    const gitdir = createRepository(name);
    const rename = fs.promises.rename;
    let pruned = 0;
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (String(from).includes(join(gitdir, 'objects'))) {
        await gitOk(gitdir, 'prune', '--expire=now'); // what `git gc --prune=now` runs last
        pruned++;
      }
      return rename(from, to);
    });
    const answer = await pushFresh(server.url, `/rest/push/${name}`, setKey('pruned', 'kept'));
    expect(answer.status).toBe(200);
    expect(pruned).toBeGreaterThan(0);
    vi.restoreAllMocks();
    expect((await exported(server.url, name)).get('pruned')).toBe('kept');
    await expectGitReadsAll(gitdir, [answer.etag!.replace(/"/g, '')]);
  });

  it('merges packs while a multi-pack-index exists, and git reads the repository throughout', async () => {
    const name = 'acme/midx-merge';
    const gitdir = createRepository(name);
    for (let i = 0; i < 12; i++)
      expect((await pushFresh(server.url, `/rest/push/${name}`, setKey(`before.${i}`, 'x'))).status).toBe(200);
    await server.settle(name); // a merge's removals hold multi-pack-index.lock, which makes git's write fail
    await gitOk(gitdir, 'multi-pack-index', 'write', '--bitmap');
    const commits: string[] = [];
    for (let i = 0; i < 4 * PACKS_BEFORE_MERGE; i++) {
      const answer = await pushFresh(server.url, `/rest/push/${name}`, setKey(`after.${i}`, 'y'));
      expect(answer.status).toBe(200);
      commits.push(answer.etag!.replace(/"/g, ''));
      if (i % PACKS_BEFORE_MERGE === 3) {
        await server.settle(name);
        await expectGitReadsAll(gitdir, commits);
      }
    }
    await server.settle(name);
    expect(packCount(gitdir)).toBeLessThanOrEqual(2 * PACKS_BEFORE_MERGE);
    await expectGitReadsAll(gitdir, commits);
    await gitOk(gitdir, 'multi-pack-index', 'verify');
  });

  it('removes a multi-pack-index left naming a pack that is gone', async () => {
    const name = 'acme/midx-stale';
    const gitdir = createRepository(name);
    for (let i = 0; i < 3; i++)
      expect((await pushFresh(server.url, `/rest/push/${name}`, setKey(`k.${i}`, 'x'))).status).toBe(200);
    await gitOk(gitdir, 'multi-pack-index', 'write');
    const stale = fs.readFileSync(join(gitdir, 'objects/pack/multi-pack-index'));
    await gitOk(gitdir, 'repack', '-a', '-d', '-q'); // deletes the packs the index names (and the index)
    // A `multi-pack-index write` that listed the packs before they went and finished after.
    fs.writeFileSync(join(gitdir, 'objects/pack/multi-pack-index'), stale);
    await expect(gitOk(gitdir, 'fsck', '--strict')).rejects.toThrow();
    for (let i = 0; i < PACKS_BEFORE_MERGE + 1; i++)
      expect((await pushFresh(server.url, `/rest/push/${name}`, setKey(`m.${i}`, 'y'))).status).toBe(200);
    await server.settle(name);
    await expectGitReadsAll(gitdir, []);
  });
});

/** An operator's maintenance commands, run in turn in a loop. */
const MAINTENANCE: readonly string[][] = [
  ['multi-pack-index', 'write'],
  ['repack', '-a', '-d', '-q'],
  ['commit-graph', 'write', '--reachable'],
  ['gc', '--prune=now', '--quiet'],
  ['multi-pack-index', 'write', '--bitmap'],
  ['pack-refs', '--all'],
  ['repack', '-a', '-d', '-k', '-q'],
  ['repack', '--geometric=2', '-d', '--write-midx', '-q'],
  ['repack', '-A', '-d', '-q'],
  ['-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet'],
  ['repack', '-a', '-d', '-f', '--depth=50', '--window=250', '-q'],
  ['multi-pack-index', 'write'],
  ['repack', '-a', '-d', '-q'],
];

describe('an operator maintenance loop racing pushes and pulls', () => {
  it(
    `loses no acknowledged push in ${SECONDS} s, and git reads, fscks and clones the repository`,
    { timeout: SECONDS * 1000 + 120_000 },
    async () => {
      const name = 'acme/race';
      const gitdir = createRepository(name);
      const server = await startServerProcess(dir.path);
      const acknowledged = new Map<string, { value: string; commit: string }>();
      const failures: string[] = [];
      let pulls = 0;
      let maintenanceRuns = 0;
      let maintenanceFailures = 0;
      const deadline = Date.now() + SECONDS * 1000;
      try {
        const pusher = async (client: number) => {
          for (let i = 0; Date.now() < deadline; i++) {
            const key = `c${client}.n${i}`;
            const answer = await pushTo(server.url, `/rest/push/${name}`, setKey(key, `value ${client}/${i}`));
            if (answer.status === 200)
              acknowledged.set(key, { value: `value ${client}/${i}`, commit: answer.etag!.replace(/"/g, '') });
            else failures.push(`push ${key}: ${answer.status} ${answer.body}`);
          }
        };
        const puller = async () => {
          while (Date.now() < deadline) {
            const response = await fetch(`${server.url}/rest/export/${name}`);
            await response.arrayBuffer();
            if (response.status !== 200) failures.push(`pull: ${response.status}`);
            pulls++;
          }
        };
        const operator = async () => {
          for (let i = 0; Date.now() < deadline; i++) {
            const result = await gitAsync(gitdir, MAINTENANCE[i % MAINTENANCE.length]);
            maintenanceRuns++;
            if (result.code !== 0) maintenanceFailures++; // another git holding a lock: as in any cron job
          }
        };
        await Promise.all([pusher(0), pusher(1), pusher(2), puller(), puller(), operator()]);
      } finally {
        await server.stop();
      }
      expect(failures).toEqual([]);
      expect(acknowledged.size).toBeGreaterThan(0);

      // git first (so a failure says whether git too finds something missing), then a fresh server
      // reading the disk: every acknowledged push is there, through the REST API.
      await expectGitReadsAll(
        gitdir,
        [...acknowledged.values()].map((push) => push.commit),
      );
      const fresh = await startServerProcess(dir.path);
      try {
        const state = await exported(fresh.url, name);
        const lost = [...acknowledged].filter(([key, { value }]) => state.get(key) !== value).map(([key]) => key);
        expect(lost).toEqual([]);
        // The server's own merge keeps working: one more round of pushes after the loop.
        for (let i = 0; i < PACKS_BEFORE_MERGE + 1; i++)
          expect((await pushTo(fresh.url, `/rest/push/${name}`, setKey(`after.${i}`, 'x'))).status).toBe(200);
      } finally {
        await fresh.stop();
      }
      // And through git: cat-file, fsck --strict, a clone by the pack protocol.
      await waitForNoMergeLeftovers(gitdir);
      await expectGitReadsAll(
        gitdir,
        [...acknowledged.values()].map((push) => push.commit),
      );
      recordFigures('maintenance', {
        seconds: SECONDS,
        acknowledgedPushes: acknowledged.size,
        pulls,
        maintenanceCommands: maintenanceRuns,
        maintenanceCommandsRefused: maintenanceFailures,
        lost: 0,
        packsAtEnd: packCount(gitdir),
      });
    },
  );
});

/**
 * Runs `git repack -a -d` and `gc --prune=now` on `gitdir` each time the server is about to move a
 * ref (its objects in place, the ref not yet there); `ran` counts the times.
 */
function maintainBeforeEveryRefSwap(gitdir: string): { ran: number } {
  const counter = { ran: 0 };
  const swap = RefLock.prototype.swap;
  vi.spyOn(RefLock.prototype, 'swap').mockImplementation(async function (
    this: RefLock,
    ...args: Parameters<RefLock['swap']>
  ) {
    await gitOk(gitdir, 'repack', '-a', '-d', '-q');
    await gitOk(gitdir, 'gc', '--prune=now', '--quiet');
    counter.ran++;
    return swap.apply(this, args);
  });
  return counter;
}

/** No `multi-pack-index.lock` of a merge still removing packs (the server has stopped; its last removals ran before). */
async function waitForNoMergeLeftovers(gitdir: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (fs.existsSync(join(gitdir, 'objects/pack/multi-pack-index.lock')) && Date.now() < until)
    await new Promise((r) => setTimeout(r, 50));
}
