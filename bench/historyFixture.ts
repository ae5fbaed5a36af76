/**
 * The history fixture: a cfghub repository of 1,000 keys with 10,000 commits on top of
 * its seed, each changing one to three keys' values, as pushes do. The commits are written by one
 * `git fast-import` (seconds, where 10,000 durable pushes would take minutes), from the workload's
 * own model, so every key document is exactly what cfghub itself writes; history reads them back
 * as it would read pushes. Then `git repack -a -d -f`, as `git gc` would pack it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createRepository } from '../src/service/admin/repositories.js';
import { push } from '../src/service/write/push.js';
import { RepositoryRegistry } from '../src/disk/registry.js';
import { BENCH_ACCOUNT, BENCH_CALLER, type Log } from './fixtures.js';
import { makeTempFolder } from './tempFolders.js';
import { CONTEXT_LEVELS, KeyWorkload } from './workload.js';

export interface HistoryFixture {
  readonly reposRoot: string;
  readonly commits: number;
  /** `/rest/history/{account}/{repository}`, token-free. */
  readonly historyPath: string;
  /** `/rest/push/{account}/{repository}`, token-free. */
  readonly pushPath: string;
  /** The workload's model, as of the last commit: its next changes apply on top. */
  readonly workload: KeyWorkload;
}

const KEYS = 1_000;

/** One fast-import commit: the workload's next change, with the trailer a push would record. */
function commitCommand(workload: KeyWorkload, index: number, timestamp: number, from: string | undefined): string {
  const change = workload.nextChange(1 + (index % 3));
  const message = Buffer.from(`${change.message}\n\nApplication-Name: cfghub-bench\n`);
  const lines = [
    `commit refs/heads/main`,
    `committer cfghub <cfghub@localhost> ${timestamp} +0000`,
    `data ${message.length}`,
    message.toString(),
  ];
  if (from) lines.push(`from ${from}`);
  for (const file of change.files) {
    const content = Buffer.from(file.content);
    lines.push(`M 100644 inline ${file.path}`, `data ${content.length}`, file.content);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `git fast-import` on the commands `command(0)`, `command(1)`, … (until undefined), written
 * to its input one at a time as it reads them. Not one string of them all: that was about 60 MB
 * of this process's heap, left for the garbage collector to reclaim during the first cold
 * samples that follow (a full collection of about 10 ms inside the very first one).
 */
async function fastImport(gitdir: string, command: (index: number) => string | undefined): Promise<void> {
  const child = spawn('git', ['--git-dir', gitdir, 'fast-import', '--quiet', '--date-format=raw'], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  for (let i = 0, text = command(0); text !== undefined; text = command(++i)) {
    if (!child.stdin.write(text)) await once(child.stdin, 'drain');
  }
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${errors.slice(0, 500)}`);
}

export async function prepareHistoryFixture(commits: number, log: Log): Promise<HistoryFixture> {
  const folder = makeTempFolder(`history-${commits}`);
  const reposRoot = join(folder, 'repos');
  const name = 'history';
  const repository = await createRepository(new RepositoryRegistry(reposRoot), {
    account: BENCH_ACCOUNT,
    name,
    levels: [...CONTEXT_LEVELS],
    description: `bench history fixture, ${KEYS} keys, ${commits} commits`,
    tokenFreePull: true,
    tokenFreePush: true,
  });
  const workload = new KeyWorkload(KEYS);
  const seeded = await push(repository, workload.seedPayload().request, BENCH_CALLER);
  if (seeded.kind !== 'applied')
    throw new Error(`seeding the history fixture did not apply: ${JSON.stringify(seeded)}`);
  const started = performance.now();
  const start = Math.floor(Date.now() / 1000) - commits;
  await fastImport(repository.gitdir, (i) =>
    i < commits ? commitCommand(workload, i, start + i, i === 0 ? seeded.commitId : undefined) : undefined,
  );
  // One pack with deltas recomputed, as `git gc` leaves a repository (fast-import's own pack makes
  // each version a delta of the one before, the worst order for reading recent history).
  execFileSync('git', ['--git-dir', repository.gitdir, 'repack', '-a', '-d', '-f', '-q'], { stdio: 'ignore' });
  const count = Number(
    execFileSync('git', ['--git-dir', repository.gitdir, 'rev-list', '--count', 'refs/heads/main'], {
      encoding: 'utf8',
    }).trim(),
  );
  if (count !== commits + 2) throw new Error(`the history fixture has ${count} commits, expected ${commits + 2}`);
  log(
    `history fixture: ${commits} commits by git fast-import in ${Math.round(performance.now() - started)} ms on ${KEYS} keys`,
  );
  return {
    reposRoot,
    commits: count,
    historyPath: `/rest/history/${BENCH_ACCOUNT}/${name}`,
    pushPath: `/rest/push/${BENCH_ACCOUNT}/${name}`,
    workload,
  };
}
