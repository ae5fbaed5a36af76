/**
 * What `cfghub serve` checks before it serves: the repositories folder (made when
 * missing, refused when it is a file or cannot be made), and why it could not listen, in words
 * that say what to do.
 */
import { ServiceError } from '../service/errors.js';
import { makeFolders } from '../disk/folders.js';
import { FolderError } from '../disk/errors.js';

/** Makes the repositories folder when missing; true if it made it. A ServiceError naming it otherwise. */
export function prepareReposFolder(folder: string): boolean {
  try {
    return makeFolders(folder);
  } catch (error) {
    if (error instanceof FolderError) {
      throw new ServiceError(
        'invalid_argument',
        `cannot use the repositories folder: ${error.message} (set it with --repos or CFGHUB_REPOS)`,
      );
    }
    throw error;
  }
}

/** A failure to listen as a message naming the address and what to do. */
export function listenError(error: unknown, where: { readonly port: number; readonly host: string }): unknown {
  const code = (error as NodeJS.ErrnoException)?.code;
  const address = `${where.host}:${where.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new ServiceError(
        'unavailable',
        `port ${where.port} on ${where.host} is already in use (another cfghub?): stop it, or serve on another port with --port N or PORT=N`,
      );
    case 'EACCES':
      return new ServiceError(
        'forbidden',
        `not allowed to listen on ${address}: ports below 1024 need privileges; choose another with --port N or PORT=N`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ServiceError(
        'invalid_argument',
        `cannot listen on ${address}: ${where.host} is not an address of this machine; choose another with --host H or HOST=H`,
      );
    default:
      return error;
  }
}
