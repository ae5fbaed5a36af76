/**
 * Pull throughput against a static endpoint on the same server (issue 3): `GET /rest/pull` of a
 * 1,000-key repository for a fully qualified context, and `GET /static` answering the very same
 * bytes, both from one server process (pullServer.ts), loaded by wrk or the Node fallback
 * (load.ts) with 1 and with 16 keep-alive connections.
 *
 * The static endpoint is the floor of the process and node:http: what serving those
 * bytes costs with no cfghub code at all. The two are measured in short alternating slices
 * (pull, static, static, pull, …), so a noisy second on the shared machine hits both alike, and
 * each pair of slices gives one ratio; the reported ratio is their median.
 */
import { createHash } from 'node:crypto';
import type { Log, ReadFixture } from '../fixtures.js';
import { startLoadGenerator, type LoadGenerator, type SliceResult } from '../load.js';
import type { PullPlan } from '../plan.js';
import { PullServerProcess } from '../pullServer.js';
import type { Measurement, ScenarioResult } from '../results.js';
import { median, mergeHistograms, summarizeLoad } from '../stats.js';

export const PULL = 'cfghub pull';
export const STATIC = 'static bytes, same server';

export function pullScenarioId(connections: number): string {
  return `pull-c${connections}`;
}

interface Endpoint {
  readonly name: string;
  readonly url: string;
}

/** Both endpoints must answer 200 with byte-identical bodies, or the comparison is void. */
async function checkSameBytes(endpoints: readonly Endpoint[], headers: Record<string, string>): Promise<void> {
  const digests = await Promise.all(
    endpoints.map(async ({ name, url }) => {
      const response = await fetch(url, { headers });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200) throw new Error(`${name} (${url}) answered ${response.status}: ${body.toString('utf8', 0, 300)}`);
      return createHash('sha1').update(body).digest('hex');
    }),
  );
  if (new Set(digests).size !== 1) throw new Error(`the pull and static endpoints answered different bytes (${digests.join(' vs ')})`);
}

function range(values: readonly number[]): string {
  return `${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))}`;
}

export async function runPullScenario(fixture: ReadFixture, plan: PullPlan, log: Log): Promise<ScenarioResult[]> {
  const server = await PullServerProcess.start({ reposRoot: fixture.reposRoot, pullPath: fixture.pullPath, context: fixture.context.text });
  let load: LoadGenerator | undefined;
  try {
    load = await startLoadGenerator(log);
    const endpoints: Endpoint[] = [
      { name: PULL, url: `${server.url}${fixture.pullPath}` },
      { name: STATIC, url: `${server.url}/static` },
    ];
    // The same request headers go to both endpoints (static ignores them), so requests are the same size.
    const headers = { Context: fixture.context.text };
    await checkSameBytes(endpoints, headers);
    const results: ScenarioResult[] = [];
    for (const connections of plan.connections) {
      const started = performance.now();
      const slice = (endpoint: Endpoint, seconds: number) => load!.run({ url: endpoint.url, headers, connections, seconds, bodyBytes: server.bodyBytes });
      for (const endpoint of endpoints) await slice(endpoint, plan.warmupSeconds);
      const slices = new Map<string, SliceResult[]>(endpoints.map((e) => [e.name, []]));
      for (let i = 0; i < plan.slices; i++) {
        // ABBA: each endpoint runs first in half the pairs, so neither always follows the other.
        const order = i % 2 === 0 ? endpoints : [...endpoints].reverse();
        for (const endpoint of order) slices.get(endpoint.name)!.push(await slice(endpoint, plan.sliceSeconds));
      }
      const rps = (name: string) => slices.get(name)!.map((s) => s.requestsPerSecond);
      const pullRps = rps(PULL);
      const staticRps = rps(STATIC);
      const measurements: Measurement[] = endpoints.map(({ name }) => {
        const mine = slices.get(name)!;
        const histogram = mergeHistograms(mine.map((s) => s.histogram));
        const seconds = mine.reduce((sum, s) => sum + s.seconds, 0);
        const requests = mine.reduce((sum, s) => sum + s.requests, 0);
        return {
          implementation: name,
          samples: [],
          summary: summarizeLoad(histogram, requests, seconds),
          ...(name === PULL ? { speedup: median(pullRps.map((value, i) => value / staticRps[i])) } : {}),
          load: { generator: load!.name, connections, slices: mine.map(({ histogram: _, ...figures }) => figures), histogram },
        };
      });
      log(`pull vs static, ${connections} connection(s): ${2 * (plan.slices + 1)} slices in ${Math.round((performance.now() - started) / 1000)} s`);
      const plural = connections === 1 ? '' : 's';
      results.push({
        id: pullScenarioId(connections),
        title: `GET /rest/pull, ${fixture.keyCount.toLocaleString('en-US')} keys (${(server.bodyBytes / 1024).toFixed(0)} KiB), ${connections} connection${plural}`,
        reference: STATIC,
        measurements,
        notes: [
          `${plan.slices} slices of ${plan.sliceSeconds} s per endpoint after ${plan.warmupSeconds} s of warm-up each, alternating pull and static (ABBA); p50 and p99 from the latencies of all the slices pooled; requests per second by slice: pull ${range(pullRps)}, static ${range(staticRps)}`,
        ],
      });
    }
    // What holds for both connection counts is said once, ahead of the first one's own note.
    const serverMiB = await server.residentMiB();
    const [first, ...rest] = results;
    const shared = [
      `GET ${fixture.pullPath} with \`Context: ${fixture.context.text}\` (fully qualified; resolves ${fixture.context.resolvedKeys} of ${fixture.keyCount.toLocaleString('en-US')} keys, the most of any such context; ${server.bodyBytes} bytes of JSON, token-free pull) against GET /static answering those very bytes (checked byte for byte), both routes in one server process started for this scenario (RSS ${server.residentMiBAtStart} MiB at start, ${serverMiB} MiB at the end); /static is answered by plain node:http calls ahead of cfghub's request listener (no request id, no log call, no route match), so any bias is against pull`,
      `load generator: ${load.description}`,
    ];
    return [{ ...first, notes: [...shared, ...first.notes] }, ...rest];
  } finally {
    await load?.close();
    await server.close();
  }
}
