/**
 * Load and leaks: 16 clients push and pull against a server process for CFGHUB_LOAD_SECONDS
 * (12 in `npm test`, 60 in `npm run test:load`). Every answer is a 200, every client reads its
 * own last write, every key ends with the last value written to it, and the server's memory
 * (resident set, sampled every half second) does not grow from the first quarter of the run to
 * the last. Each client rewrites a fixed set of keys, so only the history grows, and what memory
 * it takes is bounded: packs are merged up to 16 MiB and held by their size (a large one read from
 * its file), so memory levels off within the first quarter; before those bounds it grew with the
 * history and this check failed about every other 60 s run. Latency percentiles by window are
 * recorded (not asserted: timing belongs in bench/).
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordFigures } from '../support/figures.js';
import { cliOk, pushTo, tempDir } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';

const SECONDS = Number(process.env.CFGHUB_LOAD_SECONDS ?? 12);
const CLIENTS = 16;
const KEYS_PER_CLIENT = 20;
const CONTEXTS = ['Production;Web', 'Production;Api', 'Dev;Web', 'Test;Batch'];
const REPOSITORIES = ['load/one', 'load/two'];

let dir: ReturnType<typeof tempDir>;
let server: ServerProcess;

beforeAll(async () => {
  dir = tempDir('cfghub-load-');
  for (const repository of REPOSITORIES) {
    cliOk(
      dir.path,
      'repo',
      'create',
      repository,
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
  }
  server = await startServerProcess(dir.path);
});

afterAll(async () => {
  await server.stop();
  dir.remove();
});

function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

describe(`${CLIENTS} clients pushing and pulling for ${SECONDS} s`, () => {
  it(
    'get no error, lose no write, and leave memory flat',
    async () => {
      const started = performance.now();
      const deadline = started + SECONDS * 1000;
      const latencies: { at: number; ms: number }[] = [];
      const memory: { at: number; mib: number }[] = [];
      const lastWritten = new Map<string, string>();
      const problems: string[] = [];
      let pushes = 0;
      let pulls = 0;

      const sampler = setInterval(
        () => memory.push({ at: performance.now() - started, mib: residentMiB(server.pid) }),
        500,
      );
      const client = async (c: number) => {
        const repository = REPOSITORIES[c % REPOSITORIES.length];
        for (let n = 0; performance.now() < deadline; n++) {
          const key = `c${c}.k${n % KEYS_PER_CLIENT}`;
          const value = `${n}`;
          let t = performance.now();
          const answer = await pushTo(server.url, `/rest/push/${repository}`, {
            changeComment: `client ${c} write ${n}`,
            enableKeyCreation: true,
            data: [
              {
                key,
                values: [
                  { context: '*;*', value },
                  { context: `${CONTEXTS[n % CONTEXTS.length].split(';')[0]};*`, value },
                ],
              },
            ],
          });
          latencies.push({ at: t - started, ms: performance.now() - t });
          pushes++;
          if (answer.status !== 200) problems.push(`push ${key}=${value}: ${answer.status} ${answer.body}`);
          else lastWritten.set(`${repository} ${key}`, value);
          t = performance.now();
          const response = await fetch(`${server.url}/rest/pull/${repository}`, {
            headers: { Context: CONTEXTS[(n + c) % CONTEXTS.length] },
          });
          const body = (await response.json()) as { properties: Record<string, { val: string }> };
          latencies.push({ at: t - started, ms: performance.now() - t });
          pulls++;
          if (response.status !== 200) problems.push(`pull: ${response.status}`);
          else if (body.properties[key]?.val !== value)
            problems.push(`client ${c} read ${body.properties[key]?.val} after writing ${key}=${value}`);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      clearInterval(sampler);

      expect(problems.slice(0, 5)).toEqual([]);
      for (const repository of REPOSITORIES) {
        const { data } = (await (await fetch(`${server.url}/rest/export/${repository}`)).json()) as { data: any[] };
        const stored = new Map(
          data.map((k) => [`${repository} ${k.key}`, k.values.find((v: any) => v.context === '*;*')?.value]),
        );
        for (const [id, value] of lastWritten)
          if (id.startsWith(`${repository} `)) expect(stored.get(id), id).toBe(value);
      }

      // Windows: the quarter after a warm-up of a fifth of the run, and the last quarter.
      const span = SECONDS * 1000;
      const first = (at: number) => at >= span * 0.2 && at < span * 0.45;
      const last = (at: number) => at >= span * 0.75;
      const memoryFirst = median(memory.filter((m) => first(m.at)).map((m) => m.mib));
      const memoryLast = median(memory.filter((m) => last(m.at)).map((m) => m.mib));
      const p99First = percentile(
        latencies.filter((l) => first(l.at)).map((l) => l.ms),
        0.99,
      );
      const p99Last = percentile(
        latencies.filter((l) => last(l.at)).map((l) => l.ms),
        0.99,
      );
      recordFigures('load', {
        seconds: SECONDS,
        clients: CLIENTS,
        pushes,
        pulls,
        rssFirstMiB: Math.round(memoryFirst),
        rssLastMiB: Math.round(memoryLast),
        p99FirstMs: Math.round(p99First * 10) / 10,
        p99LastMs: Math.round(p99Last * 10) / 10,
      });
      // A leak grows with the requests served; a flat server stays within noise of where it settled.
      expect(
        memoryLast,
        `resident memory ${memoryFirst.toFixed(0)} MiB early, ${memoryLast.toFixed(0)} MiB late`,
      ).toBeLessThan(memoryFirst * 1.25 + 24);
    },
    (SECONDS + 60) * 1000,
  );
});
