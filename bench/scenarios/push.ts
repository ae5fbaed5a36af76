/**
 * Push of K keys into a repository of N keys, durable, one client, side by side: cfghub
 * in-process (`push()`), cfghub over HTTP, and two references: git plumbing making the same
 * commit, and one etcd transaction putting the same key documents (when etcd is installed).
 *
 * Rounds are interleaved: each round makes one change set and every implementation pushes it
 * once, in an order that rotates from round to round, so machine noise (disk, scheduler, a
 * neighbour) hits all of them alike and no implementation always runs right after another.
 * After each round the in-process tree must equal git's; at the end the HTTP tree must too.
 */
import { push } from '../../src/service/write/push.js';
import type { EtcdServer } from '../etcd.js';
import { BENCH_ACCOUNT, BENCH_CALLER, type Log, type PushFixture } from '../fixtures.js';
import { runGit } from '../gitPlumbing.js';
import type { RoundPlan } from '../plan.js';
import { fsyncFloor, residentMiB } from '../probes.js';
import type { Measurement, ScenarioResult } from '../results.js';
import type { BenchServer } from '../server.js';
import { postPush } from '../server.js';
import { pairedSpeedup, summarize, type Summary } from '../stats.js';
import type { ChangeSet } from '../workload.js';

export const IN_PROCESS = 'cfghub in-process';
export const OVER_HTTP = 'cfghub HTTP';
export const GIT_PLUMBING = 'git plumbing';
export const ETCD_TXN = 'etcd txn';

interface Pusher {
  readonly name: string;
  /** Pushes the change; resolves to how long the push took, in milliseconds. */
  push(change: ChangeSet): Promise<number>;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

export function pushScenarioId(keysPerPush: number, keyCount: number): string {
  return `push-k${keysPerPush}-n${keyCount}`;
}

/** The etcd key of a key document: the document's path in git, under the scenario's own prefix. */
function etcdKey(prefix: string, path: string): string {
  return `${prefix}${path}`;
}

function pushers(
  fixture: PushFixture,
  server: BenchServer,
  gitTrees: string[],
  etcd: EtcdServer | undefined,
  etcdPrefix: string,
): Pusher[] {
  const url = `${server.url}/rest/push/${BENCH_ACCOUNT}/${fixture.httpRepository}`;
  const etcdPusher: Pusher[] = etcd
    ? [
        {
          name: ETCD_TXN,
          push: (change) =>
            timed(() => etcd.txn(change.files.map((f) => ({ key: etcdKey(etcdPrefix, f.path), value: f.content })))),
        },
      ]
    : [];
  return [
    ...etcdPusher,
    {
      name: IN_PROCESS,
      push: (change) =>
        timed(async () => {
          const result = await push(fixture.inProcess, change.payload.request, BENCH_CALLER);
          if (result.kind !== 'applied') throw new Error(`in-process push did not apply: ${JSON.stringify(result)}`);
        }),
    },
    {
      name: OVER_HTTP,
      push: (change) => timed(() => postPush(url, change.payload.body)),
    },
    {
      name: GIT_PLUMBING,
      // Timed inside the reference's own process (see gitPlumbingProcess.ts): IPC is not git's cost.
      push: async (change) => {
        const { tree, ms } = await fixture.reference.push(change.files, change.message);
        gitTrees.push(tree);
        return ms;
      },
    },
  ];
}

function floor(summary: Summary): string {
  return `p50 ${summary.p50.toFixed(2)} ms (p99 ${summary.p99.toFixed(2)})`;
}

export async function runPushScenario(
  fixture: PushFixture,
  server: BenchServer,
  etcd: EtcdServer | undefined,
  keysPerPush: number,
  plan: RoundPlan,
  log: Log,
): Promise<ScenarioResult> {
  const fsync = await fsyncFloor(fixture.folder);
  const spawnCost = await fixture.reference.spawnFloor();
  const gitTrees: string[] = [];
  // etcd holds the same documents as the repository before the first round, under a prefix of
  // this scenario's own.
  const etcdPrefix = `/push-k${keysPerPush}-n${fixture.keyCount}/`;
  await etcd?.load(fixture.workload.allFiles().map((f) => ({ key: etcdKey(etcdPrefix, f.path), value: f.content })));
  const implementations = pushers(fixture, server, gitTrees, etcd, etcdPrefix);
  const samples = new Map<string, number[]>(implementations.map((p) => [p.name, []]));
  const total = plan.warmup + plan.rounds;
  const started = performance.now();
  for (let round = 0; round < total; round++) {
    const change = fixture.workload.nextChange(keysPerPush);
    for (let i = 0; i < implementations.length; i++) {
      const implementation = implementations[(round + i) % implementations.length];
      const elapsed = await implementation.push(change);
      if (round >= plan.warmup) samples.get(implementation.name)!.push(elapsed);
    }
    const inProcessTree = (await fixture.inProcess.headSnapshot()).treeId;
    if (inProcessTree !== gitTrees[gitTrees.length - 1]) {
      throw new Error(
        `round ${round}: cfghub wrote tree ${inProcessTree}, git plumbing ${gitTrees[gitTrees.length - 1]}: not the same commit content`,
      );
    }
  }
  const httpTree = (await runGit(['--git-dir', fixture.httpGitdir, 'rev-parse', 'refs/heads/main^{tree}'])).trim();
  if (httpTree !== gitTrees[gitTrees.length - 1])
    throw new Error(`the HTTP repository ended at tree ${httpTree}, git plumbing at ${gitTrees[gitTrees.length - 1]}`);

  const references = [GIT_PLUMBING, ...(etcd ? [ETCD_TXN] : [])];
  const measurements: Measurement[] = implementations.map(({ name }) => {
    const mine = samples.get(name)!;
    // Over HTTP is also weighed against the same push in-process: what HTTP alone costs.
    const against = name === OVER_HTTP ? [...references, IN_PROCESS] : references;
    const speedups = references.includes(name)
      ? undefined
      : Object.fromEntries(against.map((reference) => [reference, pairedSpeedup(samples.get(reference)!, mine)]));
    return { implementation: name, samples: mine, summary: summarize(mine), ...(speedups ? { speedups } : {}) };
  });
  log(
    `push ${keysPerPush} key(s) into ${fixture.keyCount}: ${total} rounds in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  return {
    id: pushScenarioId(keysPerPush, fixture.keyCount),
    title: `push ${keysPerPush} key${keysPerPush === 1 ? '' : 's'} into ${fixture.keyCount.toLocaleString('en-US')} keys`,
    references,
    measurements,
    notes: [
      `${plan.rounds} timed rounds after ${plan.warmup} warm-up; in-process tree equal to git's after every round, HTTP tree equal at the end${etcd ? `; etcd: one transaction per round putting the changed keys' YAML documents (the bytes cfghub and git write) under their paths, into an etcd holding all ${fixture.keyCount.toLocaleString('en-US')} documents` : '; etcd not installed: no etcd row'}`,
      `${OVER_HTTP}: \`cfghub serve\` in its own process (default logging), one client in this process posting one push after another (Node's fetch, keep-alive)`,
      `floors just before: write+fsync of a 300-byte file ${floor(fsync)}; spawning git from the reference's process (RSS ${spawnCost.residentMiB} MiB) ${floor(spawnCost.summary)}, 5 spawns per plumbing push; this process's RSS ${residentMiB()} MiB`,
    ],
  };
}
