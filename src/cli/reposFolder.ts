/**
 * The repositories folder of a command: `--repos DIR`, else `CFGHUB_REPOS`, else `./repos` of the
 * current folder. A command that reads repositories refuses a folder that is missing or
 * is a file, naming the folder and where its name came from, since `./repos` depends on the folder
 * the command runs in. Messages of the command line may name paths: they are the user's own.
 */
import * as fs from 'node:fs';
import { resolve } from 'node:path';
import { ServiceError } from '../service/errors.js';

/** Where the folder's name came from, for messages. */
function source(option: string | undefined): string {
  if (option !== undefined) return '--repos';
  if (process.env.CFGHUB_REPOS) return 'CFGHUB_REPOS';
  return `./repos of the current folder ${process.cwd()}`;
}

/** The folder named by the last command's arguments, for messages about what it did not find. */
let lastFolder: string | undefined;

export function searchedFolder(): string | undefined {
  return lastFolder;
}

/** The folder's absolute path, not checked (serve and repo create make it when missing). */
export function reposPath(option: string | undefined): string {
  lastFolder = resolve(option ?? (process.env.CFGHUB_REPOS || './repos'));
  return lastFolder;
}

/** A refusal when the path exists and is not a folder; undefined when it is one or is missing. */
export function notAFolder(path: string, option: string | undefined): ServiceError | undefined {
  try {
    if (fs.statSync(path).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return new ServiceError(
    'invalid_argument',
    `the repositories folder ${path} (from ${source(option)}) is a file, not a folder`,
  );
}

/** The folder's absolute path, which must be an existing folder. */
export function reposDir(option: string | undefined): string {
  const path = reposPath(option);
  const refusal = notAFolder(path, option);
  if (refusal) throw refusal;
  if (!fs.existsSync(path)) {
    throw new ServiceError(
      'not_found',
      `there is no repositories folder ${path} (from ${source(option)}): run the command where the server runs, or set CFGHUB_REPOS (or --repos) to the folder the server uses`,
    );
  }
  return path;
}
