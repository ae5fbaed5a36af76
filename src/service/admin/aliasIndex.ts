/**
 * The repositories' aliases (the `alias` of each `repository.yaml`), so that a repository is found
 * by its alias without reading every repository's settings per request.
 *
 * Kept current without a scan per request:
 * - each repository's alias is read again only after its head may have moved
 *   (GitRepository.onHeadChange: a commit of this process, or a ref moved by another process, a
 *   plain-git push, a replica's fetch), from the settings of the new head (kept by commit);
 * - the repositories themselves (created, deleted, renamed, copied in) are listed again when an
 *   alias is not found, at most once per RELIST_MS, and always before an alias is claimed;
 * - a repository whose folder is gone (deleted, renamed) leaves the index when its head is read,
 *   and the folder is listed again at the next miss (a renamed repository keeps its alias).
 *
 * An alias is unique without regard to case: `claim` refuses one that another repository has,
 * naming it, and runs the change while no other claim of this process runs. Plain git (or two
 * processes claiming at the same instant) can still give two repositories one alias: such an
 * alias names neither (`find` answers the clash, for the log) until one of them gives it up. An
 * alias that breaks the rule (aliasProblem; only plain git can write one) names nothing.
 */
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import { afterQueuedWatchEvents } from '../../disk/refs/changeWatch.js';
import { aliasProblem } from '../../domain/names.js';
import { settingsWithoutSnapshot } from '../../layout/readSettings.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { ServiceError } from '../errors.js';

/** How long a listing of the repositories folder answers misses before the folder is listed again. */
export const RELIST_MS = 1_000;

interface Entry {
  readonly repository: GitRepository;
  readonly unsubscribe: () => void;
  /** The alias of the head last read, lower-cased; undefined when it has none (or a broken one). */
  alias?: string;
}

/** What an alias names: one repository, none, or several (a clash, named for the log). */
export type AliasMatch = { readonly repository: GitRepository } | { readonly clash: readonly string[] } | undefined;

const keyOf = (alias: string) => alias.toLowerCase();

export class AliasIndex {
  /** By gitdir. */
  private readonly entries = new Map<string, Entry>();
  /** The entries whose alias is to be read again (their head may have moved). */
  private readonly stale = new Set<Entry>();
  /** By lower-case alias: the entries that have it (more than one only after a clash). */
  private readonly claimants = new Map<string, Set<Entry>>();
  private listedAt = Number.NEGATIVE_INFINITY;
  /** A repository's folder was found gone since the last listing (deleted, or moved: renamed). */
  private departed = false;
  private listing: Promise<void> | undefined;
  private refreshing: Promise<void> | undefined;
  private claims: Promise<unknown> = Promise.resolve();

  constructor(private readonly registry: RepositoryRegistry) {}

  /** The repository whose alias is `alias` (any case). */
  async find(alias: string): Promise<AliasMatch> {
    if (aliasProblem(alias) !== undefined) return undefined;
    // A head moved by another process just before this request is seen (changeWatch.ts).
    await afterQueuedWatchEvents();
    if (this.listedAt === Number.NEGATIVE_INFINITY) await this.relist();
    await this.refresh();
    let found = this.claimants.get(keyOf(alias));
    if (!found && (this.departed || Date.now() - this.listedAt >= RELIST_MS)) {
      await this.relist();
      await this.refresh();
      found = this.claimants.get(keyOf(alias));
    }
    if (!found || found.size === 0) return undefined;
    if (found.size > 1) return { clash: [...found].map((entry) => entry.repository.fullName).sort() };
    return { repository: [...found][0].repository };
  }

