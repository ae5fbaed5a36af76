/**
 * Commits made outside cfghub (plain git pushed into the bare repository) are served as they are:
 * plain git cannot be refused. The schema check of every write is made on them afterwards, so a
 * commit that breaks the repository's schemas is flagged rather than silently accepted:
 * - in the history, each such commit carries `schemaBreaks` (what it broke, against its first
 *   parent, as a write's refusal would name it): `outsideCommitFlag`, made once per commit;
 * - while a repository's head breaks its schemas after such a commit, `/readyz` names it among its
 *   `warnings` (the server stays ready: the other repositories, and this one, are served) and the
 *   `cfghub_schema_broken_repositories` gauge counts it; `cfghub_schema_breaking_commits_total`
 *   counts the commits flagged.
 *
 * A commit made outside cfghub is one whose author is not cfghub's own signature: every write of
 * the server and of the command line is checked before it is made, so only the others need this.
 *
 * Bounded: the check runs in time slices (lib/timeSlices.ts), a few milliseconds of work at a
 * time; a head that moves by many commits at once has its newest MAX_COMMITS_AUDITED commits
 * flagged, and the head itself is always weighed.
 */
import type { Logger } from 'pino';
import { isRepositoryDamage } from '../../domain/errors.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { commitInfo } from '../../layout/timeTravel.js';
import { CacheSlot } from '../../layout/repositoryCaches.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { signature } from '../write/commit.js';
import { snapshotChanges } from '../write/writeGuard.js';
import { describeViolation, schemaCheckSteps, type SchemaCheck } from './schemaCheck.js';

/** How long after a server starts it begins to weigh the heads of every repository (its first requests go first). */
export const FIRST_AUDIT_DELAY_MS = 10_000;

/** Commits weighed, newest first, when the head moves by many at once. */
export const MAX_COMMITS_AUDITED = 100;

/** What a commit made outside cfghub broke. */
export interface SchemaBreaks {
  /** Breaks found (all of them). */
  readonly count: number;
  /** The first breaks, as a refusal names them: the key or file, the context and the entry of schemas.yaml. */
  readonly breaks: readonly string[];
  /** When the check could not be made (a document that does not compile, too many contexts): why. */
  readonly problem?: string;
}

const CFGHUB_AUTHOR = signature().email;

/** The flag of each commit weighed (an empty object for a commit that breaks nothing). */
const FLAGS = new CacheSlot<{ readonly breaks?: SchemaBreaks }>('schema flags of commits made outside cfghub', 20_000);

function breaksOf(check: SchemaCheck): SchemaBreaks | undefined {
  if (check.count === 0 && check.problem === undefined) return undefined;
  return {
    count: check.count,
    breaks: check.violations.map(describeViolation),
    ...(check.problem !== undefined ? { problem: check.problem } : {}),
  };
}

/**
 * What a commit made outside cfghub broke of the schemas, against its first parent; undefined for
 * a commit of cfghub's, one that breaks nothing, and one whose content cannot be read (reads and
 * the listing report that already).
 */
export async function outsideCommitFlag(
  repository: GitRepository,
  commitId: string,
  slices = new TimeSlices(),
): Promise<SchemaBreaks | undefined> {
  const cache = repository.caches.slot(FLAGS);
  const known = cache.get(commitId);
  if (known) return known.breaks;
  const info = await commitInfo(repository, commitId);
  let breaks: SchemaBreaks | undefined;
  if (info.author.email !== CFGHUB_AUTHOR) {
    try {
      const after = await repository.snapshot(commitId);
      const parent = info.parents[0];
      const before = parent === undefined ? undefined : await repository.snapshot(parent);
      await slices.pause();
      const changes = before === undefined ? undefined : snapshotChanges(before, after);
      await slices.pause();
      breaks = breaksOf(await slices.run(schemaCheckSteps(before, after, changes)));
    } catch {
      // Content that breaks the layout, or a damaged object: reported by reads, the listing and
      // the commit's own summary in the history, which must still answer to find and roll it back.
      breaks = undefined;
    }
  }
  cache.set(commitId, breaks ? { breaks } : {});
  return breaks;
}

const afterThisTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A repository whose head breaks its schemas since a commit made outside cfghub. */
export interface BrokenRepository {
  readonly repository: string;
  /** The newest commit made outside cfghub that broke them. */
  readonly commit: string;
  readonly head: string;
  /** What the head breaks (all of its schemas weighed). */
  readonly breaks: SchemaBreaks;
}

