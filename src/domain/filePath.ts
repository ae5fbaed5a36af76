/**
 * File path rules: one leading `/` dropped; refused if empty, with `.`, `..`
 * or empty segments, a backslash, a control character, a `.git` segment in any case, or longer
 * than 1,024 characters. Paths are case-sensitive.
 *
 * "A `.git` segment in any case" includes the spellings git itself treats as `.git` on NTFS and
 * HFS+ (`git~1`, `.git.`, `.g<zero-width joiner>it`), which would make `git fsck` fail and a clone
 * refuse to check out; and the files git checks wherever they are (`.gitmodules`, `.gitattributes`).
 */

export const MAX_PATH_LENGTH = 1024;

export type PathCheck = { ok: true; path: string } | { ok: false; problem: string };

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Code points HFS+ ignores in names, so `.g\u200cit` is `.git` there (git's is_hfs_dotgit). */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Half of a UTF-16 surrogate pair on its own: JSON can carry it, UTF-8 cannot, so git would
 * store U+FFFD instead and the text read back would differ from the text pushed.
 */
export const LONE_SURROGATE = /\p{Surrogate}/u;

/** Names git reserves, as NTFS and HFS+ would see a segment (trailing dots and spaces dropped). */
const GIT_RESERVED = new Set(['.git', 'git~1', '.gitmodules', 'gitmod~1', '.gitattributes', 'gitatt~1']);

function gitReservedName(segment: string): string | undefined {
  const seen = segment
    .replace(HFS_IGNORED, '')
    .toLowerCase()
    .replace(/[. ]+$/, '');
  return GIT_RESERVED.has(seen) ? seen : undefined;
}

export function normalizeFilePath(raw: string): PathCheck {
  const path = raw.startsWith('/') ? raw.slice(1) : raw;
  if (path.length === 0) return { ok: false, problem: 'file path is empty' };
  if (path.length > MAX_PATH_LENGTH)
    return { ok: false, problem: `file path is longer than ${MAX_PATH_LENGTH} characters` };
  if (path.includes('\\')) return { ok: false, problem: 'file path contains a backslash' };
  if (CONTROL.test(path)) return { ok: false, problem: 'file path contains a control character' };
  if (LONE_SURROGATE.test(path)) return { ok: false, problem: 'file path is not valid Unicode (a lone surrogate)' };
  for (const segment of path.split('/')) {
    if (segment === '') return { ok: false, problem: 'file path has an empty segment' };
    if (segment === '.' || segment === '..') return { ok: false, problem: `file path has a '${segment}' segment` };
    const reserved = gitReservedName(segment);
    if (reserved) return { ok: false, problem: `file path has a '${reserved}' segment` };
  }
  return { ok: true, path };
}

/**
 * Keeps the paths of a repository checkable on every file system: every spelling of a folder or
 * file must be unique without regard to case (a clone must check out on macOS and Windows), and no
 * file path may also be a folder of another file.
 */
export class PathIndex {
  private readonly spelling = new Map<string, string>(); // lower-cased prefix -> spelling
  private readonly files = new Set<string>();
  private readonly folders = new Set<string>();

  /** Adds a path; returns why it cannot coexist with the paths already added, if it cannot. */
  add(path: string): string | undefined {
    const segments = path.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      const seen = this.spelling.get(prefix.toLowerCase());
      if (seen !== undefined && seen !== prefix) return `path ${prefix} differs only in case from ${seen}`;
    }
    if (this.folders.has(path)) return `path ${path} is already a folder of another file`;
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (this.files.has(folder)) return `path ${folder} is already a file, so it cannot be a folder`;
    }
    for (let i = 1; i <= segments.length; i++) {
      const prefix = segments.slice(0, i).join('/');
      this.spelling.set(prefix.toLowerCase(), prefix);
      if (i < segments.length) this.folders.add(prefix);
    }
    this.files.add(path);
    return undefined;
  }
}
