/**
 * 16 clients pushing at once, each one 1-key push after another over HTTP, against the
 * real `cfghub serve` in its own process: into 16 repositories (one per client) and into one
 * repository (all clients, each its own key: every push a commit of its own, serialised by the
 * repository's queue and ref lock), against etcd with 16 clients each putting its own key in one
 * transaction after another. Repositories hold 1,000 keys; values are the size of a key document.
 *
 * The three run in slices of a few seconds in rotating order; per round of slices, cfghub's
 * pushes per second over etcd's give one ratio, and the reported ratio is their median.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { push } from '../../src/service/write/push.js';
import { createRepository } from '../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';
import { stopChild } from '../childProcesses.js';
import { coreWorkers } from '../../src/server/serveConfig.js';
import type { EtcdServer } from '../etcd.js';
import { BENCH_CALLER, type Log } from '../fixtures.js';
import type { ConcurrentPlan } from '../plan.js';
import type { Measurement, ScenarioResult } from '../results.js';
import { listening, requireBuiltCli, spawnServe } from '../serveProcess.js';
import { median, summarize } from '../stats.js';
import { makeTempFolder } from '../tempFolders.js';
import { CONTEXT_LEVELS, KeyWorkload } from '../workload.js';

export const CONCURRENT = 'push-concurrent';
export const INTO_MANY = 'cfghub, 16 repositories';
export const INTO_ONE = 'cfghub, one repository';
/** The same into 16 repositories through `serve --workers auto` (what the workers add). */
export const INTO_MANY_WORKERS = 'cfghub, 16 repositories, --workers auto';
export const ETCD_CLIENTS = 'etcd txn, 16 clients';
const KEYS = 1_000;
/** The size of a key document (the push workload's mean), for etcd's values. */
const VALUE = 'v'.repeat(300);

interface Slice {
  readonly done: number;
  readonly seconds: number;
  readonly latencies: number[];
}

/** `clients` loops, each one operation after another, for `seconds`. */
async function runSlice(
  clients: number,
  seconds: number,
  operation: (client: number, sequence: number) => Promise<void>,
): Promise<Slice> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let sequence = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await operation(client, ++sequence);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { done: latencies.length, seconds: (performance.now() - started) / 1000, latencies };
}

async function pushOne(url: string, client: number, sequence: number): Promise<void> {
  const body = JSON.stringify({
    changeComment: `bench: client ${client}, push ${sequence}`,
    enableKeyCreation: true,
    data: [{ key: `bench.client${client}`, values: [{ context: '*;*;*', value: `r${sequence}` }] }],
  });
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(
      `POST ${url} answered ${response.status} ${response.headers.get('etag') ?? ''}: ${text.slice(0, 300)}`,
    );
}

/** 17 repositories of 1,000 keys, token-free push: `many/r00`…`many/r15` and `one/shared`. */
async function fixture(log: Log): Promise<string> {
  const reposRoot = join(makeTempFolder('concurrent'), 'repos');
  const seed = await createRepository(new RepositoryRegistry(reposRoot), {
    account: 'seed',
    name: 'seed',
    levels: [...CONTEXT_LEVELS],
    description: 'bench concurrent push fixture',
    tokenFreePush: true,
  });
  const result = await push(seed, new KeyWorkload(KEYS).seedPayload().request, BENCH_CALLER);
  if (result.kind !== 'applied') throw new Error(`seeding did not apply: ${JSON.stringify(result)}`);
  for (let i = 0; i < 16; i++)
    cpSync(seed.gitdir, join(reposRoot, 'many', `r${String(i).padStart(2, '0')}.git`), { recursive: true });
  cpSync(seed.gitdir, join(reposRoot, 'one', 'shared.git'), { recursive: true });
  log(`concurrent push fixture: 17 repositories of ${KEYS} keys`);
  return reposRoot;
}

export async function runConcurrentPushScenario(
  etcd: EtcdServer | undefined,
  plan: ConcurrentPlan,
  log: Log,
): Promise<ScenarioResult> {
  requireBuiltCli();
  const reposRoot = await fixture(log);
  const child = spawnServe(reposRoot);
  const withWorkers = spawnServe(reposRoot, ['--workers', 'auto']);
  try {
    const { url } = await listening(child);
    const { url: workersUrl } = await listening(withWorkers);
    const implementations: Array<{ name: string; operation: (client: number, sequence: number) => Promise<void> }> = [
      {
        name: INTO_MANY,
        operation: (client, sequence) =>
          pushOne(`${url}/rest/push/many/r${String(client).padStart(2, '0')}`, client, sequence),
      },
      { name: INTO_ONE, operation: (client, sequence) => pushOne(`${url}/rest/push/one/shared`, client, sequence) },
      {
        name: INTO_MANY_WORKERS,
        operation: (client, sequence) =>
          pushOne(`${workersUrl}/rest/push/many/r${String(client).padStart(2, '0')}`, client, sequence),
      },
      ...(etcd
        ? [
            {
              name: ETCD_CLIENTS,
              operation: (client: number, sequence: number) =>
                etcd.txn([{ key: `/concurrent/client${client}`, value: `${VALUE}${sequence}` }]),
            },
          ]
        : []),
    ];
    const slices = new Map<string, Slice[]>(implementations.map((i) => [i.name, []]));
    for (const implementation of implementations)
      await runSlice(plan.clients, plan.warmupSeconds, implementation.operation);
    for (let round = 0; round < plan.slices; round++) {
      for (let k = 0; k < implementations.length; k++) {
        const implementation = implementations[(round + k) % implementations.length];
        slices
          .get(implementation.name)!
          .push(await runSlice(plan.clients, plan.sliceSeconds, implementation.operation));
      }
    }
    const rates = (name: string) => slices.get(name)!.map((s) => s.done / s.seconds);
    const references = etcd ? [ETCD_CLIENTS] : [];
    const measurements: Measurement[] = implementations.map(({ name }) => {
      const mine = slices.get(name)!;
      const latencies = mine.flatMap((s) => s.latencies);
      const seconds = mine.reduce((sum, s) => sum + s.seconds, 0);
      const speedups =
        etcd && name !== ETCD_CLIENTS
          ? { [ETCD_CLIENTS]: median(rates(name).map((rate, i) => rate / rates(ETCD_CLIENTS)[i])) }
          : undefined;
      return {
        implementation: name,
        samples: latencies,
        summary: { ...summarize(latencies), opsPerSecond: latencies.length / seconds },
        ...(speedups ? { speedups } : {}),
      };
    });
    log(`concurrent pushes: ${plan.slices} rounds of ${plan.sliceSeconds} s slices`);
    return {
      id: CONCURRENT,
      title: `push 1 key, ${plan.clients} clients at once, repositories of ${KEYS.toLocaleString('en-US')} keys`,
      references,
      measurements,
      notes: [
        `\`cfghub serve\` in its default mode (one process) except the ${INTO_MANY_WORKERS} row (a second server on the same folder, \`--workers auto\`: ${coreWorkers()} workers, one per core), default logging; each client one HTTP push after another (keep-alive, Node's fetch), each push a commit changing the client's own key; ${plan.slices} slices of ${plan.sliceSeconds} s per implementation after ${plan.warmupSeconds} s of warm-up each, in rotating order; ops/s counts every client's pushes together`,
        etcd
          ? `etcd: ${plan.clients} clients each putting its own key (300-byte values) in one transaction after another, through the HTTP gateway`
          : 'etcd not installed (bench/install-tools.sh): no etcd row',
      ],
    };
  } finally {
    await stopChild(child);
    await stopChild(withWorkers);
  }
}
