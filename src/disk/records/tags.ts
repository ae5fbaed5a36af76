/**
 * Annotated tags: `refs/tags/<name>` pointing at a tag object that names the
 * commit. Tags are found where git keeps them, loose (`refs/tags/*`) and in `packed-refs`, so tags
 * made or packed by plain git (`git tag`, `git pack-refs`, `git gc`) are listed, read and deleted
 * like cfghub's own.
 *
 * Refs move only by git's protocol: `<ref>.lock` created exclusively, a compare-and-swap, a rename
 * (refs.ts). A tag is created against "must not exist"; a deletion holds the tag's lock while it
 * rewrites `packed-refs` under `packed-refs.lock` (as git does: packed entry first, then the loose
 * file, so an older packed value never shows through).
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { isoSeconds } from '../../lib/dates.js';
import { isValidName } from '../../domain/names.js';
import { fsyncFolder } from '../durableFs.js';
import { encodeObject, parseCommit, parseTag, serializeTag, type Signature } from '../../git/gitObjects.js';
import { BUSY, retryWhileBusy } from '../refs/lockRetry.js';
import { LockFile, packedRefs, readRef, RefLock } from '../refs/refs.js';
import type { GitRepository } from '../repository.js';
import { ObjectNotFoundError } from '../errors.js';

export const TAGS_PREFIX = 'refs/tags/';

export interface TagRecord {
  readonly name: string;
  /** The commit the tag names, peeled through any tag objects. */
  readonly commitId: string;
  /** The tagger's time (a lightweight tag: the commit's committer time), `YYYY-MM-DDTHH:MM:SSZ`. */
  readonly created: string;
  /** The tag's message without its trailing newline or signature; '' for a lightweight tag. */
  readonly message: string;
}

export type TagCreation =
  | { readonly ok: true; readonly tag: TagRecord }
  /** A tag of that name exists, in this spelling or another. */
  | { readonly ok: false; readonly why: 'exists'; readonly existing: string }
  /** Another writer held the tag's lock through every attempt. */
  | { readonly ok: false; readonly why: 'locked' };

export type TagDeletion =
  | { readonly ok: true; readonly name: string }
  | { readonly ok: false; readonly why: 'not_found' }
  /** Another writer held the tag's lock or `packed-refs.lock` through every attempt. */
  | { readonly ok: false; readonly why: 'locked' };

const OID = /^[0-9a-f]{40}$/;
/** How deep tags of tags are followed. */
const MAX_PEEL = 10;

/** Whether a name may be a cfghub tag: a valid name (names.ts) that git also accepts as a ref component. */
export function isValidTagName(name: string): boolean {
  return isValidName(name) && !/\.lock$/i.test(name);
}

// --- tag refs on disk ---------------------------------------------------------------------------

interface TagRef {
  /** The name below refs/tags/. */
  readonly name: string;
  /** What the ref points at: a tag object, or a commit for a lightweight tag. */
  readonly oid: string;
}

function packedTagRefs(gitdir: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [ref, oid] of packedRefs(gitdir))
    if (ref.startsWith(TAGS_PREFIX)) found.set(ref.slice(TAGS_PREFIX.length), oid);
  return found;
}

function looseTagRefs(gitdir: string, folder = '', found = new Map<string, string>()): Map<string, string> {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(join(gitdir, TAGS_PREFIX, folder), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
      return found;
    throw error;
  }
  for (const entry of entries) {
    const name = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) looseTagRefs(gitdir, name, found);
    else if (entry.isFile() && !entry.name.endsWith('.lock')) {
      let oid: string | null;
      try {
        oid = readRef(gitdir, TAGS_PREFIX + name);
      } catch {
        continue; // not a ref (git ignores such files too)
      }
      if (oid) found.set(name, oid);
    }
  }
  return found;
}

