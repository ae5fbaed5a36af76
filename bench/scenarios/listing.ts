/**
 * `GET /rest/info/all` over HTTP with 1,000 repositories.
 *
 * Cold: the first listing of a new server instance (new registry and token service, so no parsed
 * snapshot exists). The process, its JIT and the OS page cache are warm: this is a restarted
 * server on a machine that has read the files recently, not a cold disk.
 * Warm: later listings of the last of those servers, after its first one.
 * After a push: each listing right after a 1-key push into one of the repositories, made by
 * another writer on the same folder (as the CLI or a second server would): the server must notice
 * the new head and read that repository's new commit, and only that one.
 */
import { push } from '../../src/service/write/push.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { BENCH_CALLER } from '../fixtures.js';
import { KeyWorkload } from '../workload.js';
import type { Log } from '../fixtures.js';
import { LISTING_REPOSITORIES } from '../fixtures.js';
import type { Plan } from '../plan.js';
import type { ScenarioResult } from '../results.js';
import { getText, startBenchServer, type BenchServer } from '../server.js';
import { summarize } from '../stats.js';

export const LISTING_WARM = 'listing-warm';
export const LISTING_COLD = 'listing-cold';
export const LISTING_AFTER_PUSH = 'listing-after-push';
const IMPLEMENTATION = 'cfghub HTTP';

async function timedListing(server: BenchServer): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const body = await getText(`${server.url}/rest/info/all`);
  return { ms: performance.now() - t0, body };
}

function checkCount(body: string): void {
  const count = (JSON.parse(body) as unknown[]).length;
  if (count !== LISTING_REPOSITORIES)
    throw new Error(`the listing returned ${count} repositories, expected ${LISTING_REPOSITORIES}`);
}

export async function runListingScenario(
  reposRoot: string,
  plan: Plan['listing'],
  log: Log,
): Promise<ScenarioResult[]> {
  const cold: number[] = [];
  const warm: number[] = [];
  const afterPush: number[] = [];
  let server: BenchServer | undefined;
  let bytes = 0;
  try {
    for (let i = 0; i < plan.cold; i++) {
      await server?.close();
      server = undefined;
      server = await startBenchServer(reposRoot);
      const first = await timedListing(server);
      checkCount(first.body);
      bytes = Buffer.byteLength(first.body);
      cold.push(first.ms);
    }
    for (let i = 0; i < plan.warmup; i++) await timedListing(server!);
    for (let i = 0; i < plan.warm; i++) warm.push((await timedListing(server!)).ms);
    // The fixture's first repository (5 keys): each round changes one of its values. The key names
    // do not depend on the seed; a seed of this run's own makes values earlier runs never wrote.
    const writer = new RepositoryRegistry(reposRoot).find('team00', 'config0000');
    if (!writer) throw new Error('the listing fixture has no team00/config0000');
    const workload = new KeyWorkload(5, { seed: Date.now() % 1_000_000_007 });
    for (let i = 0; i < plan.afterPush; i++) {
      const result = await push(writer, workload.nextChange(1).payload.request, BENCH_CALLER);
      if (result.kind !== 'applied')
        throw new Error(`the push before listing ${i} did not apply: ${JSON.stringify(result)}`);
      const listing = await timedListing(server!);
      checkCount(listing.body);
      afterPush.push(listing.ms);
    }
  } finally {
    await server?.close();
  }
  log(`listing: ${plan.cold} cold and ${plan.warm} warm listings (${Math.round(bytes / 1024)} KiB each)`);
  const repositories = `${LISTING_REPOSITORIES.toLocaleString('en-US')} repositories`;
  return [
    {
      id: LISTING_WARM,
      title: `GET /rest/info/all, ${repositories}, warm`,
      measurements: [{ implementation: IMPLEMENTATION, samples: warm, summary: summarize(warm) }],
      notes: [
        `${plan.warm} listings after ${1 + plan.warmup} untimed ones on the same server; ${Math.round(bytes / 1024)} KiB of JSON each`,
      ],
    },
    {
      id: LISTING_AFTER_PUSH,
      title: `GET /rest/info/all, ${repositories}, right after a push`,
      measurements: [{ implementation: IMPLEMENTATION, samples: afterPush, summary: summarize(afterPush) }],
      notes: [
        `${plan.afterPush} listings on the warm server, each right after a 1-key push into team00/config0000 by another writer on the same folder`,
      ],
    },
    {
      id: LISTING_COLD,
      title: `GET /rest/info/all, ${repositories}, cold (new server instance)`,
      measurements: [{ implementation: IMPLEMENTATION, samples: cold, summary: summarize(cold) }],
      notes: [
        `first listing of ${plan.cold} new server instances (new registry and token service) in this process; OS page cache warm; each repository's head summary (cfghub-summary.json in its folder, see docs/storage-layout.md) kept by the listings before`,
      ],
    },
  ];
}
