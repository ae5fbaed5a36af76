/**
 * The scale of the watch: `plan.watchers` concurrent watchers (10,000 in a full
 * run) on one `cfghub serve` process, spread over `plan.contexts` contexts (100) of one
 * repository, each a `GET /rest/pull` with `If-None-Match` and `Wait: 300` held by the server.
 * Measures:
 *
 * - the server's resident memory per held watcher (RSS with all held, minus RSS before, over N);
 * - for a push that changes one context (its watchers are 1/contexts of all), and for one that
 *   changes every context (all watchers), the time from the push's 200 to each affected
 *   watcher's answer, and to the last one of each push;
 * - that no unaffected watcher is ever answered (a push to a context nobody watches included);
 * - the server's CPU time for a push that wakes every watcher, and the load average meanwhile.
 *
 * The watchers are held by `plan.clientProcesses` client processes (watchClient.ts), not by this
 * one: one process reading 10,000 answers would itself be the bottleneck it measures. Times come
 * from the system-wide monotonic clock in each process. Watchers are woken by the commit itself,
 * so some answers arrive before the push's own 200: counted as 0.
 *
 * `WATCH_SERVER_NODE_ARGS` passes options to the server's node (e.g. `--cpu-prof
 * --cpu-prof-dir=DIR` to profile it; the server is given a minute to stop, so the profile is written).
 *
 * etcd's watch the same way when etcd is installed (bench/install-tools.sh): as many watch streams
 * through its HTTP gateway (`POST /v3/watch`), one key per context, held by the same client
 * processes; a put of one key, and a transaction putting every key. etcd wakes a watcher on every
 * put of its key, also one that writes the same value; cfghub only when the context's answer
 * changes.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from '../childProcesses.js';
import { EtcdServer } from '../etcd.js';
import type { Log } from '../fixtures.js';
import type { WatchPlan } from '../plan.js';
import type { Measurement, ScenarioResult } from '../results.js';
import { listening, requireBuiltCli, spawnServe } from '../serveProcess.js';
import { pairedSpeedup, percentile, summarize } from '../stats.js';
import { makeTempFolder } from '../tempFolders.js';
import type { FromClient, ToClient, WatcherSpec } from '../watchClient.js';

export const WATCH_ONE = 'watch-one-context';
export const WATCH_ALL = 'watch-every-context';
export const WATCH_ALL_LAST = 'watch-every-context-last';
export const CFGHUB_WATCH = 'cfghub watch';
export const ETCD_WATCH = 'etcd watch';

const REPO = 'bench/watch';
const CLI = fileURLToPath(new URL('../../dist/cli/main.cjs', import.meta.url));
const CLIENT = fileURLToPath(new URL('../watchClient.ts', import.meta.url));
/** A round never hangs the bench: missing answers show as fewer samples (and are logged). */
const ROUND_TIMEOUT_MS = 60_000;

const contextOf = (i: number) => `E${i};app`;
const now = () => Number(process.hrtime.bigint()) / 1e6;

function residentKiB(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const loadAverage = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/**
 * Resolves once a process has used under 5% of a core for `quietMs` (it has taken in everything
 * sent to it; a profiler's sampling, when one runs, and the server's timers stay under that).
 */
async function idle(pid: number, quietMs = 300): Promise<void> {
  let last = cpuTicks(pid);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const ticks = cpuTicks(pid);
    if ((ticks - last) * 10 <= quietMs * 0.05) return;
    last = ticks;
  }
}

// A new connection per request of this process: a kept-alive one may be closed by the server's
// keep-alive timeout just as it is reused ("socket hang up"), and a connect costs a fraction of a millisecond.
const agent = new http.Agent({ keepAlive: false });

function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; etag: string; text: string; at: number }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent }, (res) => {
      const at = now();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag ?? ''), text, at }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A client process and the messages it sent, taken in order by `next`. */
