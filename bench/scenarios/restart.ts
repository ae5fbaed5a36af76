/**
 * The first pull after a restart: `cfghub serve` as a user runs it (the built CLI,
 * `node dist/cli/main.cjs serve --port 0 --repos DIR`) in a new child process, over a 10,000-key
 * repository; as soon as its `"event":"listening"` log line appears on its stdout, one token-free
 * pull of the whole repository for a fully qualified context. That first answer needs the
 * repository's snapshot parsed from git, which nothing has done yet in the new process.
 *
 * Two clocks, both in this process: from spawn to the full 200 answer (process start, module
 * loading, the registry, then the pull), and from the listening line to that answer (the pull
 * alone, as a client that connects right after a restart sees it). The OS page cache is warm (the
 * fixture was just written), as after a restart on a running machine, not a cold boot.
 */
import { stopChild } from '../childProcesses.js';
import type { Log, ReadFixture } from '../fixtures.js';
import type { RestartPlan } from '../plan.js';
import type { ScenarioResult } from '../results.js';
import { listening, requireBuiltCli, spawnServe, type ServeProcess } from '../serveProcess.js';
import { summarize } from '../stats.js';

export const RESTART_LISTENING = 'restart-listening';
export const RESTART_SPAWN = 'restart-spawn';
export const SERVE = 'cfghub serve';

interface Restart {
  readonly spawnToAnswer: number;
  readonly listeningToAnswer: number;
  /** A second pull right after, for comparison: the same answer, now cached. */
  readonly secondPull: number;
  readonly bodyBytes: number;
}

const PULL_TIMEOUT_MS = 60_000;

async function pull(url: string, context: string): Promise<string> {
  const response = await fetch(url, { headers: { Context: context }, signal: AbortSignal.timeout(PULL_TIMEOUT_MS) });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${body.slice(0, 300)}`);
  return body;
}

async function restartOnce(fixture: ReadFixture): Promise<Restart> {
  const spawned = performance.now();
  const child: ServeProcess = spawnServe(fixture.reposRoot);
  try {
    const { url, at } = await listening(child);
    const pullUrl = `${url}${fixture.pullPath}`;
    const body = await pull(pullUrl, fixture.context.text);
    const answered = performance.now();
    const properties = Object.keys((JSON.parse(body) as { properties: object }).properties).length;
    if (properties !== fixture.context.resolvedKeys)
      throw new Error(`the first pull held ${properties} keys, expected ${fixture.context.resolvedKeys}`);
    const t0 = performance.now();
    await pull(pullUrl, fixture.context.text);
    const secondPull = performance.now() - t0;
    return {
      spawnToAnswer: answered - spawned,
      listeningToAnswer: answered - at,
      secondPull,
      bodyBytes: Buffer.byteLength(body),
    };
  } finally {
    await stopChild(child);
  }
}

export async function runRestartScenario(fixture: ReadFixture, plan: RestartPlan, log: Log): Promise<ScenarioResult[]> {
  requireBuiltCli();
  const runs: Restart[] = [];
  for (let i = 0; i < plan.repetitions; i++) runs.push(await restartOnce(fixture));
  const fromListening = runs.map((r) => r.listeningToAnswer);
  const fromSpawn = runs.map((r) => r.spawnToAnswer);
  const second = summarize(runs.map((r) => r.secondPull));
  log(
    `restart: ${plan.repetitions} restarts, first pull ${Math.round(Math.max(...fromListening))} ms at worst after listening`,
  );
  const keys = `${fixture.keyCount.toLocaleString('en-US')} keys`;
  const what = `\`${SERVE}\` spawned as \`node dist/cli/main.cjs serve --port 0 --repos DIR\` ${plan.repetitions} times, each stopped by its pid before the next; one token-free GET ${fixture.pullPath} with \`Context: ${fixture.context.text}\` (${fixture.context.resolvedKeys} of ${keys} resolve; ${Math.round(runs[0].bodyBytes / 1024)} KiB of JSON) right after the listening line, timed to the last byte; OS page cache warm`;
  return [
    {
      id: RESTART_LISTENING,
      title: `first pull after a restart, ${keys}, from listening`,
      measurements: [{ implementation: SERVE, samples: fromListening, summary: summarize(fromListening) }],
      notes: [
        what,
        `a second pull right after the first, on the same server (answer cached): p50 ${second.p50.toFixed(2)} ms (p99 ${second.p99.toFixed(2)})`,
      ],
      hideRate: true,
    },
    {
      id: RESTART_SPAWN,
      title: `first pull after a restart, ${keys}, from spawn`,
      measurements: [{ implementation: SERVE, samples: fromSpawn, summary: summarize(fromSpawn) }],
      notes: [
        'the same restarts, timed from the spawn of the process: Node start, module loading, the registry, listening, then the pull',
      ],
      hideRate: true,
    },
  ];
}
