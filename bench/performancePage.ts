/**
 * Writes docs/performance.md, the performance report, whole: `npm run bench` (a full run) replaces
 * its entire contents with the page made here from the run's figures. Nothing in the page is
 * written by hand; the method and the targets are stated here, the figures come from the run.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PERFORMANCE_PAGE = fileURLToPath(new URL('../docs/performance.md', import.meta.url));

const INTRO = `# Performance

cfghub's speed, measured by \`npm run bench\` on one machine in one run, each figure beside its
references measured in the same run: git's plumbing doing the same commit, etcd doing the same
transaction, range read or watch, and for pulls the same bytes served by a bare \`node:http\`
process. This page is written by the bench (a full run replaces it whole); do not edit it by hand.

How to read it: compare ratios, not times. The ratios are taken side by side in one run, so they
hold across machines far better than milliseconds do; the times depend on the machine, its disk
and its load. Each target below says whether this run met it.

How to run it: \`bench/install-tools.sh\` installs etcd and wrk (without etcd, its rows are
skipped, never faked), then \`npm run bench\` (\`-- --quick\` for a short run, \`-- --only
push,pull\` for some scenarios; a partial run prints its figures and leaves this page alone;
\`-- --suite-seconds N\` states \`npm test\`'s time on the machine, measured by the suite's own
run, beside the targets). Raw samples are kept in \`bench/results/\`. A target this run did not
meet is followed by what the profiles of record show and what meeting it would take.

Other measurements: the worst allowed requests (\`npm run bench:worst\`,
[their page](performance-worst-case.md)), replication lag (\`bench/replication.ts\`, see
[read replicas](operations/replicas.md)) and the HA mode's failovers (\`bench/ha.ts\`, see
[high availability](operations/ha.md)), whose replicated pushes this page measures too.`;

/** The whole page, from the generated figures (environment, method, table, targets, notes). */
export function performancePage(figures: string): string {
  return `${INTRO}\n\n## This run\n\n${figures.trimEnd()}\n`;
}

/** Replaces docs/performance.md in one go (temporary file and rename, never a half-written page). */
export function writePerformancePage(figures: string, path = PERFORMANCE_PAGE): void {
  const temporary = `${path}.bench-${process.pid}`;
  writeFileSync(temporary, performancePage(figures));
  renameSync(temporary, path);
}