  /**
   * Runs `change` (which gives `repository` the alias `alias`) unless another repository has that
   * alias: then a conflict naming it. Claims of this process run one at a time, each on a fresh
   * listing of the folder.
   */
  claim<T>(alias: string, repository: GitRepository, change: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      await afterQueuedWatchEvents();
      await this.relist();
      await this.refresh();
      const others = [...(this.claimants.get(keyOf(alias)) ?? [])].filter(
        (entry) => entry.repository.gitdir !== repository.gitdir,
      );
      if (others.length > 0)
        throw new ServiceError(
          'conflict',
          `the alias ${alias} is taken: it is the alias of repository ${others[0].repository.fullName}`,
        );
      return change();
    };
    const result = this.claims.then(run, run);
    this.claims = result.catch(() => undefined);
    return result;
  }

  /** Stops following the repositories' heads. */
  close(): void {
    for (const entry of this.entries.values()) entry.unsubscribe();
    this.entries.clear();
    this.stale.clear();
    this.claimants.clear();
    this.listedAt = Number.NEGATIVE_INFINITY;
  }

  /** Lists the folder (one at a time): repositories new to the index enter it, those gone leave it. */
  private relist(): Promise<void> {
    this.listing ??= this.list().finally(() => (this.listing = undefined));
    return this.listing;
  }

  private async list(): Promise<void> {
    const slices = new TimeSlices();
    const locations = this.registry.locations();
    this.listedAt = Date.now();
    this.departed = false;
    // Two folders holding one name in different cases: neither is served, so neither is indexed.
    const spellings = new Map<string, number>();
    for (const location of locations) {
      const name = `${location.account}/${location.name}`.toLowerCase();
      spellings.set(name, (spellings.get(name) ?? 0) + 1);
    }
    const present = new Set<string>();
    for (const location of locations) {
      if (spellings.get(`${location.account}/${location.name}`.toLowerCase()) !== 1) continue;
      present.add(location.gitdir);
      const known = this.entries.get(location.gitdir);
      const repository = this.registry.open(location);
      if (known?.repository === repository) continue;
      if (known) this.remove(known);
      const entry: Entry = {
        repository,
        unsubscribe: repository.onHeadChange(() => this.stale.add(entry)),
      };
      this.entries.set(location.gitdir, entry);
      this.stale.add(entry);
      const paused = slices.pause();
      if (paused) await paused;
    }
    for (const [gitdir, entry] of this.entries) if (!present.has(gitdir)) this.remove(entry);
  }

  /** Reads the alias of every entry whose head may have moved (one pass at a time). */
  private refresh(): Promise<void> {
    this.refreshing ??= this.readStale().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async readStale(): Promise<void> {
    const slices = new TimeSlices();
    while (this.stale.size > 0) {
      const entry: Entry = this.stale.values().next().value!;
      this.stale.delete(entry);
      if (this.entries.get(entry.repository.gitdir) !== entry) continue;
      let alias: string | undefined;
      try {
        alias = (await settingsWithoutSnapshot(entry.repository, entry.repository.head())).alias;
      } catch {
        // Gone (deleted, renamed) or unreadable: it names nothing; a gone one leaves the index.
        if (entry.repository.gone) {
          this.remove(entry);
          this.departed = true;
          continue;
        }
        alias = undefined;
      }
      this.setAlias(entry, alias !== undefined && aliasProblem(alias) === undefined ? keyOf(alias) : undefined);
      const paused = slices.pause();
      if (paused) await paused;
    }
  }

  private setAlias(entry: Entry, alias: string | undefined): void {
    if (entry.alias === alias) return;
    if (entry.alias !== undefined) {
      const set = this.claimants.get(entry.alias);
      set?.delete(entry);
      if (set?.size === 0) this.claimants.delete(entry.alias);
    }
    entry.alias = alias;
    if (alias === undefined) return;
    let set = this.claimants.get(alias);
    if (!set) this.claimants.set(alias, (set = new Set()));
    set.add(entry);
  }

  private remove(entry: Entry): void {
    entry.unsubscribe();
    this.setAlias(entry, undefined);
    this.stale.delete(entry);
    if (this.entries.get(entry.repository.gitdir) === entry) this.entries.delete(entry.repository.gitdir);
  }
}

const indexes = new WeakMap<RepositoryRegistry, AliasIndex>();

/** The alias index of a repositories folder, one per registry (made on first use). */
export function aliasIndexOf(registry: RepositoryRegistry): AliasIndex {
  let index = indexes.get(registry);
  if (!index) indexes.set(registry, (index = new AliasIndex(registry)));
  return index;
}
