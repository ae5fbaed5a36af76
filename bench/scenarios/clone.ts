/**
 * Clone over HTTP: `git clone --bare http://…/git/bench/clone.git` from cfghub's HTTP
 * server against `git clone --bare --no-local <path>` of the same bare repository on disk,
 * interleaved round by round in rotating order. Bare, because the checkout of 10,000 files is the
 * same work after either transfer and would only blur the comparison (and its file creation is
 * the noisiest thing on this disk). `--no-local` makes git run its own upload-pack over a pipe,
 * as for any remote; the plain local clone hardlinks the object files instead, which is no
 * transfer at all, so its time is given in the notes only. Clones are removed at the end of the
 * run, not between rounds (a large delete slows file creation for a while, tempFolders.ts).
 *
 * The fixture, 10,000 keys and 1,000 commits in cfghub's layout, is written by `git fast-import`
 * (seconds, where 1,000 pushes would take minutes) and then packed with `git repack -adq`, as
 * `git gc` would leave it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { keyPath, serializeKey, serializeSettings, SETTINGS_FILE } from '../../src/layout/layout.js';
import type { KeyRecord, RepoSettings } from '../../src/domain/model.js';
import { track } from '../childProcesses.js';
import type { Log } from '../fixtures.js';
import type { ClonePlan } from '../plan.js';
import { Random } from '../random.js';
import type { ScenarioResult } from '../results.js';
import { startBenchServer } from '../server.js';
import { pairedSpeedup, summarize } from '../stats.js';
import { makeTempFolder } from '../tempFolders.js';

export const CLONE_SCENARIO = 'clone-http';
export const CLONE_HTTP = 'git clone over HTTP (cfghub)';
export const CLONE_DISK = 'git clone --no-local from disk';

const ACCOUNT = 'bench';
const NAME = 'clone';

interface GitResult {
  readonly code: number;
  readonly stderr: string;
}

/** Runs git without blocking this process (the HTTP server being cloned from lives in it). */
function runGit(args: readonly string[], cwd: string, input?: string): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn('git', args, {
        cwd,
        stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'],
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      }),
    );
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

async function gitOk(args: readonly string[], cwd: string, input?: string): Promise<void> {
  const result = await runGit(args, cwd, input);
  if (result.code !== 0) throw new Error(`git ${args.join(' ')} exited ${result.code}: ${result.stderr.slice(0, 500)}`);
}

function keyRecord(index: number, value: string): KeyRecord {
  return {
    key: `svc${index % 50}.setting${index}`,
    readme: `setting ${index}`,
    deprecated: false,
    vdt: 'Text',
    push: true,
    values: [
      { context: ['*', '*', '*'], value, active: true },
      { context: ['Production', '*', '*'], value: `${value}-prod`, active: true },
    ],
  };
}

