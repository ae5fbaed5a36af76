/**
 * `GET /rest/history` of the last 50 commits on a repository with 10,000 commits (under
 * 50 ms), over HTTP, three ways:
 *
 * Cold: the first request of a new server instance (new registry, so no commit parsed and no
 * change summarized; the OS page cache is warm). The page is computed from the trees. The bench
 * client (Node's fetch) is warmed first on a server of its own (warmClient).
 * Fresh page: on a warm server, a page of 50 commits none of which was summarized before (each
 * sample pages further back with `Before`), so it measures the tree comparisons, not the cache.
 * After a push: a push of one key over HTTP (untimed), then the first page, timed: what a client
 * polling history sees in steady state, with one commit not summarized yet.
 * Warm: the first page again and again (summaries cached by commit id).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HistoryFixture } from '../historyFixture.js';
import type { Log } from '../fixtures.js';
import type { Plan } from '../plan.js';
import type { ScenarioResult } from '../results.js';
import { postPush, startBenchServer, type BenchServer } from '../server.js';
import { summarize } from '../stats.js';

export const HISTORY_COLD = 'history-cold';
export const HISTORY_FRESH = 'history-fresh';
export const HISTORY_WARM = 'history-warm';
export const HISTORY_AFTER_PUSH = 'history-after-push';
export const HISTORY_HTTP = 'cfghub HTTP';
const PAGE = 50;

async function timedPage(
  server: BenchServer,
  path: string,
  before?: string,
): Promise<{ ms: number; last: string; bytes: number }> {
  const t0 = performance.now();
  const response = await fetch(`${server.url}${path}`, {
    headers: { Limit: String(PAGE), ...(before ? { Before: before } : {}) },
  });
  const text = await response.text();
  const ms = performance.now() - t0;
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { commits: { id: string; keys: unknown[] }[] };
  if (body.commits.length !== PAGE || body.commits.some((commit) => commit.keys.length === 0)) {
    throw new Error(
      `history answered ${body.commits.length} commits (or some without their changes), expected ${PAGE}`,
    );
  }
  return { ms, last: body.commits[PAGE - 1].id, bytes: Buffer.byteLength(text) };
}

/**
 * One request of Node's fetch to a plain node:http server of its own, before any cold sample:
 * fetch loads and compiles undici on first use, 10 to 15 ms of the bench client's own (it had
 * been the first cold sample's, when the history scenario runs alone), no part of a server's
 * first answer. No cfghub code runs.
 */
async function warmClient(): Promise<void> {
  const plain = createServer((_request, response) => response.end('ok'));
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  try {
    await (await fetch(`http://127.0.0.1:${(plain.address() as AddressInfo).port}/`)).text();
  } finally {
    plain.closeAllConnections();
    await new Promise((resolve) => plain.close(resolve));
  }
}

export async function runHistoryScenario(
  fixture: HistoryFixture,
  plan: Plan['history'],
  log: Log,
): Promise<ScenarioResult[]> {
  await warmClient();
  const cold: number[] = [];
  const fresh: number[] = [];
  const warm: number[] = [];
  const afterPush: number[] = [];
  let bytes = 0;
  let server: BenchServer | undefined;
  try {
    for (let i = 0; i < plan.cold; i++) {
      await server?.close();
      server = await startBenchServer(fixture.reposRoot);
      const first = await timedPage(server, fixture.historyPath);
      cold.push(first.ms);
      bytes = first.bytes;
    }
    let before = (await timedPage(server!, fixture.historyPath)).last;
    for (let i = 0; i < plan.fresh; i++) {
      const page = await timedPage(server!, fixture.historyPath, before);
      fresh.push(page.ms);
      before = page.last;
    }
    for (let i = 0; i < plan.warmup; i++) await timedPage(server!, fixture.historyPath);
    for (let i = 0; i < plan.warm; i++) warm.push((await timedPage(server!, fixture.historyPath)).ms);
    for (let i = 0; i < plan.afterPush; i++) {
      await postPush(`${server!.url}${fixture.pushPath}`, fixture.workload.nextChange(1).payload.body);
      afterPush.push((await timedPage(server!, fixture.historyPath)).ms);
    }
  } finally {
    await server?.close();
  }
  const commits = `${fixture.commits.toLocaleString('en-US')} commits`;
  log(
    `history: ${plan.cold} cold, ${plan.fresh} fresh and ${plan.warm} warm pages of ${PAGE} commits (${Math.round(bytes / 1024)} KiB each)`,
  );
  const measurement = (samples: number[]) => [{ implementation: HISTORY_HTTP, samples, summary: summarize(samples) }];
  const size = `${Math.round(bytes / 1024)} KiB of JSON per page, 1 to 3 keys changed per commit, 1,000 keys`;
  return [
    {
      id: HISTORY_COLD,
      title: `GET /rest/history, last ${PAGE} of ${commits}, cold (new server instance)`,
      measurements: measurement(cold),
      notes: [
        `first request of ${plan.cold} new server instances in this process (nothing parsed or summarized yet; OS page cache warm; the client's fetch warmed on a plain node:http server first); ${size}`,
      ],
    },
    {
      id: HISTORY_FRESH,
      title: `GET /rest/history, ${PAGE} of ${commits} not summarized before (paging back with Before)`,
      measurements: measurement(fresh),
      notes: [
        `${plan.fresh} consecutive pages further back on one warm server, each of commits never summarized before`,
      ],
    },
    {
      id: HISTORY_AFTER_PUSH,
      title: `GET /rest/history, last ${PAGE} of ${commits}, right after a push`,
      measurements: measurement(afterPush),
      notes: [
        `${plan.afterPush} rounds on the warm server: a 1-key push over HTTP (untimed), then the first page (one commit not summarized yet)`,
      ],
    },
    {
      id: HISTORY_WARM,
      title: `GET /rest/history, last ${PAGE} of ${commits}, warm`,
      measurements: measurement(warm),
      notes: [
        `${plan.warm} requests of the first page after ${plan.warmup} untimed ones (change summaries cached by commit id)`,
      ],
    },
  ];
}
