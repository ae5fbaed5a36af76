/**
 * Test support for dry runs (docs/schemas.md): what a pull shows a context, the entry a dry run
 * must list for a context given what a pull showed it before and after the real write, and the
 * state of a repository on disk (refs, `git count-objects -v`, every object file) that a dry run
 * must leave as it is.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { git } from './harness.js';
import { read } from './reads.js';

/** What a pull shows one context: each key as `{val, type}` (type when not Text) and each file's rendered content. */
export interface Reads {
  readonly keys: Record<string, unknown>;
  readonly files: Record<string, string>;
}

/** What `GET {path}` (a pull route) shows `context`. */
export async function readsOf(url: string, path: string, context: string, headers: Record<string, string> = {}) {
  const answer = await read(url, path, { ...headers, Context: context });
  expect(answer.status, answer.text).toBe(200);
  const keys: Record<string, unknown> = {};
  for (const [name, p] of Object.entries<{ val: unknown; type?: string }>(answer.json.properties))
    keys[name] = { val: p.val, ...(p.type ? { type: p.type } : {}) };
  const files: Record<string, string> = {};
  for (const [file, f] of Object.entries<{ content: string }>(answer.json.files)) files[file] = f.content;
  return { keys, files } satisfies Reads;
}

export interface ContextEntry {
  readonly keys: { key: string; before?: unknown; after?: unknown }[];
  readonly files: { path: string; before?: { content: string }; after?: { content: string } }[];
}

/**
 * The keys and files a dry run must list for a context that read `was` before the write and
 * reads `is` after it, in the dry run's order (keys by name without regard to case, files by
 * path); undefined when the context reads the same.
 */
export function effectsBetween(was: Reads, is: Reads): ContextEntry | undefined {
  const keys = [...new Set([...Object.keys(was.keys), ...Object.keys(is.keys)])]
    .filter((k) => JSON.stringify(was.keys[k]) !== JSON.stringify(is.keys[k]))
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1))
    .map((k) => ({
      key: k,
      ...(was.keys[k] ? { before: was.keys[k] } : {}),
      ...(is.keys[k] ? { after: is.keys[k] } : {}),
    }));
  const files = [...new Set([...Object.keys(was.files), ...Object.keys(is.files)])]
    .filter((p) => was.files[p] !== is.files[p])
    .sort()
    .map((p) => ({
      path: p,
      ...(was.files[p] !== undefined ? { before: { content: was.files[p] } } : {}),
      ...(is.files[p] !== undefined ? { after: { content: is.files[p] } } : {}),
    }));
  return keys.length || files.length ? { keys, files } : undefined;
}

/** Every ref with its commit, `git count-objects -v`, and every file under objects/: what a write would change. */
export function diskState(gitdir: string): string {
  const objects = readdirSync(join(gitdir, 'objects'), { recursive: true }).map(String).sort();
  return [
    git(gitdir, 'for-each-ref', '--format=%(refname) %(objectname)'),
    git(gitdir, 'count-objects', '-v'),
    objects.join('\n'),
  ].join('\n');
}