interface Watched {
  readonly repository: GitRepository;
  readonly unsubscribe: () => void;
  /** The last head weighed. */
  audited?: string;
  running?: Promise<void>;
  again?: boolean;
  broken?: BrokenRepository;
}

/**
 * Follows the head of every repository of the registry and weighs the commits that arrive made
 * outside cfghub: what the flags, `/readyz` and the metrics report.
 */
export class OutsideCommitWatch {
  private readonly watched = new Map<GitRepository, Watched>();
  /** Commits flagged since the start. */
  flaggedCommits = 0;
  private closed = false;

  constructor(
    private readonly registry: RepositoryRegistry,
    private readonly logger?: Logger,
  ) {}

  /** Watches every repository of the folder not watched yet, and weighs each head not weighed yet. */
  watchAll(): void {
    if (this.closed) return;
    for (const location of this.registry.locations()) {
      let repository: GitRepository;
      try {
        repository = this.registry.open(location);
      } catch {
        continue;
      }
      this.watch(repository);
    }
  }

  watch(repository: GitRepository): void {
    let entry = this.watched.get(repository);
    if (!entry) {
      entry = { repository, unsubscribe: repository.onHeadChange(() => this.schedule(repository)) };
      this.watched.set(repository, entry);
    }
    this.schedule(repository);
  }

  /** The repositories whose head breaks their schemas since a commit made outside cfghub. */
  broken(): BrokenRepository[] {
    return [...this.watched.values()].flatMap((entry) => (entry.broken ? [entry.broken] : []));
  }

  /** Resolves once every audit started has ended (tests, and a server stopping). */
  async settled(): Promise<void> {
    for (const entry of this.watched.values()) await entry.running;
  }

  close(): void {
    this.closed = true;
    for (const entry of this.watched.values()) entry.unsubscribe();
    this.watched.clear();
  }

  private schedule(repository: GitRepository): void {
    const entry = this.watched.get(repository);
    if (!entry || this.closed) return;
    if (entry.running) {
      entry.again = true;
      return;
    }
    // Called on the writer's path (GitRepository.commit calls the head's listeners before its
    // answer): the audit starts on a later turn of the loop, after the writer has answered.
    entry.running = afterThisTurn()
      .then(() => this.audit(entry))
      .catch((error: unknown) =>
        this.logger?.warn({
          event: 'schema-audit-failed',
          repository: repository.fullName,
          problem: (error as Error)?.message ?? String(error),
        }),
      )
      .finally(() => {
        entry.running = undefined;
        if (entry.again) {
          entry.again = false;
          this.schedule(repository);
        }
      });
  }

  private async audit(entry: Watched): Promise<void> {
    const { repository } = entry;
    if (repository.gone) return;
    let head: string;
    try {
      head = repository.head();
    } catch {
      return; // a repository gone or unreadable: the listing and /readyz report it
    }
    if (head === entry.audited) return;
    const slices = new TimeSlices();
    // The commits since the last head weighed, newest first (on the first look, the head alone).
    const arrived: string[] = [];
    for (
      let id: string | undefined = head;
      id !== undefined && id !== entry.audited && arrived.length < (entry.audited ? MAX_COMMITS_AUDITED : 1);
      id = (await commitInfo(repository, id)).parents[0]
    )
      arrived.push(id);
    let newest: string | undefined;
    // Each commit arrives once (those after the last head weighed): logged and counted once.
    for (const id of arrived.reverse()) {
      const breaks = await outsideCommitFlag(repository, id, slices);
      if (!breaks) continue;
      newest = id;
      this.flaggedCommits++;
      this.logger?.warn({
        event: 'schema-broken-outside',
        repository: repository.fullName,
        commit: id,
        breaks: breaks.count,
        first: breaks.problem ?? breaks.breaks[0],
      });
    }
    // Whether the head still breaks the schemas: weighed on everything, while a break is known.
    if (newest !== undefined || entry.broken) {
      let breaks: SchemaBreaks | undefined;
      try {
        breaks = breaksOf(await slices.run(schemaCheckSteps(undefined, await repository.snapshot(head), undefined)));
      } catch (error) {
        if (isRepositoryDamage(error)) throw error;
        breaks = undefined; // a head that breaks the layout: reported by reads and the listing
      }
      const commit = newest ?? entry.broken?.commit;
      entry.broken =
        breaks && commit !== undefined ? { repository: repository.fullName, commit, head, breaks } : undefined;
    }
    entry.audited = head;
  }
}
