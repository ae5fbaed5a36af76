/**
 * A push synchronously replicated by the HA mode, beside the same push on a plain server and etcd's
 * transaction on the cluster's own three-member etcd, in one run: 1 client, one push after another,
 * and 16 clients pushing without pause (bench/haPush.ts, which bench/ha.ts also runs, with its
 * failovers). Without etcd there is no cluster: the scenario reports why and has no rows.
 */
import { DEFAULT_LEASE_SECONDS } from '../../src/service/ha/keyspace.js';
import type { HaCluster } from '../../test/support/haCluster.js';
import { etcdVersion } from '../etcd.js';
import type { Log } from '../fixtures.js';
import {
  ETCD_TXN_3,
  PLAIN_PUSH,
  PlainServer,
  pushRounds,
  REPLICATED_PUSH,
  startBenchCluster,
  type HaPushPlan,
} from '../haPush.js';
import type { Measurement, ScenarioResult } from '../results.js';
import { requireBuiltCli } from '../serveProcess.js';
import { median, pairedSpeedup, summarize } from '../stats.js';

export const HA_PUSH_ONE = 'ha-push-c1';
export const HA_PUSH_MANY = 'ha-push-concurrent';
export { ETCD_TXN_3, PLAIN_PUSH, REPLICATED_PUSH };

/** What each implementation is compared with in the table: etcd for both, the plain push for the replicated one. */
const COMPARED: Readonly<Record<string, readonly string[]>> = {
  [PLAIN_PUSH]: [ETCD_TXN_3],
  [REPLICATED_PUSH]: [PLAIN_PUSH, ETCD_TXN_3],
  [ETCD_TXN_3]: [],
};

function titles(plan: HaPushPlan): { one: string; many: string } {
  return {
    one: 'push 1 key, 1 client, HA mode beside a plain server',
    many: `push 1 key, ${plan.clients} clients at once, HA mode beside a plain server`,
  };
}

export async function runHaPushScenario(plan: HaPushPlan, log: Log): Promise<ScenarioResult[]> {
  const title = titles(plan);
  const skipped = (why: string): ScenarioResult[] => {
    log(`HA pushes skipped: ${why}`);
    return [
      { id: HA_PUSH_ONE, title: title.one, measurements: [], notes: [why] },
      { id: HA_PUSH_MANY, title: title.many, measurements: [], notes: [why] },
    ];
  };
  const version = await etcdVersion();
  if (!version)
    return skipped("etcd not installed (bench/install-tools.sh installs Debian's etcd-server): no HA cluster, no rows");
  requireBuiltCli();
  // Eleven processes on one machine: a cluster that fails to start or a push that fails is
  // reported as the reason for these rows' absence rather than ending the run without its page.
  try {
    return await measure(plan, version, title, log);
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    // The page is committed: no path of this machine goes into it.
    return skipped(`not measured: the HA cluster failed (${message.replace(/(^|[\s('"])\/[^\s'")]+/g, '$1…')})`);
  }
}

async function measure(
  plan: HaPushPlan,
  version: string,
  title: { one: string; many: string },
  log: Log,
): Promise<ScenarioResult[]> {
  let plain: PlainServer | undefined;
  let cluster: HaCluster | undefined;
  try {
    plain = await PlainServer.start();
    log(`HA pushes: a three-member etcd and three cluster nodes (${DEFAULT_LEASE_SECONDS} s lease)`);
    cluster = await startBenchCluster(DEFAULT_LEASE_SECONDS);
    const rounds = await pushRounds(plain, cluster, plan, log);
    const method = `${plan.rounds} rounds, each implementation in turn per round (rotating order): ${plan.sequential} pushes of 1 client one after another, then ${plan.clients} clients pushing without pause for ${plan.concurrentSeconds} s, each client its own key of one repository; ${REPLICATED_PUSH}: three \`cfghub serve --cluster\` nodes (lease ${DEFAULT_LEASE_SECONDS} s, default logging) on a three-member etcd ${version}, the leader answering a push once both other members hold it on disk (sync set of 2); ${PLAIN_PUSH}: one \`cfghub serve\` on a folder of its own; ${ETCD_TXN_3}: a put of the client's key in \`POST /v3/kv/txn\` on the cluster's own etcd; all on one machine's loopback, Node's fetch`;
    const one: Measurement[] = Object.entries(rounds.one).map(([implementation, perRound]) => {
      const mine = perRound.map(median);
      const speedups = Object.fromEntries(
        COMPARED[implementation].map((reference) => [
          reference,
          pairedSpeedup(rounds.one[reference].map(median), mine),
        ]),
      );
      return {
        implementation,
        samples: perRound.flat(),
        summary: summarize(perRound.flat()),
        ...(COMPARED[implementation].length ? { speedups } : {}),
      };
    });
    const many: Measurement[] = Object.entries(rounds.many).map(([implementation, perRound]) => {
      const rates = (name: string) => rounds.many[name].map((round) => round.perSecond);
      const speedups = Object.fromEntries(
        COMPARED[implementation].map((reference) => [
          reference,
          median(rates(implementation).map((rate, i) => rate / rates(reference)[i])),
        ]),
      );
      const latencies = perRound.flatMap((round) => round.latencies);
      const seconds = perRound.reduce((sum, round) => sum + round.seconds, 0);
      return {
        implementation,
        samples: latencies,
        summary: { ...summarize(latencies), opsPerSecond: latencies.length / seconds },
        ...(COMPARED[implementation].length ? { speedups } : {}),
      };
    });
    return [
      {
        id: HA_PUSH_ONE,
        title: title.one,
        references: [ETCD_TXN_3],
        measurements: one,
        notes: [
          method,
          'ratio: per round, the median push of the reference over the median push of this implementation, then the median over rounds',
        ],
      },
      {
        id: HA_PUSH_MANY,
        title: title.many,
        references: [ETCD_TXN_3],
        measurements: many,
        notes: [
          `ratio: per round, this implementation's pushes per second over the reference's, then the median over rounds; ops/s counts every client's pushes together`,
        ],
      },
    ];
  } finally {
    await plain?.close();
    await cluster?.close();
  }
}
