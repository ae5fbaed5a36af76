/**
 * `GET /readyz`: 200 when the server can do its job, else 503 with the reasons —
 * the repositories folder missing, not a folder, or not writable; the disk (nearly) full;
 * start-up work not finished. A repository that cannot be read is named in the answer but does
 * not make the server unready: the others are served; under `--hide-private` none is named (its
 * settings cannot be read, so it may be private): the admin API and the log name them. (`/healthz` says only that the process answers.)
 *
 * Replication: a replica reports how it follows (`replica`: its status, see replicator.ts) and, as
 * `warnings`, a state it refuses to apply (another folder, a lower generation, too many removals)
 * or a branch the primary moved backwards: it stays ready, serving what it has. A repository whose
 * head breaks its schemas since a commit made with plain git is a warning too (schemas.md). A server a
 * replica reports a newer primary generation to is unready (see origin.ts).
 */
import * as fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutPaths } from '../../domain/reasons.js';
import { listRepositories } from '../../service/read/listing.js';
import type { HttpDeps } from '../deps.js';
import type { ReplicaStatus } from '../../service/replication/replicator.js';
import { sendJson } from '../answer/headers.js';

/** Below this much free space a push could fail half-way through writing its pack: not ready. */
export const MIN_FREE_BYTES = 64 * 1024 * 1024;

export interface Readiness {
  readonly status: 'ready' | 'unready';
  readonly problems: string[];
  readonly unreadable: { repository: string; error: string; message: string }[];
  /** What an operator must look at that does not stop the server serving (left out when nothing). */
  readonly warnings?: string[];
  /** On a read replica: how it follows its primary. */
  readonly replica?: ReplicaStatus;
}

/** Why the repositories folder cannot be served, or undefined. */
async function folderProblem(root: string): Promise<string | undefined> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(root);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? 'the repositories folder does not exist'
      : `the repositories folder cannot be read (${code})`;
  }
  if (!stat.isDirectory()) return 'the repositories folder is not a folder';
  try {
    await fs.promises.access(root, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    return 'the repositories folder is not writable';
  }
  try {
    const space = await fs.promises.statfs(root);
    const free = space.bavail * space.bsize;
    if (free < MIN_FREE_BYTES)
      return `the disk is full: ${Math.floor(free / (1024 * 1024))} MiB free, under ${MIN_FREE_BYTES / (1024 * 1024)} MiB`;
  } catch {
    // statfs unsupported here: free space is not checked
  }
  return undefined;
}

export async function readiness(deps: HttpDeps): Promise<Readiness> {
  const problems: string[] = [];
  const starting = deps.starting?.();
  if (starting) problems.push(starting);
  const folder = await folderProblem(deps.registry.root);
  if (folder) problems.push(folder);
  const staleGeneration = deps.parts.replication.problem();
  if (staleGeneration) problems.push(staleGeneration);
  const warnings: string[] = [];
  const replica = deps.replica?.status();
  if (replica?.refused)
    warnings.push(
      `replication refused: ${replica.refused}; serving what this replica has (start it with --accept-new-primary to follow this primary)`,
    );
  if (replica && replica.rewindsRefused.length > 0) {
    warnings.push(
      `replication refused: the primary moved the branch of ${replica.rewindsRefused.join(', ')} backwards; this replica keeps its head (start it with --accept-new-primary to follow)`,
    );
  }
  warnings.push(...outsideCommitWarnings(deps));
  const unreadable: Readiness['unreadable'] = [];
  // Under --hide-private a repository that cannot be read counts as private (service/access/accessPolicy.ts): not named to anyone here.
  if (!folder && !deps.hidePrivate) {
    const listing = await listRepositories(deps.registry, deps.tokens, () => undefined);
    for (const record of listing.unreadable) {
      unreadable.push({
        repository: `${record.account}/${record.name}`,
        error: record.error,
        message: withoutPaths(record.message),
      });
    }
  }
  return {
    status: problems.length ? 'unready' : 'ready',
    problems,
    unreadable,
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(replica ? { replica } : {}),
  };
}

/**
 * A repository whose head breaks its schemas since a commit made outside cfghub: served as it is
 * (plain git cannot be refused), named so that someone mends it. Under --hide-private, counted.
 */
function outsideCommitWarnings(deps: HttpDeps): string[] {
  const watch = deps.parts.outsideCommits;
  watch.watchAll();
  const broken = watch.broken();
  if (broken.length === 0) return [];
  if (deps.hidePrivate)
    return [`${broken.length} repositories break their schemas since commits made outside cfghub (see the log)`];
  return broken.map(
    (b) =>
      `${b.repository} breaks its schemas since commit ${b.commit}, made outside cfghub (${b.breaks.count} ${b.breaks.count === 1 ? 'break' : 'breaks'} at its head): ${b.breaks.problem ?? b.breaks.breaks[0]}`,
  );
}

export async function answerReadiness(deps: HttpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const state = await readiness(deps);
  sendJson(req, res, state.status === 'ready' ? 200 : 503, state);
}
