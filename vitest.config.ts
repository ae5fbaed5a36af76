import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files whose measures the rest of the suite would disturb: the event loop's pieces of work (in
 * CPU time, checked in every run), a failover and a hostile primary's prompt reads (their
 * wall-clock bounds are checked by `npm run test:timed` only, test/support/wallClock.ts). They run
 * after the others, one at a time, so that no other test file of the run competes with them.
 */
const TIMED = [
  'test/e2e/limits/event-loop-slices.test.ts',
  'test/e2e/ha/cluster.test.ts',
  'test/e2e/replication/replication-hostile-primary.test.ts',
];

/**
 * The other files run side by side, one per core and at least two: a file spends much of its time
 * in child processes (the `cfghub` command, git, a server process) and waiting on them, so on a
 * 2-core machine one file at a time (vitest's default there) leaves a core idle.
 */
const SIDE_BY_SIDE = Math.max(2, availableParallelism());

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Fetch in tests never reuses a connection that may have idled out while a test was blocked.
    setupFiles: ['test/support/freshConnections.ts'],
    // The JSON report lets .ci/run print a plain "N passed, N failed" closing line.
    reporters: ['default', ['json', { outputFile: 'dist/test-results.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'side-by-side',
          include: ['test/**/*.test.ts'],
          exclude: TIMED,
          maxWorkers: SIDE_BY_SIDE,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'timed', include: TIMED, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