class ClientProcess {
  private readonly inbox: FromClient[] = [];
  private waiting: (() => void) | undefined;

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: FromClient) => {
      this.inbox.push(message);
      this.waiting?.();
    });
  }

  static start(): ClientProcess {
    return new ClientProcess(
      track(fork(CLIENT, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
    );
  }

  send(message: ToClient): void {
    this.child.send(message);
  }

  /** The next message of this type (earlier ones of other types are dropped), or undefined after `timeoutMs`. */
  async next<T extends FromClient['type']>(
    type: T,
    timeoutMs = 600_000,
  ): Promise<Extract<FromClient, { type: T }> | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.inbox.findIndex((m) => m.type === type);
      if (index !== -1) {
        const [message] = this.inbox.splice(index, 1);
        this.inbox.splice(0, index); // older messages of other types are no longer of interest
        return message as Extract<FromClient, { type: T }>;
      }
      if (Date.now() > deadline || this.child.exitCode !== null) return undefined;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, Math.min(1000, Math.max(0, deadline - Date.now()))).unref();
      });
      this.waiting = undefined;
    }
  }

  async stop(): Promise<void> {
    if (this.child.connected) this.send({ type: 'stop' });
    await stopChild(this.child);
  }
}

/** What one system measured. */
interface Run {
  readonly system: string;
  readonly held: number;
  readonly bytesPerWatcher: number;
  /** Per affected watcher: push's 200 to its answer, ms. */
  readonly one: number[];
  readonly all: number[];
  /** Per push: to the last affected watcher's answer, ms. */
  readonly oneLast: number[];
  readonly allLast: number[];
  spurious: number;
  failures: number;
  /** Server CPU per every-context push, ms. */
  readonly cpuMs: number[];
  /** cfghub: per every-context push, from the head change to the last answer written, as the server logs it. */
  readonly serverMs: number[];
  readonly load: number[];
}

/** Starts the client processes and splits `specs` over them; resolves once every request is sent. */
async function startFleet(
  plan: WatchPlan,
  kind: 'cfghub' | 'etcd',
  url: string,
  path: string,
  specs: WatcherSpec[],
): Promise<ClientProcess[]> {
  const clients = Array.from({ length: plan.clientProcesses }, () => ClientProcess.start());
  for (const client of clients)
    if (!(await client.next('hello', 120_000))) throw new Error('a watch client process did not start');
  clients.forEach((client, c) =>
    client.send({ type: 'arm', kind, url, path, watchers: specs.filter((_, i) => i % clients.length === c) }),
  );
  for (const client of clients)
    if (!(await client.next('armed'))) throw new Error('a watch client process did not start');
  return clients;
}

/** One round through the fleet, ended and summarised. */
async function measureRound(
  clients: ClientProcess[],
  affected: number[] | 'all' | 'none',
  push: () => Promise<number>,
  idleOf: () => Promise<void>,
  log: Log,
  what: string,
  cpu?: () => number,
) {
  for (const client of clients) client.send({ type: 'round', affected });
  let expected = 0;
  for (const client of clients) expected += (await client.next('ready'))!.expected;
  const ticks = cpu?.();
  const pushedAt = await push();
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (const client of clients) await client.next('complete', Math.max(0, deadline - Date.now()));
  // The server's CPU from the push to the last answer's arrival: not what follows (the server
  // closing keep-alive connections the clients leave idle until the round ends).
  const cpuMs = ticks === undefined ? NaN : (cpu!() - ticks) * 10;
  await idleOf(); // answers to unaffected watchers would come in this time
  for (const client of clients) client.send({ type: 'end' });
  let times: number[] = [];
  let spurious = 0;
  let failures = 0;
  for (const client of clients) {
    const samples = (await client.next('samples'))!;
    times = times.concat(samples.times);
    spurious += samples.spurious + samples.outside;
    failures += samples.failures;
  }
  if (times.length < expected)
    log(
      `watch: ${what}: only ${times.length} of ${expected} affected watchers answered within ${ROUND_TIMEOUT_MS / 1000} s`,
    );
  const latencies = times.map((t) => Math.max(0, t - pushedAt));
  return { latencies, last: latencies.length ? Math.max(...latencies) : NaN, spurious, failures, cpuMs };
}

async function stopAll(clients: readonly ClientProcess[]): Promise<void> {
  await Promise.all(clients.map((client) => client.stop()));
}

