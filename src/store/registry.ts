/**
 * Finds the repositories under the repositories folder: `<repos>/<account>/<name>.git`.
 * Names are validated before they touch the disk, matched without regard to case, and symbolic
 * links are never followed, so no request can reach outside the folder.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { isValidName } from '../domain/names.js';
import { GitRepository } from './repository.js';

export interface RepositoryLocation {
  readonly account: string;
  readonly name: string;
  readonly gitdir: string;
}

const SUFFIX = '.git';

function realFolders(path: string): string[] {
  try {
    return fs
      .readdirSync(path, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

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
  private readonly found = new Map<string, GitRepository>();

  /**
   * `looseObjectLimit`: repack a repository when plain-git writers left more loose objects than
   * this (the server sets it; short-lived commands leave repacking to it).
   */
  constructor(
    readonly root: string,
    private readonly options: { readonly looseObjectLimit?: number } = {},
  ) {}

  /** Every repository, in the order the folder lists them. */
  locations(): RepositoryLocation[] {
    const found: RepositoryLocation[] = [];
    for (const account of realFolders(this.root)) {
      if (!isValidName(account)) continue;
      for (const entry of realFolders(join(this.root, account))) {
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
    return realFolders(this.root).find((folder) => folder.toLowerCase() === account.toLowerCase());
  }

  /**
   * A repository by account and name (any case), or undefined if there is none. A repository
   * found before is returned without looking at the disk (reads check it through its head);
   * `fresh` searches the folder again, for callers that must know it is there now (creation).
   */
  find(account: string, name: string, options: { fresh?: boolean } = {}): GitRepository | undefined {
    const asked = `${account}/${name}`.toLowerCase();
    const known = options.fresh ? undefined : this.found.get(asked);
    // No search and no syscall: the repository checks its folder is still in place whenever its
    // head ref changes (GitRepository.head), which a removed or swapped folder always shows as.
    if (known && !known.gone) return known;
    this.found.delete(asked);
    const repository = this.search(account, name);
    if (repository) this.found.set(asked, repository);
    return repository;
  }

  private search(account: string, name: string): GitRepository | undefined {
    if (!isValidName(account) || !isValidName(name)) return undefined;
    const accountFolder = this.accountFolder(account);
    if (!accountFolder) return undefined;
    let entry = `${name}${SUFFIX}`;
    if (!isRealFolder(join(this.root, accountFolder, entry))) {
      const wanted = entry.toLowerCase();
      const match = realFolders(join(this.root, accountFolder)).find((folder) => folder.toLowerCase() === wanted);
      if (!match) return undefined;
      entry = match;
    }
    return this.open({ account: accountFolder, name: entry.slice(0, -SUFFIX.length), gitdir: join(this.root, accountFolder, entry) });
  }

  /** Resolves when no repository opened has a write, merge or merged packs' removal running or queued (for a graceful shutdown). */
  async settle(): Promise<void> {
    for (const repository of this.opened.values()) {
      await repository.exclusive(async () => undefined);
      await repository.objects.settled();
    }
  }

  /** Stops watching the heads of the repositories opened (the server is shutting down). */
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
      });
      this.opened.set(id, repository);
    }
    return repository;
  }
}
