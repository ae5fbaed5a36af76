/**
 * What the configuration layout reads git through: objects by id and, for a repository, its
 * caches, head and snapshots. The disk's ObjectStore and GitRepository have this shape; the layout
 * names only the shape, so it never imports the disk and can be read against any object source.
 */
import type { ObjectType } from '../git/gitObjects.js';
import type { RepositoryCaches } from './repositoryCaches.js';
import type { Snapshot } from './snapshot.js';

/** Reads a git object by its id (an ObjectStore). */
export interface ObjectReader {
  read(oid: string): Promise<{ readonly type: ObjectType; readonly content: Buffer }>;
}

/** A repository as the layout reads it (a GitRepository). */
export interface RepositoryReader {
  readonly objects: ObjectReader;
  readonly caches: RepositoryCaches;
  head(): string;
  snapshot(commitId: string): Promise<Snapshot>;
  /** The snapshot of a commit if it is built already; never reads anything. */
  builtSnapshot(commitId: string): Snapshot | undefined;
}
