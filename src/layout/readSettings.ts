/**
 * A repository's settings at a commit, read alone: the commit, its root tree and
 * `repository.yaml`. For deciding access when the rest of the commit breaks the layout rules and
 * its snapshot cannot be built, so that history can still show what went wrong and a restore can
 * still repair it.
 */
import type { RepoSettings } from '../domain/model.js';
import { isTreeEntry, parseTree } from '../git/gitObjects.js';
import { commitInfo } from './timeTravel.js';
import { parseSettings, SETTINGS_FILE } from './layout.js';
import type { RepositoryReader } from './objectReader.js';
import { LayoutError } from './errors.js';

export interface StoredSettings {
  readonly settings: RepoSettings;
  readonly blobId: string;
}

export async function readSettings(repository: RepositoryReader, commitId: string): Promise<StoredSettings> {
  const where = `commit ${commitId.slice(0, 12)}`;
  const root = await repository.objects.read((await commitInfo(repository, commitId)).tree);
  const entry = parseTree(root.content).find((e) => e.name === SETTINGS_FILE);
  if (!entry || isTreeEntry(entry)) throw new LayoutError(`${where} has no ${SETTINGS_FILE}`, SETTINGS_FILE, commitId);
  const blob = await repository.objects.read(entry.oid);
  try {
    return {
      settings: parseSettings(blob.content.toString('utf8'), `${SETTINGS_FILE} at ${where}`),
      blobId: entry.oid,
    };
  } catch (error) {
    throw new LayoutError(
      error instanceof LayoutError ? error.message : `${SETTINGS_FILE} at ${where}: ${(error as Error).message}`,
      SETTINGS_FILE,
      commitId,
    );
  }
}

/** The settings at a commit: from its snapshot (which readers need anyway), else read alone. */
export async function settingsAt(repository: RepositoryReader, commitId: string): Promise<RepoSettings> {
  try {
    return (await repository.snapshot(commitId)).settings;
  } catch (error) {
    if (error instanceof LayoutError) return (await readSettings(repository, commitId)).settings;
    throw error;
  }
}

/**
 * The settings at a commit without building its snapshot: from the snapshot when it is
 * built, else read alone (and kept by commit id). For operations that read no key of the head
 * (history): the first history page of a new server need not parse every key of the head to
 * learn who may read it.
 */
export async function settingsWithoutSnapshot(repository: RepositoryReader, commitId: string): Promise<RepoSettings> {
  const built = repository.builtSnapshot(commitId);
  if (built) return built.settings;
  const cache = repository.caches.settingsOfCommits;
  let settings = cache.get(commitId);
  if (!settings) cache.set(commitId, (settings = (await readSettings(repository, commitId)).settings));
  return settings;
}
