/**
 * Replication bench: `npm run build && node --import tsx bench/replication.ts [--quick]`.
 *
 * One primary and two replicas, each the real `cfghub serve` in its own process on loopback, with
 * a repository of 1,000 keys. Measures:
 *  - replication lag: from a push's 200 on the primary to the 200 of each replica's pull that
 *    asked for that commit (`Min-Commit`), which the replica answers as soon as it has fetched it;
 *  - pulls per second, 16 connections in all: one server alone, against the primary and the two
 *    replicas at once (the connections split 6/5/5, one load client per server), slices alternated;
 *  - resident memory of a replica.
 * Prints a Markdown table. Every process is stopped by its pid at the end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killChildren, stopChild, track } from './childProcesses.js';
import { startLoadGenerator, type LoadGenerator } from './load.js';
import { listening, requireBuiltCli, residentMiBOf, type ServeProcess } from './serveProcess.js';
import { median, percentile } from './stats.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
const quick = process.argv.includes('--quick');
const PUSHES = quick ? 40 : 300;
const SLICES = quick ? 1 : 4;
const SLICE_SECONDS = quick ? 2 : 5;
const REPO = 'bench/app';
const log = (message: string) => process.stderr.write(`${message}\n`);

function cli(repos: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, '--repos', repos], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`cfghub ${args.join(' ')} exited ${code}`)),
    );
  });
}

async function serve(
  repos: string,
  replicaOf?: { url: string; token: string },
): Promise<{ url: string; child: ServeProcess }> {
  const child = track(
    spawn(
      process.execPath,
      [CLI, 'serve', '--port', '0', '--repos', repos, ...(replicaOf ? ['--replica-of', replicaOf.url] : [])],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LOG_LEVEL: 'info', ...(replicaOf ? { CFGHUB_REPLICATION_TOKEN: replicaOf.token } : {}) },
      },
    ),
  ) as ServeProcess;
  return { url: (await listening(child)).url, child };
}

async function push(url: string, key: string, value: string): Promise<string> {
  const answer = await fetch(`${url}/rest/push/${REPO}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ enableKeyCreation: true, data: [{ key, values: [{ context: '*;*', value }] }] }),
  });
  await answer.arrayBuffer();
  if (answer.status !== 200) throw new Error(`push answered ${answer.status}`);
  return (answer.headers.get('etag') ?? '').replace(/"/g, '');
}

/** Time until a replica serves `commit`: a pull asking for it, again on a 503 (the replica's wait ran out). */
async function servedAfter(url: string, commit: string, started: number): Promise<number> {
  for (;;) {
    const answer = await fetch(`${url}/rest/pull/${REPO}`, { headers: { Context: 'Prod;web', 'Min-Commit': commit } });
    await answer.arrayBuffer();
    if (answer.status === 200 && answer.headers.get('commit') === commit) return performance.now() - started;
    if (answer.status === 404)
      await new Promise((resolve) => setTimeout(resolve, 10)); // not mirrored yet (the first push)
    else if (answer.status !== 503 && answer.status !== 200) throw new Error(`replica answered ${answer.status}`);
  }
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

async function main(): Promise<void> {
  requireBuiltCli();
  const root = mkdtempSync(join(tmpdir(), 'cfghub-bench-replication-'));
  const folders = { primary: join(root, 'primary'), a: join(root, 'a'), b: join(root, 'b') };
  const generators: LoadGenerator[] = [];
  try {
    await cli(
      folders.primary,
      'repo',
      'create',
      REPO,
      '--context',
      'Env,App',
      '--token-free-push',
      '--token-free-pull',
    );
    const token = (await cli(folders.primary, 'token', 'create', '--replication')).trim();
    const primary = await serve(folders.primary);
    const data = Array.from({ length: 1000 }, (_, i) => ({
      key: `key.${i}`,
      values: [{ context: '*;*', value: `value number ${i} of the bench repository` }],
    }));
    const seeded = await fetch(`${primary.url}/rest/push/${REPO}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ enableKeyCreation: true, data }),
    });
    if (seeded.status !== 200) throw new Error(`seeding push answered ${seeded.status}`);
    const replicas = [
      await serve(folders.a, { url: primary.url, token }),
      await serve(folders.b, { url: primary.url, token }),
    ];

    // The replicas' first copy, before timing anything.
    const first = await push(primary.url, 'key.0', 'first');
    await Promise.all(replicas.map((replica) => servedAfter(replica.url, first, performance.now())));
    log(`lag: ${PUSHES} pushes`);
    const lags: number[] = [];
    for (let i = 0; i < PUSHES; i++) {
      const commit = await push(primary.url, `key.${i % 1000}`, `changed ${i}`);
      const started = performance.now();
      lags.push(...(await Promise.all(replicas.map((replica) => servedAfter(replica.url, commit, started)))));
    }

    const pullBytes = (
      await (await fetch(`${primary.url}/rest/pull/${REPO}`, { headers: { Context: 'Prod;web' } })).arrayBuffer()
    ).byteLength;
    for (let i = 0; i < 3; i++) generators.push(await startLoadGenerator(log));
    const slice = (url: string, connections: number) => ({
      url: `${url}/rest/pull/${REPO}`,
      headers: { Context: 'Prod;web' },
      connections,
      seconds: SLICE_SECONDS,
      bodyBytes: pullBytes,
    });
    const alone: number[] = [];
    const three: number[] = [];
    for (let i = 0; i < SLICES; i++) {
      log(`pull slice ${i + 1}/${SLICES}`);
      alone.push((await generators[0].run(slice(primary.url, 16))).requestsPerSecond);
      const parts = await Promise.all([
        generators[0].run(slice(primary.url, 6)),
        generators[1].run(slice(replicas[0].url, 5)),
        generators[2].run(slice(replicas[1].url, 5)),
      ]);
      three.push(parts.reduce((sum, part) => sum + part.requestsPerSecond, 0));
    }
    const memory = replicas.map((replica) => residentMiBOf(replica.child.pid!));
    const primaryMemory = residentMiBOf(primary.child.pid!);

    console.log(
      `Measured by \`node --import tsx bench/replication.ts${quick ? ' --quick' : ''}\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; load generator: ${generators[0].name}.\n`,
    );
    console.log('| measure | p50 | p99 | value |');
    console.log('| --- | ---: | ---: | ---: |');
    console.log(
      `| replication lag, push 200 on the primary to a replica serving the commit, 1,000 keys (n=${lags.length}, 2 replicas) | ${fmt(median(lags))} ms | ${fmt(percentile(lags, 99))} ms | max ${fmt(Math.max(...lags))} ms |`,
    );
    console.log(
      `| GET /rest/pull, 16 connections, one server alone (${SLICES} slices of ${SLICE_SECONDS} s) | - | - | ${Math.round(median(alone))} pulls/s |`,
    );
    console.log(
      `| GET /rest/pull, 16 connections over primary + 2 replicas, 3 processes on the same 2 cores | - | - | ${Math.round(median(three))} pulls/s (${(median(three) / median(alone)).toFixed(2)}x) |`,
    );
    console.log(
      `| resident memory of a replica (1 repository of 1,000 keys) | - | - | ${memory.join(' / ')} MiB (primary ${primaryMemory} MiB) |`,
    );

    for (const generator of generators) await generator.close();
    for (const server of [...replicas, primary]) await stopChild(server.child);
  } finally {
    killChildren();
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  killChildren();
  console.error(error);
  process.exitCode = 1;
});
