/**
 * Creating a folder and its missing parents one level at a time. Node 20's
 * `mkdir(…, { recursive: true })` never returns under `/proc` (it retries ENOENT forever, at full
 * CPU): here each level is one plain `mkdir`, at most as many as the path has parts, and the first
 * refusal ends it with the folder that could not be made. And the names of the folders in a folder.
 */
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { FolderError } from './errors.js';

function kindOf(path: string): 'folder' | 'other' | 'missing' {
  try {
    return fs.statSync(path).isDirectory() ? 'folder' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

/** Makes `path` (absolute) and its missing parents; true if it made `path`, false if it was there. */
export function makeFolders(path: string, mode?: number): boolean {
  const missing: string[] = [];
  let at = path;
  for (;;) {
    const kind = kindOf(at);
    if (kind === 'folder') break;
    if (kind === 'other') throw new FolderError(`${at} exists and is not a folder`, at);
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break; // the root itself is missing: mkdir below says why
    at = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      fs.mkdirSync(folder, mode === undefined ? undefined : { mode });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && kindOf(folder) === 'folder') continue; // made by someone else meanwhile
      throw new FolderError(`cannot create the folder ${folder} (${code ?? 'error'})`, folder);
    }
  }
  return missing.length > 0;
}

/** The names of the folders in `path` (not its files); none when `path` is missing. */
export function subfolders(path: string): string[] {
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
