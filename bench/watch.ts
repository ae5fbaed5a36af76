/**
 * The scale of the watch (issue 18, item 2): `WATCHERS` concurrent watchers (default 10,000) on
 * one `cfghub serve` process, spread over `CONTEXTS` contexts (default 100) of one repository,
 * each a `GET /rest/pull` with `If-None-Match` and `Wait: 300` held by the server. Measures:
 *
 * - the server's resident memory per held watcher (RSS with all held, minus RSS before, over N);
 * - for a push that changes one context (its watchers are 1/CONTEXTS of all), and for one that
 *   changes every context (all watchers), the time from the push's 200 to each affected watcher's
 *   answer: p50, p99 and the last, over rounds;
 * - that no unaffected watcher is ever answered (a push to a context nobody watches included).
 *
 * And etcd's watch the same way when etcd is installed (bench/install-tools.sh): as many watch
 * streams through its HTTP gateway (`POST /v3/watch`), one key per context; a put of one key, and
 * a transaction putting every key. Note etcd wakes a watcher on every put of its key, also one
 * that writes the same value; cfghub only when the context's answer changes.
 *
 * Run: `npm run build && node --import tsx bench/watch.ts` (WATCHERS=… CONTEXTS=… ROUNDS=… to change
 * the size). The bench process holds the client side of every connection (one socket each), so it
 * needs a file-descriptor limit above WATCHERS (the server's too); its own work answering the
 * responses is counted in the latencies, which makes them an upper bound.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { killChildren, stopChild } from './childProcesses.js';
import { EtcdServer } from './etcd.js';
import { listening, spawnServe } from './serveProcess.js';
import { percentile } from './stats.js';
import { makeTempFolder, removeTempFolders } from './tempFolders.js';

const WATCHERS = Number(process.env.WATCHERS ?? 10_000);
const CONTEXTS = Number(process.env.CONTEXTS ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const ALL_ROUNDS = Number(process.env.ALL_ROUNDS ?? 5);
const REPO = 'bench/watch';
const CLI = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

const log = (text: string) => process.stderr.write(`${text}\n`);
const contextOf = (i: number) => `E${i};app`;

function residentKiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Resolves once a process has used no CPU for `quietMs` (it has taken in everything sent to it). */
async function idle(pid: number, quietMs = 300): Promise<void> {
  let last = cpuTicks(pid);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = cpuTicks(pid);
    if (now === last) return;
    last = now;
  }
}

function request(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; etag: string; text: string; at: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const at = performance.now();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag ?? ''), text, at }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Watcher {
  readonly context: number;
  etag: string;
}

/** Which watcher answered when, for the round in progress. */
interface Round {
  readonly affected: (context: number) => boolean;
  readonly times: number[];
  spurious: number;
  expected: number;
  done?: () => void;
}

