/**
 * Resident memory of `cfghub serve` with 100 repositories of 1,000 keys loaded: one
 * repository is seeded and copied 99 times, the real server is started as a user starts it, every
 * repository is pulled once (its snapshot parsed and its answer cached) and the listing read once;
 * then the process's resident set is read from /proc.
 *
 * Twice: with `--workers 1` (one process), and with `--workers auto` (one per core),
 * one worker per core, where each repository is pulled once through every worker (each pull on a
 * connection of its own, which node:cluster hands to the next worker) as polling clients would
 * have it after a while; the figure is the primary's and the workers' resident memory together,
 * each resident page counted once (residentPages.ts: the node binary's code, resident in every
 * process, counted once, not once per process as a sum of RSS does), and the notes give each
 * process's RSS and their sum.
 */
import { cpSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { coreWorkers } from '../../src/server/serveConfig.js';
import { stopChild } from '../childProcesses.js';
import type { Log, ReadFixture } from '../fixtures.js';
import type { MemoryPlan } from '../plan.js';
import type { ScenarioResult } from '../results.js';
import { listening, requireBuiltCli, residentOfTree, spawnServe } from '../serveProcess.js';
import { residentPagesOf, type ResidentPages } from '../residentPages.js';
import { getText } from '../server.js';

export const MEMORY = 'memory';
export const MEMORY_WORKERS = 'memory-workers';

/** A GET on a connection of its own (`Connection: close`); its status. */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...headers, Connection: 'close' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const mib = (kiB: number) => Math.round(kiB / 1024);

async function measure(
  fixture: ReadFixture,
  names: readonly string[],
  workers: number,
  log: Log,
): Promise<{ atStart: number[]; loaded: number[]; pages: ResidentPages }> {
  const child = spawnServe(fixture.reposRoot, ['--workers', String(workers)]);
  try {
    const { url } = await listening(child);
    const atStart = residentOfTree(child.pid!).map((p) => p.kiB);
    for (const name of names) {
      for (let i = 0; i < workers; i++) {
        const status = await getOnNewConnection(`${url}/rest/pull/memory/${name}`, { Context: fixture.context.text });
        if (status !== 200) throw new Error(`pull of memory/${name} answered ${status}`);
      }
    }
    const listed = (JSON.parse(await getText(`${url}/rest/info/all`)) as unknown[]).length;
    if (listed !== names.length + 1)
      throw new Error(`the listing showed ${listed} repositories, expected ${names.length + 1}`);
    const tree = residentOfTree(child.pid!);
    const loaded = tree.map((p) => p.kiB);
    const pages = residentPagesOf(tree.map((p) => p.pid));
    log(
      `memory, --workers ${workers}: ${names.length} repositories of ${fixture.keyCount} keys loaded, ${mib(pages.uniqueKiB)} MiB resident (each page once${pages.framesKnown ? '' : ': frames unknown, pages of each process summed'}); RSS ${mib(loaded.reduce((a, b) => a + b, 0))} MiB summed (${loaded.map(mib).join(' + ')})`,
    );
    return { atStart, loaded, pages };
  } finally {
    await stopChild(child);
  }
}

/** How the figure was counted (residentPages.ts). */
function pagesNote(pages: ResidentPages): string {
  return pages.framesKnown
    ? `the figure counts each resident page once (distinct frames of /proc/<pid>/pagemap): ${mib(pages.uniqueKiB)} MiB, against ${mib(pages.summedKiB)} MiB of pages summed process by process`
    : `frame numbers could not be read (not root), so the figure sums each process's resident pages: ${mib(pages.summedKiB)} MiB`;
}

export async function runMemoryScenario(fixture: ReadFixture, plan: MemoryPlan, log: Log): Promise<ScenarioResult[]> {
  requireBuiltCli();
  const source = join(fixture.reposRoot, fixture.account, `${fixture.repository}.git`);
  const names = Array.from({ length: plan.repositories }, (_, i) => `repo${String(i).padStart(3, '0')}`);
  for (const name of names) cpSync(source, join(fixture.reposRoot, 'memory', `${name}.git`), { recursive: true });
  const what = `${plan.repositories} repositories × ${fixture.keyCount.toLocaleString('en-US')} keys`;
  const pulled = `\`Context: ${fixture.context.text}\`, ${fixture.context.resolvedKeys} keys resolved each, snapshot parsed and answer cached`;

  const one = await measure(fixture, names, 1, log);
  const single: ScenarioResult = {
    id: MEMORY,
    title: `resident memory, ${what}, --workers 1`,
    measurements: [],
    residentMiB: mib(one.pages.uniqueKiB),
    notes: [
      `\`cfghub serve --workers 1\` (one process): RSS ${mib(one.atStart[0])} MiB once listening, ${mib(one.loaded[0])} MiB after one pull of each of the ${plan.repositories} repositories (${pulled}) and one listing; VmRSS from /proc; ${pagesNote(one.pages)}`,
    ],
  };
  const workers = coreWorkers();
  if (workers === 1) return [single];
  const many = await measure(fixture, names, workers, log);
  const total = (kiB: number[]) => mib(kiB.reduce((a, b) => a + b, 0));
  const parts = (kiB: number[]) => `primary ${mib(kiB[0])} MiB, workers ${kiB.slice(1).map(mib).join(', ')} MiB`;
  return [
    single,
    {
      id: MEMORY_WORKERS,
      title: `resident memory, ${what}, serve --workers auto (${workers} workers)`,
      measurements: [],
      residentMiB: mib(many.pages.uniqueKiB),
      notes: [
        `\`cfghub serve\` with \`--workers auto\` (${workers} workers), primary and workers together: RSS ${total(many.atStart)} MiB once listening (${parts(many.atStart)}), ${total(many.loaded)} MiB summed (${parts(many.loaded)}) after ${workers} pulls of each of the ${plan.repositories} repositories, each on a connection of its own so that every worker read every repository (${pulled}), and one listing; ${pagesNote(many.pages)}`,
      ],
    },
  ];
}