/** The fast-import stream: one commit with every key, then commits changing `keysPerCommit` keys each. */
function fastImportStream(plan: ClonePlan): string {
  const random = new Random(6);
  const settings: RepoSettings = {
    levels: ['Environment', 'Application', 'Instance'],
    description: 'clone benchmark',
    isPrivate: false,
    isPersonal: false,
    accessControlsEnabled: false,
    vdtEnabled: true,
    securityEnabled: true,
    contextGroupsEnabled: false,
    tokenFreePush: false,
    tokenFreePull: true,
    created: '2026-01-01T00:00:00Z',
  };
  const inline = (path: string, content: string) =>
    `M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  const parts: string[] = [];
  for (let commit = 0; commit < plan.commits; commit++) {
    const message = commit === 0 ? 'all keys' : `change ${plan.keysPerCommit} keys`;
    const when = 1_767_225_600 + commit * 60;
    parts.push(
      `commit refs/heads/main\ncommitter cfghub <cfghub@localhost> ${when} +0000\ndata ${message.length}\n${message}\n`,
    );
    if (commit === 0) {
      parts.push(inline(SETTINGS_FILE, serializeSettings(settings)));
      for (let i = 0; i < plan.keyCount; i++) {
        const record = keyRecord(i, random.word(12));
        parts.push(inline(keyPath(record.key), serializeKey(record)));
      }
    } else {
      for (const i of random.distinct(plan.keysPerCommit, plan.keyCount)) {
        const record = keyRecord(i, random.word(12));
        parts.push(inline(keyPath(record.key), serializeKey(record)));
      }
    }
    parts.push('\n');
  }
  return parts.join('');
}

async function buildFixture(plan: ClonePlan, log: Log): Promise<{ folder: string; reposRoot: string; gitdir: string }> {
  const folder = makeTempFolder('clone');
  const reposRoot = join(folder, 'repos');
  const gitdir = join(reposRoot, ACCOUNT, `${NAME}.git`);
  const started = performance.now();
  await gitOk(['init', '--quiet', '--bare', '--initial-branch=main', gitdir], folder);
  await gitOk(['--git-dir', gitdir, 'fast-import', '--quiet'], folder, fastImportStream(plan));
  await gitOk(['--git-dir', gitdir, 'repack', '-adq'], folder);
  log(
    `clone fixture: ${plan.keyCount} keys, ${plan.commits} commits, built in ${Math.round(performance.now() - started)} ms`,
  );
  return { folder, reposRoot, gitdir };
}

let clones = 0;

/** Times one bare clone into a new folder. */
async function timedClone(args: readonly string[], folder: string): Promise<number> {
  const target = join(folder, 'clones', `${++clones}.git`);
  const started = performance.now();
  await gitOk(['clone', '--quiet', '--bare', ...args, target], folder);
  return performance.now() - started;
}

export async function runCloneScenario(plan: ClonePlan, log: Log): Promise<ScenarioResult> {
  const fixture = await buildFixture(plan, log);
  const server = await startBenchServer(fixture.reposRoot);
  try {
    const url = `${server.url}/git/${ACCOUNT}/${NAME}.git`;
    const http = () => timedClone([url], fixture.folder);
    const disk = () => timedClone(['--no-local', fixture.gitdir], fixture.folder);
    const hardlinked = () => timedClone([fixture.gitdir], fixture.folder);
    for (let i = 0; i < plan.warmup; i++) {
      await http();
      await disk();
    }
    const httpSamples: number[] = [];
    const diskSamples: number[] = [];
    const hardlinkSamples: number[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      if (round % 2 === 0) {
        httpSamples.push(await http());
        diskSamples.push(await disk());
      } else {
        diskSamples.push(await disk());
        httpSamples.push(await http());
      }
      hardlinkSamples.push(await hardlinked());
    }
    const httpSummary = summarize(httpSamples);
    const diskSummary = summarize(diskSamples);
    const slowdown = 1 / pairedSpeedup(diskSamples, httpSamples);
    log(
      `clone: HTTP p50 ${httpSummary.p50.toFixed(0)} ms, disk p50 ${diskSummary.p50.toFixed(0)} ms, HTTP/disk ${slowdown.toFixed(2)}x`,
    );
    const hardlink = summarize(hardlinkSamples);
    return {
      id: CLONE_SCENARIO,
      title: `git clone --bare of ${plan.keyCount.toLocaleString('en-US')} keys, ${plan.commits.toLocaleString('en-US')} commits`,
      references: [CLONE_DISK],
      measurements: [
        {
          implementation: CLONE_HTTP,
          samples: httpSamples,
          summary: httpSummary,
          speedups: { [CLONE_DISK]: pairedSpeedup(diskSamples, httpSamples) },
        },
        { implementation: CLONE_DISK, samples: diskSamples, summary: diskSummary },
      ],
      notes: [
        `${plan.rounds} rounds after ${plan.warmup} warm-up, HTTP and disk clones alternating which goes first; each a \`git clone --bare\` into a new folder (the checkout would be the same work after either), timed from spawn to exit; the server is cfghub's HTTP server in the bench process, spawning \`git http-backend\` per request`,
        `fixture written with \`git fast-import\` (first commit all keys, then ${plan.keysPerCommit} keys changed per commit) and packed with \`git repack -adq\`; HTTP over disk, paired median: ${slowdown.toFixed(2)}x the time`,
        `a plain local \`git clone --bare <path>\` (hardlinks the objects, no transfer): p50 ${hardlink.p50.toFixed(0)} ms`,
      ],
      hideRate: true,
    };
  } finally {
    await server.close();
  }
}