async function cfghubWatch(): Promise<Record<string, number | string>> {
  const repos = makeTempFolder('watch-bench');
  execFileSync(process.execPath, [CLI, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push', '--repos', repos], { stdio: 'ignore' });
  const child = spawnServe(repos);
  const { url } = await listening(child);
  const pid = child.pid!;
  const push = async (data: unknown[]) => {
    const answer = await request(`${url}/rest/push/${REPO}`, 'POST', { 'Content-Type': 'application/json' }, JSON.stringify({ changeComment: 'bench', enableKeyCreation: true, data }));
    if (answer.status !== 200) throw new Error(`push answered ${answer.status} ${answer.etag}`);
    return answer.at;
  };
  try {
    await push([
      { key: 'shared', values: [{ context: '*;*', value: 'v0' }] },
      { key: 'own', values: Array.from({ length: CONTEXTS }, (_, i) => ({ context: `E${i};*`, value: 'v0' })) },
    ]);
    const etags: string[] = [];
    for (let i = 0; i < CONTEXTS; i++) etags.push((await request(`${url}/rest/pull/${REPO}`, 'GET', { Context: contextOf(i) })).etag);
    await idle(pid);
    const before = residentKiB(pid);

    let round: Round | undefined;
    let answered = 0;
    let outside = 0;
    let stopping = false;
    /** Watchers answered during a round: held again after it, so re-arming does not load the server while it answers. */
    const rearm: Watcher[] = [];
    const arm = (watcher: Watcher) => {
      if (stopping) return;
      request(`${url}/rest/pull/${REPO}`, 'GET', { Context: contextOf(watcher.context), 'If-None-Match': watcher.etag, Wait: '300' }).then(
        (answer) => {
          answered++;
          if (answer.status === 304) return arm(watcher); // the wait ended: hold again
          if (!round) outside++;
          else if (!round.affected(watcher.context)) round.spurious++;
          else {
            round.times.push(answer.at);
            if (round.times.length === round.expected) round.done?.();
          }
          watcher.etag = answer.etag;
          if (round) rearm.push(watcher);
          else arm(watcher);
        },
        () => {
          // A connection refused or reset while thousands open at once (the listen backlog): again, shortly.
          failures++;
          if (!stopping) setTimeout(() => arm(watcher), 100);
        },
      );
    };
    let failures = 0;
    const watchers: Watcher[] = Array.from({ length: WATCHERS }, (_, i) => ({ context: i % CONTEXTS, etag: etags[i % CONTEXTS] }));
    // Opened in slices, as clients of a real fleet arrive, rather than 10,000 connects in one tick.
    for (let i = 0; i < watchers.length; i += 250) {
      for (const watcher of watchers.slice(i, i + 250)) arm(watcher);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await idle(pid, 1000);
    if (failures) log(`cfghub: ${failures} connection attempts failed and were tried again`);
    const held = residentKiB(pid);
    log(`cfghub: ${WATCHERS} watchers held; RSS ${Math.round(before / 1024)} MiB before, ${Math.round(held / 1024)} MiB with them`);

    let roundCpuMs = 0;
    const serverCpuMs: number[] = [];
    const runRound = async (affected: (context: number) => boolean, expected: number, data: unknown[]) => {
      const ticksBefore = cpuTicks(pid);
      const current: Round = { affected, times: [], spurious: 0, expected };
      round = current;
      const finished = new Promise<void>((resolve) => {
        current.done = resolve;
        setTimeout(resolve, 60_000).unref(); // a round never hangs the bench: missing answers show as fewer samples
      });
      const pushedAt = await push(data);
      if (expected > 0) await finished;
      if (current.times.length < expected) log(`cfghub: only ${current.times.length} of ${expected} affected watchers answered within 60 s`);
      await idle(pid); // answers to unaffected watchers would come in this time
      roundCpuMs = (cpuTicks(pid) - ticksBefore) * 10; // the push and the answers, not the re-arming
      round = undefined;
      for (const watcher of rearm.splice(0)) arm(watcher);
      await idle(pid);
      return { latencies: current.times.map((t) => Math.max(0, t - pushedAt)), spurious: current.spurious };
    };

    const one: number[] = [];
    const oneLast: number[] = [];
    let spurious = 0;
    for (let r = 1; r <= ROUNDS; r++) {
      const target = (r * 37) % CONTEXTS;
      const result = await runRound((c) => c === target, WATCHERS / CONTEXTS, [{ key: 'own', values: [{ context: `E${target};*`, value: `v${r}` }] }]);
      one.push(...result.latencies);
      oneLast.push(Math.max(...result.latencies));
      spurious += result.spurious;
    }
    const all: number[] = [];
    const allLast: number[] = [];
    for (let r = 1; r <= ALL_ROUNDS; r++) {
      const result = await runRound(() => true, WATCHERS, [{ key: 'shared', values: [{ context: '*;*', value: `all${r}` }] }]);
      serverCpuMs.push(roundCpuMs);
      all.push(...result.latencies);
      allLast.push(Math.max(...result.latencies));
      spurious += result.spurious;
    }
    const nobody = await runRound(() => false, 0, [{ key: 'own', values: [{ context: 'Nobody;*', value: 'x' }] }]);
    spurious += nobody.spurious + outside;
    log(`cfghub: answers ${answered}, spurious ${spurious}`);
    stopping = true;
    return {
      system: 'cfghub',
      watchers: WATCHERS,
      bytesPerWatcher: Math.round(((held - before) * 1024) / WATCHERS),
      oneP50: percentile(one, 50),
      oneP99: percentile(one, 99),
      oneLastMax: Math.max(...oneLast),
      allP50: percentile(all, 50),
      allP99: percentile(all, 99),
      allLastMax: Math.max(...allLast),
      spurious,
      serverCpuMs: Math.min(...serverCpuMs),
    };
  } finally {
    await stopChild(child);
  }
}

/** etcd's watch through its HTTP gateway: one stream per watcher, one key per context. */
async function etcdWatch(): Promise<Record<string, number | string> | undefined> {
  const etcd = await EtcdServer.start(log);
  if (!etcd) return undefined;
  const pid = Number(execFileSync('pgrep', ['-n', '-x', 'etcd'], { encoding: 'utf8' }).trim());
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const put = (pairs: [string, string][]) =>
    request(`${etcd.url}/v3/kv/txn`, 'POST', { 'Content-Type': 'application/json' }, JSON.stringify({ success: pairs.map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value) } })) }));
  try {
    for (let i = 0; i < CONTEXTS; i++) await put([[`/bench/ctx${i}`, 'v0']]);
    await idle(pid);
    const before = residentKiB(pid);
    let round: Round | undefined;
    let created = 0;
    let outside = 0;
    for (let w = 0; w < WATCHERS; w++) {
      if (w % 250 === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      const context = w % CONTEXTS;
      const req = http.request(`${etcd.url}/v3/watch`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = performance.now();
          // One JSON message per chunk from grpc-gateway: the creation, then events.
          if (chunk.includes('"created":true')) created++;
          const events = chunk.split('"events"').length - 1;
          for (let e = 0; e < events; e++) {
            if (!round) outside++;
            else if (!round.affected(context)) round.spurious++;
            else {
              round.times.push(at);
              if (round.times.length === round.expected) round.done?.();
            }
          }
        });
      });
      req.on('error', (error) => log(`etcd watcher failed: ${error.message}`));
      req.end(JSON.stringify({ create_request: { key: b64(`/bench/ctx${context}`) } }));
    }
    const deadline = Date.now() + 120_000;
    while (created < WATCHERS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    await idle(pid, 1000);
    const held = residentKiB(pid);
    log(`etcd: ${created} watch streams created; RSS ${Math.round(before / 1024)} MiB before, ${Math.round(held / 1024)} MiB with them`);
    const runRound = async (affected: (context: number) => boolean, expected: number, pairs: [string, string][]) => {
      const current: Round = { affected, times: [], spurious: 0, expected };
      round = current;
      const finished = new Promise<void>((resolve) => {
        current.done = resolve;
        setTimeout(resolve, 60_000).unref();
      });
      const pushedAt = (await put(pairs)).at;
      await finished;
      if (current.times.length < expected) log(`etcd: only ${current.times.length} of ${expected} affected watchers answered within 60 s`);
      await idle(pid);
      round = undefined;
      return { latencies: current.times.map((t) => Math.max(0, t - pushedAt)), spurious: current.spurious };
    };
    const one: number[] = [];
    const oneLast: number[] = [];
    let spurious = 0;
    for (let r = 1; r <= ROUNDS; r++) {
      const target = (r * 37) % CONTEXTS;
      const result = await runRound((c) => c === target, WATCHERS / CONTEXTS, [[`/bench/ctx${target}`, `v${r}`]]);
      one.push(...result.latencies);
      oneLast.push(Math.max(...result.latencies));
      spurious += result.spurious;
    }
    const all: number[] = [];
    const allLast: number[] = [];
    for (let r = 1; r <= ALL_ROUNDS; r++) {
      const pairs = Array.from({ length: CONTEXTS }, (_, i): [string, string] => [`/bench/ctx${i}`, `all${r}`]);
      const result = await runRound(() => true, WATCHERS, pairs);
      all.push(...result.latencies);
      allLast.push(Math.max(...result.latencies));
      spurious += result.spurious;
    }
    return {
      system: `etcd ${etcd.version}`,
      watchers: created,
      bytesPerWatcher: Math.round(((held - before) * 1024) / WATCHERS),
      oneP50: percentile(one, 50),
      oneP99: percentile(one, 99),
      oneLastMax: Math.max(...oneLast),
      allP50: percentile(all, 50),
      allP99: percentile(all, 99),
      allLastMax: Math.max(...allLast),
      spurious: spurious + outside,
    };
  } finally {
    agent.destroy();
    await etcd.close();
  }
}