/** Every tag ref, a loose ref taking precedence over a packed one of the same name, sorted by name. */
function tagRefs(gitdir: string): TagRef[] {
  const refs = packedTagRefs(gitdir);
  for (const [name, oid] of looseTagRefs(gitdir)) refs.set(name, oid);
  return [...refs]
    .map(([name, oid]) => ({ name, oid }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The tag of that exact name, else the first whose name matches it without regard to case. */
function findTagRef(refs: readonly TagRef[], name: string): TagRef | undefined {
  const lower = name.toLowerCase();
  return refs.find((ref) => ref.name === name) ?? refs.find((ref) => ref.name.toLowerCase() === lower);
}

// --- peeling, cached by object id (objects never change; repositoryCaches.ts) ----------------------------------------

type Peeled = Omit<TagRecord, 'name'>;

/** What a tag ref's object comes to: the commit, when, and the message; null if it is not a commit. */
async function peel(repository: GitRepository, oid: string): Promise<Peeled | null> {
  const cache = repository.caches.peeledTags;
  const known = cache.get(oid);
  if (known !== undefined) return known.peeled;
  let taggedAt: number | undefined;
  let message: string | undefined;
  let peeled: Peeled | null = null;
  let missing = false;
  let current = oid;
  for (let depth = 0; depth <= MAX_PEEL; depth++) {
    let object;
    try {
      object = await repository.objects.read(current);
    } catch (error) {
      if (!(error instanceof ObjectNotFoundError)) throw error;
      missing = true;
      break;
    }
    if (object.type === 'tag') {
      const tag = parseTag(object.content);
      if (message === undefined) {
        taggedAt = tag.taggedAt;
        message = tag.message;
      }
      current = tag.object;
      continue;
    }
    if (object.type === 'commit') {
      const created = taggedAt ?? parseCommit(object.content).committedAt;
      peeled = { commitId: current, created: isoSeconds(new Date(created * 1000)), message: message ?? '' };
    }
    break;
  }
  if (!missing) cache.set(oid, { peeled });
  return peeled;
}

// --- reading ------------------------------------------------------------------------------------

/** Every tag that names a commit, loose and packed, sorted by name. */
export async function listTags(repository: GitRepository): Promise<TagRecord[]> {
  const records: TagRecord[] = [];
  for (const ref of tagRefs(repository.gitdir)) {
    const peeled = await peel(repository, ref.oid);
    if (peeled) records.push({ name: ref.name, ...peeled });
  }
  return records;
}

/** A tag by name (exact, else without regard to case), or null if there is none or it names no commit. */
export async function findTag(repository: GitRepository, name: string): Promise<TagRecord | null> {
  const ref = findTagRef(tagRefs(repository.gitdir), name);
  if (!ref) return null;
  const peeled = await peel(repository, ref.oid);
  return peeled && { name: ref.name, ...peeled };
}

/** The commit a tag names (exact name, else without regard to case), or null. */
export async function resolveTag(repository: GitRepository, name: string): Promise<string | null> {
  return (await findTag(repository, name))?.commitId ?? null;
}

// --- writing ------------------------------------------------------------------------------------

/**
 * Tags the current head: writes the tag object durably, then creates `refs/tags/<name>`, which
 * must not exist. Refused if a tag of that name exists in any case. `name` must be valid
 * (isValidTagName); `message` must not hold a NUL character.
 */
export function createTag(
  repository: GitRepository,
  name: string,
  message: string,
  tagger: Signature,
): Promise<TagCreation> {
  if (!isValidTagName(name)) throw new Error(`invalid tag name ${JSON.stringify(name)}`);
  if (message.includes('\u0000')) throw new Error('a tag message must not contain a NUL character');
  const { gitdir } = repository;
  const clash = (): string | undefined => findTagRef(tagRefs(gitdir), name)?.name;
  return repository.exclusive(async (): Promise<TagCreation> => {
    const existing = clash();
    if (existing !== undefined) return { ok: false, why: 'exists', existing };
    const commitId = repository.head();
    const tag = encodeObject('tag', serializeTag({ object: commitId, type: 'commit', tag: name, tagger, message }));
    // Kept (`.keep`) until the tag's ref names it, as a push's pack is (see GitRepository.commit):
    // a `git repack -a -d` that listed the packs before the ref moved would delete its only copy.
    // A tag not made leaves the mark for a later merge to remove as a leftover.
    const keep = (await repository.objects.writeUntilFolderSync([tag]))?.keep;
    await fsyncFolder(repository.objects.packFolder);
    await fs.promises.mkdir(join(gitdir, TAGS_PREFIX), { recursive: true });
    const ref = TAGS_PREFIX + name;
    // Writers of a name in any spelling first take the lock of its lower-case spelling, so two
    // processes never create `v1` and `V1` at once (git itself does not mind case, so only cfghub does this).
    const guardRef = TAGS_PREFIX + name.toLowerCase();
    let made = false;
    try {
      const created = await retryWhileBusy(async (): Promise<TagCreation | typeof BUSY> => {
        const guard = guardRef === ref ? undefined : await RefLock.acquire(gitdir, guardRef, tag.oid);
        if (guard === 'locked') return BUSY;
        try {
          const lock = await RefLock.acquire(gitdir, ref, tag.oid);
          if (lock === 'locked') return BUSY;
          // Checked again under the locks: another process may have made the tag meanwhile.
          const other = clash();
          if (other !== undefined && other !== name) {
            await lock.release();
            return { ok: false, why: 'exists', existing: other };
          }
          const update = await lock.swap(null);
          if (!update.ok) return { ok: false, why: 'exists', existing: name };
          const record: TagRecord = {
            name,
            commitId,
            created: isoSeconds(new Date(tagger.timestamp * 1000)),
            message: parseTag(tag.content).message,
          };
          return { ok: true, tag: record };
        } finally {
          await guard?.release();
        }
      });
      const outcome: TagCreation = created === BUSY ? { ok: false, why: 'locked' } : created;
      made = outcome.ok;
      return outcome;
    } finally {
      if (made) await keep?.release();
    }
  });
}

/**
 * Deletes a tag (exact name, else without regard to case), loose, packed or both: under the tag's
 * lock, the packed entry (and its peel line) goes first, under `packed-refs.lock`, then the loose file.
 */
export function deleteTag(repository: GitRepository, name: string): Promise<TagDeletion> {
  const { gitdir } = repository;
  return repository.exclusive(async (): Promise<TagDeletion> => {
    const found = findTagRef(tagRefs(gitdir), name);
    if (!found || !isValidTagName(found.name)) return { ok: false, why: 'not_found' };
    const ref = TAGS_PREFIX + found.name;
    const deleted = await retryWhileBusy(async (): Promise<TagDeletion | typeof BUSY> => {
      const lock = await RefLock.acquire(gitdir, ref, found.oid);
      if (lock === 'locked') return BUSY;
      try {
        if (readRef(gitdir, ref) === null) return { ok: false, why: 'not_found' };
        if ((await removePackedRef(gitdir, ref)) === 'locked') return { ok: false, why: 'locked' };
        try {
          await fs.promises.unlink(join(gitdir, ref));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
        await fsyncFolder(dirname(join(gitdir, ref)));
        return { ok: true, name: found.name };
      } finally {
        await lock.release();
      }
    });
    return deleted === BUSY ? { ok: false, why: 'locked' } : deleted;
  });
}

/**
 * Rewrites `packed-refs` without `ref` and the peel lines that follow it, the way git does: the new
 * content is written to `packed-refs.lock` (a LockFile: created exclusively, removed when stale),
 * fsynced and renamed over `packed-refs`. Nothing is written when the ref is not packed.
 */
async function removePackedRef(gitdir: string, ref: string): Promise<'removed' | 'absent' | 'locked'> {
  const path = join(gitdir, 'packed-refs');
  const isPacked = (text: string) => text.split('\n').some((line) => line.length > 41 && line.slice(41) === ref);
  const read = () => {
    try {
      return fs.readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw error;
    }
  };
  if (!isPacked(read())) return 'absent';
  const outcome = await retryWhileBusy(async (): Promise<'removed' | 'absent' | typeof BUSY> => {
    const lock = await LockFile.acquire(gitdir, 'packed-refs');
    if (lock === 'locked') return BUSY;
    try {
      const text = read(); // read again now that no cooperating writer can change it
      if (!isPacked(text)) return 'absent';
      const kept: string[] = [];
      let dropping = false;
      for (const line of text.split('\n')) {
        if (line.startsWith('^')) {
          if (!dropping) kept.push(line);
          continue;
        }
        dropping = line.length > 41 && line.slice(41) === ref && OID.test(line.slice(0, 40));
        if (!dropping) kept.push(line);
      }
      await lock.write(kept.join('\n'));
      await lock.commit();
      return 'removed';
    } finally {
      await lock.release();
    }
  });
  return outcome === BUSY ? 'locked' : outcome;
}
