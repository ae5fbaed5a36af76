/**
 * What every serving process sets up the same way, whether it serves alone, as a cluster's primary
 * (clusterPrimary.ts) or as a worker (clusterWorker.ts): the journals of processes that are gone
 * replayed and logged, and an uncaught exception logged (without paths) before the exit.
 */
import type { Logger } from 'pino';
import { withoutPaths } from '../domain/reasons.js';
import { replayJournals } from '../disk/journal/journalReplay.js';

/** Replays the push journals of processes that are gone (journalReplay.ts), logging what it found; at start, and when a worker dies. */
export async function replayJournalsLogged(reposDir: string, logger: Logger): Promise<void> {
  for (const finding of await replayJournals(reposDir)) {
    const level = finding.problem || finding.refMoved || finding.packsRestored > 0 ? 'warn' : 'info';
    logger[level]({ event: 'journal-replayed', ...finding });
  }
}

export function exitOnUncaughtException(logger: Logger): void {
  process.on('uncaughtException', (error) => {
    logger.fatal({ event: 'uncaught-exception', problem: withoutPaths(`${error.name}: ${error.message}`) });
    process.exit(1);
  });
}