/** Polls the server's cfghub_watchers gauge until it holds `count` watchers. */
async function heldBy(url: string, count: number, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let held = 0;
  while (Date.now() < deadline) {
    const text = (await request(`${url}/metrics`, 'GET', {})).text;
    held = Number(/^cfghub_watchers (\d+)/m.exec(text)?.[1] ?? 0);
    if (held >= count) return held;
    // Once a second is soon enough: holding 10,000 takes seconds.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return held;
}

async function cfghubWatch(plan: WatchPlan, log: Log): Promise<Run> {
  requireBuiltCli();
  const repos = makeTempFolder('watch-bench');
  execFileSync(
    process.execPath,
    [CLI, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push', '--repos', repos],
    { stdio: 'ignore' },
  );
  // One process (`--workers 1`): the figures are per process (memory, CPU from /proc of its pid); with
  // several workers each wakes the watchers it holds (see the README's watch section).
  const child = spawnServe(
    repos,
    ['--workers', '1'],
    (process.env.WATCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  );
  const { url } = await listening(child);
  const pid = child.pid!;
  // The server's own account of each wake (its `watch-wake` log line): from the head change to the last answer written.
  const wakes: number[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.includes('"watch-wake"')) wakes.push((JSON.parse(line) as { durationMs: number }).durationMs);
  });
  const push = async (data: unknown[]) => {
    const answer = await request(
      `${url}/rest/push/${REPO}`,
      'POST',
      { 'Content-Type': 'application/json' },
      JSON.stringify({ changeComment: 'bench', enableKeyCreation: true, data }),
    );
    if (answer.status !== 200) throw new Error(`push answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.at;
  };
  let clients: ClientProcess[] = [];
  try {
    await push([
      { key: 'shared', values: [{ context: '*;*', value: 'v0' }] },
      { key: 'own', values: Array.from({ length: plan.contexts }, (_, i) => ({ context: `E${i};*`, value: 'v0' })) },
    ]);
    const etags: string[] = [];
    for (let i = 0; i < plan.contexts; i++)
      etags.push((await request(`${url}/rest/pull/${REPO}`, 'GET', { Context: contextOf(i) })).etag);
    await idle(pid);
    const before = residentKiB(pid);
    const specs = Array.from({ length: plan.watchers }, (_, i): WatcherSpec => ({
      group: i % plan.contexts,
      target: contextOf(i % plan.contexts),
      etag: etags[i % plan.contexts],
    }));
    clients = await startFleet(plan, 'cfghub', url, `/rest/pull/${REPO}`, specs);
    const held = await heldBy(url, plan.watchers);
    await idle(pid, 1000);
    const rss = residentKiB(pid);
    log(
      `watch: cfghub holds ${held} watchers; RSS ${Math.round(before / 1024)} MiB before, ${Math.round(rss / 1024)} MiB with them`,
    );
    const rearmed = async () => {
      await heldBy(url, plan.watchers);
      await idle(pid);
    };
    const run: Run = {
      system: CFGHUB_WATCH,
      held,
      bytesPerWatcher: Math.round(((rss - before) * 1024) / plan.watchers),
      one: [],
      all: [],
      oneLast: [],
      allLast: [],
      spurious: 0,
      failures: 0,
      cpuMs: [],
      serverMs: [],
      load: [],
    };
    for (let r = 1; r <= plan.oneRounds; r++) {
      const target = (r * 37) % plan.contexts;
      const round = await measureRound(
        clients,
        [target],
        () => push([{ key: 'own', values: [{ context: `E${target};*`, value: `v${r}` }] }]),
        () => idle(pid),
        log,
        `one context, round ${r}`,
      );
      run.one.push(...round.latencies);
      run.oneLast.push(round.last);
      run.spurious += round.spurious;
      await rearmed();
    }
    for (let r = 1; r <= plan.allRounds; r++) {
      run.load.push(loadAverage());
      wakes.length = 0;
      const round = await measureRound(
        clients,
        'all',
        () => push([{ key: 'shared', values: [{ context: '*;*', value: `all${r}` }] }]),
        () => idle(pid),
        log,
        `every context, round ${r}`,
        () => cpuTicks(pid),
      );
      run.cpuMs.push(round.cpuMs); // the push, the answers and their log lines
      if (wakes.length > 0) run.serverMs.push(Math.max(...wakes)); // the line may come after the clients' last answer and the idle wait: rare
      run.all.push(...round.latencies);
      run.allLast.push(round.last);
      run.spurious += round.spurious;
      await rearmed();
    }
    const nobody = await measureRound(
      clients,
      'none',
      () => push([{ key: 'own', values: [{ context: 'Nobody;*', value: 'x' }] }]),
      () => idle(pid),
      log,
      'nobody',
    );
    run.spurious += nobody.spurious;
    run.load.push(loadAverage());
    log(
      `watch: cfghub: last watcher of an every-context push ${run.allLast.map((ms) => Math.round(ms)).join(', ')} ms; server's wake ${run.serverMs.map((ms) => Math.round(ms)).join(', ')} ms; server CPU ${run.cpuMs.join(', ')} ms; unaffected answered ${run.spurious}`,
    );
    return { ...run, failures: nobody.failures };
  } finally {
    await stopAll(clients);
    await stopChild(child, 60_000);
  }
}

/** etcd's watch through its HTTP gateway: one stream per watcher, one key per context. */
async function etcdWatch(plan: WatchPlan, log: Log): Promise<Run | undefined> {
  const etcd = await EtcdServer.start(log);
  if (!etcd) return undefined;
  const pid = etcd.pid;
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const put = async (pairs: [string, string][]) =>
    (
      await request(
        `${etcd.url}/v3/kv/txn`,
        'POST',
        { 'Content-Type': 'application/json' },
        JSON.stringify({
          success: pairs.map(([key, value]) => ({ request_put: { key: b64(key), value: b64(value) } })),
        }),
      )
    ).at;
  let clients: ClientProcess[] = [];
  try {
    for (let i = 0; i < plan.contexts; i++) await put([[`/bench/ctx${i}`, 'v0']]);
    await idle(pid);
    const before = residentKiB(pid);
    const specs = Array.from({ length: plan.watchers }, (_, i): WatcherSpec => ({
      group: i % plan.contexts,
      target: `/bench/ctx${i % plan.contexts}`,
    }));
    clients = await startFleet(plan, 'etcd', etcd.url, '/v3/watch', specs);
    const perClient = clients.map((_, c) => specs.filter((__, i) => i % clients.length === c).length);
    let held = 0;
    for (const [c, client] of clients.entries()) {
      let created = 0;
      while (created < perClient[c]) {
        const message = await client.next('created', 120_000);
        if (!message) break;
        created = message.count;
      }
      held += created;
    }
    await idle(pid, 1000);
    const rss = residentKiB(pid);
    log(
      `watch: etcd holds ${held} watch streams; RSS ${Math.round(before / 1024)} MiB before, ${Math.round(rss / 1024)} MiB with them`,
    );
    const run: Run = {
      system: ETCD_WATCH,
      held,
      bytesPerWatcher: Math.round(((rss - before) * 1024) / plan.watchers),
      one: [],
      all: [],
      oneLast: [],
      allLast: [],
      spurious: 0,
      failures: 0,
      cpuMs: [],
      serverMs: [],
      load: [],
    };
    for (let r = 1; r <= plan.oneRounds; r++) {
      const target = (r * 37) % plan.contexts;
      const round = await measureRound(
        clients,
        [target],
        () => put([[`/bench/ctx${target}`, `v${r}`]]),
        () => idle(pid),
        log,
        `etcd one key, round ${r}`,
      );
      run.one.push(...round.latencies);
      run.oneLast.push(round.last);
      run.spurious += round.spurious;
    }
    for (let r = 1; r <= plan.allRounds; r++) {
      run.load.push(loadAverage());
      const pairs = Array.from({ length: plan.contexts }, (_, i): [string, string] => [`/bench/ctx${i}`, `all${r}`]);
      const round = await measureRound(
        clients,
        'all',
        () => put(pairs),
        () => idle(pid),
        log,
        `etcd every key, round ${r}`,
        () => cpuTicks(pid),
      );
      run.cpuMs.push(round.cpuMs);
      run.all.push(...round.latencies);
      run.allLast.push(round.last);
      run.spurious += round.spurious;
    }
    log(
      `watch: etcd: last watcher of an every-key put ${run.allLast.map((ms) => Math.round(ms)).join(', ')} ms; etcd CPU ${run.cpuMs.join(', ')} ms`,
    );
    return run;
  } finally {
    await stopAll(clients);
    await etcd.close();
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;

function measurement(implementation: string, samples: number[], reference?: number[]): Measurement {
  const speedups =
    reference && reference.length === samples.length && samples.every((s) => s > 0)
      ? { [ETCD_WATCH]: pairedSpeedup(reference, samples) }
      : undefined;
  return { implementation, samples, summary: summarize(samples), ...(speedups ? { speedups } : {}) };
}

export async function runWatchScenario(plan: WatchPlan, log: Log): Promise<ScenarioResult[]> {
  const cfghub = await cfghubWatch(plan, log);
  const etcd = await etcdWatch(plan, log).catch((error: Error) => {
    log(`watch: etcd not measured: ${error.message}`);
    return undefined;
  });
  const runs = etcd ? [cfghub, etcd] : [cfghub];
  const references = etcd ? [ETCD_WATCH] : undefined;
  const perContext = plan.watchers / plan.contexts;
  const count = plan.watchers.toLocaleString('en-US');
  const setup = `${count} watchers held at once by ${plan.clientProcesses} client processes, spread over ${plan.contexts} contexts of one repository (${perContext} each), each \`GET /rest/pull\` with \`If-None-Match\` and \`Wait: 300\` on \`cfghub serve\` (one process, default logging: a line per answer); time from the push's 200 to each answer's status and headers parsed in its client process (system-wide monotonic clock; answers before the 200 count as 0)`;
  const etcdSetup = etcd
    ? `etcd: ${etcd.held.toLocaleString('en-US')} watch streams through its HTTP gateway (\`POST /v3/watch\`), one key per context, held by the same client processes; a put of one key, and one transaction putting all ${plan.contexts} (etcd also wakes a watcher on a put of the same value; cfghub only when the answer changes)`
    : 'etcd not installed: its rows are missing (bench/install-tools.sh)';
  const memory = runs
    .map(
      (r) =>
        `${r.system} ${(r.bytesPerWatcher / 1024).toFixed(1)} KiB of resident memory per held watcher (${r.held.toLocaleString('en-US')} held)`,
    )
    .join('; ');
  const last = (run: Run) =>
    `${run.system}: to the last watcher of each push p50 ${ms(percentile(run.allLast, 50))}, p99 ${ms(percentile(run.allLast, 99))}, max ${ms(Math.max(...run.allLast))}`;
  const load = [...cfghub.load, ...(etcd?.load ?? [])];
  return [
    {
      id: WATCH_ONE,
      title: `watch: one context changed, its ${perContext} of ${count} watchers answered`,
      measurements: runs.map((run) => measurement(run.system, run.one)),
      notes: [
        setup,
        etcdSetup,
        memory,
        `unaffected watchers answered: ${runs.map((r) => `${r.system} ${r.spurious}`).join(', ')} (over every round, a push to a context nobody watches included)`,
      ],
      hideRate: true,
    },
    {
      id: WATCH_ALL,
      title: `watch: every context changed, all ${count} watchers answered`,
      measurements: runs.map((run) => measurement(run.system, run.all)),
      notes: [
        `server CPU (user + system, /proc) from an every-context push to its last answer's arrival (the push, the answers, their log lines): ${runs.map((r) => `${r.system} ${r.cpuMs.join(', ')} ms`).join('; ')}`,
        `cfghub's own account of each every-context wake (its \`watch-wake\` log line, from the head change to the last answer written): ${cfghub.serverMs.length ? `p50 ${ms(percentile(cfghub.serverMs, 50))}, max ${ms(Math.max(...cfghub.serverMs))}` : 'no line read'}`,
        `load average (1 min) during the rounds ${Math.min(...load).toFixed(1)} to ${Math.max(...load).toFixed(1)} on ${(readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm) ?? []).length} cores`,
      ],
      hideRate: true,
    },
    {
      id: WATCH_ALL_LAST,
      title: `watch: every context changed, to the last of ${count} watchers, per push`,
      references,
      measurements: runs.map((run) => measurement(run.system, run.allLast, run === cfghub ? etcd?.allLast : undefined)),
      notes: runs.map(last),
      hideRate: true,
    },
  ];
}
