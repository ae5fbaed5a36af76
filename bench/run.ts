/**
 * `npm run bench [-- --quick] [-- --only NAME,…] [-- --suite-seconds N]`: cfghub's speed figures and
 * their targets, measured in one run on one machine, each against its references in the same run.
 * `--suite-seconds N` gives `npm test`'s time on this machine (measured by the suite's own run, not
 * here), stated beside the targets.
 *
 * 1. push: 1 and 100 keys into repositories of 1,000 and 10,000 keys: cfghub in-process, cfghub
 *    over HTTP, git plumbing and an etcd transaction, interleaved round by round.
 * 2. concurrent: 16 clients pushing at once into 16 repositories and into one, against etcd.
 * 3. ha: a push synchronously replicated to 2 members by the HA mode's leader, beside the same push
 *    on a plain server and etcd's transaction on the cluster's three-member etcd, 1 and 16 clients.
 * 4. listing: 1,000 repositories over HTTP, warm, right after a push, and cold.
 * 5. pull: throughput of a 1,000-key context with 1 and 16 connections (wrk, else a Node client)
 *    against the same bytes from the same server, from a bare node:http process, and an etcd
 *    range read of the same values.
 * 6. restart: the first pull of a 10,000-key repository after `cfghub serve` restarts.
 * 7. memory: resident memory of `cfghub serve` with 100 repositories of 1,000 keys loaded.
 * 8. history: the last 50 commits of a repository with 10,000 commits, cold, paging
 *    back, right after a push and warm.
 * 9. clone: `git clone` over HTTP of a 10,000-key repository with 1,000 commits against a
 *    clone from its folder on disk.
 * 10. watch: 10,000 watchers held at once, woken by pushes that change one context and every
 *    context, against etcd's watch.
 *
 * etcd and wrk come from bench/install-tools.sh; without etcd its rows are skipped, never faked.
 *
 * Prints one table to stdout (progress goes to stderr), writes docs/performance.md whole, and
 * keeps every raw sample in bench/results/ (ignored by git) for anyone who doubts a percentile.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { killChildren } from './childProcesses.js';
import { serveInChild } from './serveProcess.js';
import { listingFixture, preparePushFixture, prepareReadFixture, type Log } from './fixtures.js';
import { describeMachine, type Machine } from './machine.js';
import { planFromArgs, type Plan } from './plan.js';
import { writePerformancePage } from './performancePage.js';
import { performanceFigures, terminalReport } from './report.js';
import type { ScenarioResult } from './results.js';
import { EtcdServer } from './etcd.js';
import { runCloneScenario } from './scenarios/clone.js';
import { runConcurrentPushScenario } from './scenarios/concurrentPush.js';
import { prepareHistoryFixture } from './historyFixture.js';
import { runHaPushScenario } from './scenarios/haPush.js';
import { runHistoryScenario } from './scenarios/history.js';
import { runListingScenario } from './scenarios/listing.js';
import { runMemoryScenario } from './scenarios/memory.js';
import { runPullScenario } from './scenarios/pull.js';
import { runPushScenario } from './scenarios/push.js';
import { runRestartScenario } from './scenarios/restart.js';
import { runWatchScenario } from './scenarios/watch.js';
import { checkTargets, type TargetCheck } from './targets.js';
import { removeTempFolders } from './tempFolders.js';

const log: Log = (message) => process.stderr.write(`[bench] ${message}\n`);

async function measure(plan: Plan): Promise<ScenarioResult[]> {
  const needsEtcd = plan.only.has('push') || plan.only.has('concurrent') || plan.only.has('pull');
  const etcd = needsEtcd ? await EtcdServer.start(log) : undefined;
  try {
    return await measureWith(plan, etcd);
  } finally {
    await etcd?.close();
  }
}

async function measureWith(plan: Plan, etcd: EtcdServer | undefined): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const keyCount of plan.only.has('push') ? plan.keyCounts : []) {
    const fixture = await preparePushFixture(keyCount, log);
    try {
      // Over HTTP the server is `cfghub serve` in its own process: a client in this process
      // would add its own CPU time to every push it times (about 2 ms, measured on 2 cores).
      const server = await serveInChild(fixture.reposRoot);
      try {
        for (const pushes of plan.pushes)
          results.push(await runPushScenario(fixture, server, etcd, pushes.keysPerPush, pushes, log));
      } finally {
        await server.close();
      }
    } finally {
      await fixture.close();
    }
  }
  if (plan.only.has('concurrent')) results.push(await runConcurrentPushScenario(etcd, plan.concurrent, log));
  if (plan.only.has('ha')) results.push(...(await runHaPushScenario(plan.ha, log)));
  if (plan.only.has('listing')) {
    const listing = await listingFixture(log);
    log(`listing fixture ${listing.reused ? 'reused from' : 'built in'} ${listing.reposRoot}`);
    results.push(...(await runListingScenario(listing.reposRoot, plan.listing, log)));
  }
  if (plan.only.has('pull')) {
    const pull = await prepareReadFixture(plan.pull.keyCount, { valueLength: plan.pull.valueLength }, log);
    results.push(...(await runPullScenario(pull, etcd, plan.pull, log)));
  }
  if (plan.only.has('restart')) {
    // The push workload's value length: the restart's figure is about parsing 10,000 keys, not bulk.
    const restart = await prepareReadFixture(plan.restart.keyCount, {}, log);
    results.push(...(await runRestartScenario(restart, plan.restart, log)));
  }
  if (plan.only.has('memory')) {
    const memory = await prepareReadFixture(plan.memory.keyCount, {}, log);
    results.push(...(await runMemoryScenario(memory, plan.memory, log)));
  }
  if (plan.only.has('history')) {
    const history = await prepareHistoryFixture(plan.history.commits, log);
    results.push(...(await runHistoryScenario(history, plan.history, log)));
  }
  if (plan.only.has('clone')) results.push(await runCloneScenario(plan.clone, log));
  if (plan.only.has('watch')) results.push(...(await runWatchScenario(plan.watch, log)));
  return results;
}

function saveRawResults(
  results: readonly ScenarioResult[],
  machine: Machine,
  plan: Plan,
  targets: readonly TargetCheck[],
): string {
  const folder = fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(folder, { recursive: true });
  const path = `${folder}${new Date().toISOString().replace(/[:.]/g, '-')}-${plan.mode}.json`;
  writeFileSync(path, `${JSON.stringify({ machine, plan, targets, results }, null, 2)}\n`);
  return path;
}

async function main(): Promise<void> {
  const plan = planFromArgs(process.argv.slice(2));
  // Neither Ctrl-C nor a crash may leave gigabytes of repositories in the temporary folder, nor a
  // server or load generator running: 'exit' runs even after an uncaught exception, and the
  // signals are turned into an exit. Children go first: a server may hold files in the folders.
  process.once('exit', () => {
    killChildren();
    removeTempFolders();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  const started = performance.now();
  let results: ScenarioResult[];
  try {
    results = await measure(plan);
  } finally {
    removeTempFolders();
  }
  const machine = await describeMachine();
  const targets = checkTargets(results, { suiteSeconds: plan.suiteSeconds });
  process.stdout.write(terminalReport(results, machine, plan, targets));
  if (!plan.partial) writePerformancePage(performanceFigures(results, machine, plan, targets));
  const raw = saveRawResults(results, machine, plan, targets);
  const page = plan.partial ? 'docs/performance.md left alone (--only)' : 'docs/performance.md written';
  log(`${page}; raw samples in ${raw}; ${plan.mode} run took ${Math.round((performance.now() - started) / 1000)} s`);
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