const ms = (value: number | string) => (typeof value === 'number' ? `${value.toFixed(0)} ms` : value);

async function main(): Promise<void> {
  const rows = [await cfghubWatch()];
  const etcd = process.env.SKIP_ETCD ? undefined : await etcdWatch().catch((error: Error) => {
    log(`etcd watch not measured: ${error.message}`);
    return undefined;
  });
  if (etcd) rows.push(etcd);
  const lines = [
    `| system | watchers held | memory per watcher | one context changed (${WATCHERS / CONTEXTS} watchers): p50 / p99 / last | every context changed (${WATCHERS} watchers): p50 / p99 / last | unaffected answered |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.system} | ${r.watchers} | ${(Number(r.bytesPerWatcher) / 1024).toFixed(1)} KiB | ${ms(r.oneP50)} / ${ms(r.oneP99)} / ${ms(r.oneLastMax)} | ${ms(r.allP50)} / ${ms(r.allP99)} / ${ms(r.allLastMax)} | ${r.spurious} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`cfghub server CPU for a push that wakes all ${WATCHERS} watchers (least of ${ALL_ROUNDS} rounds): ${rows[0].serverCpuMs} ms; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
}

main()
  .catch((error: Error) => {
    log(`watch bench failed: ${error.stack ?? error.message}`);
    process.exitCode = 1;
  })
  .finally(() => {
    agent.destroy();
    killChildren();
    removeTempFolders();
  });
