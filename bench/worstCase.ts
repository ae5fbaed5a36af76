/**
 * `npm run bench:worst`: the worst requests the limits allow, each while two other
 * clients keep asking: one `GET /healthz` after another, and one cached pull (a small repository,
 * its answer warm) after another. Target: no request of those clients waits more than 50 ms.
 *
 * 1. glob: `/rest/info` with `Files-Glob` of 255 characters (`{*,*}` 51 times, then a letter that
 *    differs per request so no answer comes from the cache) over 1,000 files of 100-character paths.
 * 2. template: the largest answer of rendered files allowed, 8 files of 1,000,000 characters each
 *    embedding one file (MAX_RENDERED_ANSWER_CHARS is 8 Mi), a new context per request (no cache);
 *    and a template that multiplies past the file limit (answered 409).
 * 3. push: 10,000 keys of 5 values each (MAX_VALUES_PER_PUSH values, 3.0 MB of JSON), new values
 *    each time, into a repository of 10,000 keys.
 * 4. cold load: the first pull of that 10,000-key, 50,000-value repository after a restart.
 *
 * `cfghub serve` runs in a child process (the built CLI); the clients run in this process, idle
 * but for them. The last column is the server's own figure (`nodejs_eventloop_lag_max_seconds` of
 * /metrics): the longest its event loop was held, apart from delays of the clients or the network.
 * Prints a Markdown table; figures go into docs/performance-worst-case.md by hand.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killChildren, stopChild } from './childProcesses.js';
import { listening, requireBuiltCli, spawnServe, type ServeProcess } from './serveProcess.js';
import { percentile } from './stats.js';
import { makeTempFolder, removeTempFolders } from './tempFolders.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.cjs', import.meta.url));
// One process (`serve --workers 1`): with a worker per core, half the probes would reach a worker
// the heavy request does not occupy, and the figures would hide what one event loop holds.
process.env.CFGHUB_WORKERS = '1';
const ANY = '*;*;*';
const log = (message: string) => process.stderr.write(`[bench:worst] ${message}\n`);
const quick = process.argv.includes('--quick');

function cli(repos: string, ...args: string[]): void {
  const result = spawnSync(process.execPath, [CLI, ...args, '--repos', repos], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cfghub ${args.join(' ')}: ${result.stderr}`);
}

async function call(
  url: string,
  init: RequestInit & { expect?: number[] } = {},
): Promise<{ status: number; bytes: number }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
  const body = await response.arrayBuffer();
  if (!(init.expect ?? [200]).includes(response.status))
    throw new Error(`${url} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
  return { status: response.status, bytes: body.byteLength };
}

const pushBody = (data: unknown[]) => JSON.stringify({ changeComment: 'bench', enableKeyCreation: true, data });
const post = (url: string, body: string) =>
  call(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

/**
 * The server's longest event-loop pause since the last scrape (prom-client's monitorEventLoopDelay,
 * reset by each scrape), in ms: what the server itself held, apart from the clients' own delays.
 */
