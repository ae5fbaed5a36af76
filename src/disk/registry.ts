/**
 * Finds the repositories under the repositories folder: `<repos>/<account>/<name>.git`.
 * Names are validated before they touch the disk, matched without regard to case, and symbolic
 * links are never followed, so no request can reach outside the folder.
 */
import type { ReplicateHook } from './repository.js';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { isValidName } from '../domain/names.js';
import { GitRepository } from './repository.js';
import { AmbiguousRepositoryError } from './errors.js';
import { subfolders } from './folders.js';
import { PushJournal } from './journal/pushJournal.js';

export interface RepositoryLocation {
  readonly account: string;
  readonly name: string;
  readonly gitdir: string;
}

const SUFFIX = '.git';

/**
 * How long a folder's listing, and a repository found by name, are trusted without reading the
 * folder again: a second spelling of a name (a backup restored as `case/Dup.git` beside
 * `case/dup.git`) is refused within twice this time. One `readdir` per folder per second, for
 * names already served.
 */
const RECHECK_MS = 1_000;

function isRealFolder(path: string): boolean {
  try {
    return fs.lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

export class RepositoryRegistry {
  private readonly opened = new Map<string, GitRepository>();
  /** Repositories found by `find`, by the lower-case name asked for: skips the folder search. */
  private readonly found = new Map<string, { repository: GitRepository; at: number }>();
  /** Folder listings, by path, trusted for RECHECK_MS. */
  private readonly listings = new Map<string, { names: string[]; at: number }>();

  /** The server's push journal (pushJournal.ts): one fdatasync per push, or per pushes arriving together. */
  private readonly journal: PushJournal | undefined;

  /**
   * `looseObjectLimit`: repack a repository when plain-git writers left more loose objects than
   * this (the server sets it; short-lived commands leave repacking to it). `journal`: commit
   * through a push journal of this process (the server; a command on the folder makes each
   * commit's own files durable, and leaves no journal behind).
   */
  constructor(
    readonly root: string,
    private readonly options: {
      readonly looseObjectLimit?: number;
      readonly journal?: boolean;
      readonly replicate?: ReplicateHook;
    } = {},
  ) {
    this.journal = options.journal ? new PushJournal(root) : undefined;
  }

  /** Every repository, in the order the folder lists them. */
  locations(): RepositoryLocation[] {
    const found: RepositoryLocation[] = [];
    for (const account of subfolders(this.root)) {
      if (!isValidName(account)) continue;
      for (const entry of subfolders(join(this.root, account))) {
        if (!entry.endsWith(SUFFIX)) continue;
        const name = entry.slice(0, -SUFFIX.length);
        if (isValidName(name)) found.push({ account, name, gitdir: join(this.root, account, entry) });
      }
    }
    return found;
  }

  /** The account folder that holds (or would hold) an account's repositories, in its stored spelling. */
  accountFolder(account: string): string | undefined {
    if (!isValidName(account)) return undefined;
    if (isRealFolder(join(this.root, account))) return account;
    return subfolders(this.root).find((folder) => folder.toLowerCase() === account.toLowerCase());
  }

  /**
   * A repository by account and name (any case), or undefined if there is none. A repository
   * found before is returned without looking at the disk (reads check it through its head);
   * `fresh` searches the folder again, for callers that must know it is there now (creation).
   */
  find(account: string, name: string, options: { fresh?: boolean } = {}): GitRepository | undefined {
    const asked = `${account}/${name}`.toLowerCase();
    const known = options.fresh ? undefined : this.found.get(asked);
    // No syscall within RECHECK_MS: the repository checks its folder is still in place whenever
    // its head ref changes (GitRepository.head), which a removed or swapped folder always shows
    // as; after it, the (cached) folder listings are searched again for a second spelling.
    const now = Date.now();
    if (known && !known.repository.gone && now - known.at < RECHECK_MS) return known.repository;
    this.found.delete(asked);
    // A name not known (or gone) is looked up on disk now, so a repository restored a moment ago is
    // served at once; one known is searched again in the folder listings of the last second.
    const repository = this.search(account, name, options.fresh === true || !known || known.repository.gone);
    if (repository) this.found.set(asked, { repository, at: now });
    return repository;
  }

  /** A folder's sub-folders, read again when older than RECHECK_MS (or when `fresh`). */
  private folders(path: string, fresh: boolean): string[] {
    const now = Date.now();
    const kept = this.listings.get(path);
    if (!fresh && kept && now - kept.at < RECHECK_MS) return kept.names;
    const names = subfolders(path);
    this.listings.set(path, { names, at: now });
    return names;
  }

  /**
   * The one folder holding `account/name` in any case; an AmbiguousRepositoryError when there
   * are several (`case/dup.git` and `case/Dup.git`, or `case/dup.git` and `Case/dup.git`).
   */
  private search(account: string, name: string, fresh: boolean): GitRepository | undefined {
    if (!isValidName(account) || !isValidName(name)) return undefined;
    const wantedAccount = account.toLowerCase();
    const wantedEntry = `${name}${SUFFIX}`.toLowerCase();
    const matches: RepositoryLocation[] = [];
    for (const accountFolder of this.folders(this.root, fresh)) {
      if (accountFolder.toLowerCase() !== wantedAccount || !isValidName(accountFolder)) continue;
      for (const entry of this.folders(join(this.root, accountFolder), fresh)) {
        if (entry.toLowerCase() !== wantedEntry) continue;
        matches.push({
          account: accountFolder,
          name: entry.slice(0, -SUFFIX.length),
          gitdir: join(this.root, accountFolder, entry),
        });
      }
    }
    if (matches.length === 0) return undefined;
    if (matches.length > 1) {
      throw new AmbiguousRepositoryError(
        `${account}/${name}`,
        matches.map((m) => `${m.account}/${m.name}${SUFFIX}`).sort(),
      );
    }
    return this.open(matches[0]);
  }

  /** Resolves when no repository opened has a write, merge or merged packs' removal running or queued (for a graceful shutdown). */
  async settle(): Promise<void> {
    for (const repository of this.opened.values()) {
      await repository.exclusive(async () => undefined);
      await repository.objects.settled();
    }
  }

  /**
   * At a clean stop, once no push is running: every file the push journal names is fsynced and the
   * journal deleted (a journal that could not be let go stays, for the next start's replay).
   */
  async flushJournal(): Promise<void> {
    await this.journal?.close();
  }

  /**
   * Stops watching the heads of the repositories opened and closes their packs (the server is
   * shutting down): their delta bases leave the process's shared budget (deltaBases.ts) rather
   * than wait there to be pushed out. A read after this opens the packs again.
   */
  close(): void {
    for (const repository of this.opened.values()) repository.close();
  }

  /** The one long-lived GitRepository of a location (its caches live as long as the process). */
  open(location: RepositoryLocation): GitRepository {
    const id = `${location.account}/${location.name}`.toLowerCase();
    let repository = this.opened.get(id);
    if (!repository || repository.gitdir !== location.gitdir) {
      repository?.close();
      repository = new GitRepository(location.account, location.name, location.gitdir, {
        stillInPlace: () => isRealFolder(location.gitdir),
        looseObjectLimit: this.options.looseObjectLimit,
        root: this.root,
        journal: this.journal,
        replicate: this.options.replicate,
      });
      this.opened.set(id, repository);
    }
    return repository;
  }
}
