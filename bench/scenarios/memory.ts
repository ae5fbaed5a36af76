/**
 * Resident memory of `cfghub serve` with 100 repositories of 1,000 keys loaded (issue 4): one
 * repository is seeded and copied 99 times, the real server is started as a user starts it, every
 * repository is pulled once (its snapshot parsed and its answer cached) and the listing read once;
 * then the process's resident set is read from /proc.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { stopChild } from '../childProcesses.js';
import type { Log, ReadFixture } from '../fixtures.js';
import type { MemoryPlan } from '../plan.js';
import type { ScenarioResult } from '../results.js';
import { listening, requireBuiltCli, residentMiBOf, spawnServe } from '../serveProcess.js';
import { getText } from '../server.js';

export const MEMORY = 'memory';

export async function runMemoryScenario(fixture: ReadFixture, plan: MemoryPlan, log: Log): Promise<ScenarioResult> {
  requireBuiltCli();
  const source = join(fixture.reposRoot, fixture.account, `${fixture.repository}.git`);
  const names = Array.from({ length: plan.repositories }, (_, i) => `repo${String(i).padStart(3, '0')}`);
  for (const name of names) cpSync(source, join(fixture.reposRoot, 'memory', `${name}.git`), { recursive: true });
  const child = spawnServe(fixture.reposRoot);
  try {
    const { url } = await listening(child);
    const atStart = residentMiBOf(child.pid!);
    for (const name of names) {
      const response = await fetch(`${url}/rest/pull/memory/${name}`, { headers: { Context: fixture.context.text } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`pull of memory/${name} answered ${response.status}: ${body.slice(0, 300)}`);
    }
    const listed = (JSON.parse(await getText(`${url}/rest/info/all`)) as unknown[]).length;
    if (listed !== names.length + 1) throw new Error(`the listing showed ${listed} repositories, expected ${names.length + 1}`);
    const loaded = residentMiBOf(child.pid!);
    log(`memory: ${plan.repositories} repositories of ${fixture.keyCount} keys loaded, RSS ${loaded} MiB (${atStart} MiB at start)`);
    return {
      id: MEMORY,
      title: `resident memory, ${plan.repositories} repositories × ${fixture.keyCount.toLocaleString('en-US')} keys`,
      measurements: [],
      residentMiB: loaded,
      notes: [
        `\`cfghub serve\` as a user starts it: RSS ${atStart} MiB once listening, ${loaded} MiB after one pull of each of the ${plan.repositories} repositories (\`Context: ${fixture.context.text}\`, ${fixture.context.resolvedKeys} keys resolved each, snapshot parsed and answer cached) and one listing; VmRSS from /proc`,
      ],
    };
  } finally {
    await stopChild(child);
  }
}