async function serverLagMaxMs(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

/** Sequential clients timing each request while `work` runs; the heavy requests' own times too. */
async function during(base: string, work: () => Promise<number[]>) {
  await serverLagMaxMs(base);
  let running = true;
  const probe = async (path: string, headers: Record<string, string>) => {
    const samples: number[] = [];
    while (running) {
      const started = performance.now();
      // A kept-alive connection the server closed just as it was reused: the request is sent
      // again, and the wait counts whole.
      await call(`${base}${path}`, { headers }).catch(() => call(`${base}${path}`, { headers }));
      if (running) samples.push(performance.now() - started);
    }
    return samples;
  };
  const healthz = probe('/healthz', {});
  const pull = probe('/rest/pull/acme/small', { Context: 'Prod;web;n1' });
  const heavy = await work();
  running = false;
  const result = { heavy, healthz: await healthz, pull: await pull };
  return { ...result, lag: [await serverLagMaxMs(base)] };
}

interface Row {
  readonly scenario: string;
  readonly heavy: number[];
  readonly healthz: number[];
  readonly pull: number[];
  /** The server's longest event-loop pause during each run of the scenario. */
  readonly lag: number[];
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const figures = (samples: number[]) =>
  samples.length === 0
    ? 'n=0'
    : `n=${samples.length}: ${ms(percentile(samples, 50))} / ${ms(percentile(samples, 99))} / ${ms(Math.max(...samples))}`;

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

async function main(): Promise<void> {
  requireBuiltCli();
  const repos = makeTempFolder('worst');
  for (const name of ['small', 'files', 'tpl', 'many', 'push'])
    cli(
      repos,
      'repo',
      'create',
      `acme/${name}`,
      '--context',
      'Environment,Application,Instance',
      '--token-free-push',
      '--token-free-pull',
    );
  let child: ServeProcess = spawnServe(repos);
  let base = (await listening(child)).url;
  const rows: Row[] = [];
  const repeat = async (times: number, one: (i: number) => Promise<unknown>) => {
    const out: number[] = [];
    for (let i = 0; i < times; i++) out.push(await timed(() => one(i)));
    return out;
  };
  try {
    log('fixtures');
    await post(
      `${base}/rest/push/acme/small`,
      pushBody(Array.from({ length: 100 }, (_, i) => ({ key: `s.${i}`, values: [{ context: ANY, value: `v${i}` }] }))),
    );
    await call(`${base}/rest/pull/acme/small`, { headers: { Context: 'Prod;web;n1' } });
    await post(
      `${base}/rest/push/acme/files`,
      pushBody(
        Array.from({ length: 1000 }, (_, i) => ({
          file: `deep/${String(i).padStart(4, '0')}/${'a'.repeat(90)}.txt`,
          context: ANY,
          content: `f${i}`,
        })),
      ),
    );
    const big = 'x'.repeat(1_000_000);
    await post(
      `${base}/rest/push/acme/tpl`,
      pushBody([
        { file: 'big.txt', context: ANY, content: big },
        { key: 'embed.big', vdt: 'FileEmbed', values: [{ context: ANY, value: 'big.txt' }] },
        ...Array.from({ length: 7 }, (_, i) => ({ file: `copy${i}.txt`, context: ANY, content: '${ embed.big }' })),
      ]),
    );
    const ladder: unknown[] = [
      { file: 'm/base.txt', context: ANY, content: 'x'.repeat(10_000) },
      { key: 'm.e0', vdt: 'FileEmbed', values: [{ context: ANY, value: 'm/base.txt' }] },
    ];
    for (let level = 1; level <= 4; level++) {
      ladder.push({ file: `m/level${level}.txt`, context: ANY, content: `\${ m.e${level - 1} }`.repeat(10) });
      if (level < 4)
        ladder.push({ key: `m.e${level}`, vdt: 'FileEmbed', values: [{ context: ANY, value: `m/level${level}.txt` }] });
    }
    await post(`${base}/rest/push/acme/many`, pushBody(ladder));
    const pushes = quick ? 2 : 4;
    const bodies = Array.from({ length: pushes }, (_, round) =>
      pushBody(
        Array.from({ length: 10_000 }, (_, i) => ({
          key: `k.${i}`,
          values: Array.from({ length: 5 }, (_, j) => ({
            context: `e${j};app;*`,
            value: `value ${i} ${j} round ${round}`,
          })),
        })),
      ),
    );
    log(`push body: ${(bodies[0].length / 1e6).toFixed(1)} MB`);
    await post(`${base}/rest/push/acme/push`, bodies[0]);

    const times = quick ? 5 : 20;
    const glob = (i: number) => `${'{*,*}'.repeat(51)}${String.fromCharCode(65 + (i % 26))}`;
    log('glob');
    rows.push({
      scenario: 'Files-Glob of 255 characters, 1,000 files (200)',
      ...(await during(base, () =>
        repeat(times, (i) => call(`${base}/rest/info/acme/files`, { headers: { 'Files-Glob': glob(i) } })),
      )),
    });
    log('template');
    rows.push({
      scenario: 'pull of 8 rendered files of 1,000,000 characters, the answer limit (200, 8 MB)',
      ...(await during(base, () =>
        repeat(times, (i) => call(`${base}/rest/pull/acme/tpl`, { headers: { Context: `Prod;web;n${i}` } })),
      )),
    });
    rows.push({
      scenario: 'pull of a template multiplying to 100 MB (409 at 4 Mi characters)',
      ...(await during(base, () =>
        repeat(times, (i) =>
          call(`${base}/rest/pull/acme/many`, { headers: { Context: `Prod;web;n${i}` }, expect: [409] }),
        ),
      )),
    });
    log('push');
    rows.push({
      scenario: 'push of 10,000 keys x 5 values (50,000 values, 3.0 MB) into 10,000 keys',
      ...(await during(base, () => repeat(pushes - 1, (i) => post(`${base}/rest/push/acme/push`, bodies[i + 1])))),
    });
    log('cold load');
    const cold: Row = {
      scenario: 'first pull after a restart, 10,000 keys x 5 values (cold load)',
      heavy: [],
      healthz: [],
      pull: [],
      lag: [],
    };
    for (let i = 0; i < (quick ? 2 : 5); i++) {
      await stopChild(child);
      child = spawnServe(repos);
      base = (await listening(child)).url;
      await call(`${base}/rest/pull/acme/small`, { headers: { Context: 'Prod;web;n1' } });
      const one = await during(base, async () => [
        await timed(() => call(`${base}/rest/pull/acme/push`, { headers: { Context: 'e1;app;n1' } })),
      ]);
      cold.heavy.push(...one.heavy);
      cold.healthz.push(...one.healthz);
      cold.pull.push(...one.pull);
      cold.lag.push(...one.lag);
    }
    rows.push(cold);
  } finally {
    await stopChild(child);
  }
  const lines = [
    "| worst allowed request | its time, p50 / max ms | /healthz meanwhile: n: p50 / p99 / max ms | cached pull meanwhile: n: p50 / p99 / max ms | server's longest event-loop pause, ms |",
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| ${row.scenario} | ${ms(percentile(row.heavy, 50))} / ${ms(Math.max(...row.heavy))} | ${figures(row.healthz)} | ${figures(row.pull)} | ${ms(Math.max(...row.lag))} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

process.once('exit', () => {
  killChildren();
  removeTempFolders();
});
main().catch((error: unknown) => {
  process.stderr.write(
    `[bench:worst] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
