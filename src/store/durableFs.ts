/**
 * File system adapters for isomorphic-git, and the durable-write helpers the write path uses.
 *
 * isomorphic-git writes loose objects straight to their final path and never fsyncs
 * (reference/git-engine-notes.md, section 6), so a crash could leave a truncated object that is
 * never rewritten. The write adapter turns every object write into write-temporary, fsync, rename,
 * and remembers the folders it touched so the caller can fsync them before the ref moves.
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

/**
 * The rejection for a missing file, made once: isomorphic-git probes paths that often do not
 * exist (a loose object that is packed, an object about to be written), and Node's own ENOENT
 * error costs a stack trace and a formatted message each time.
 */
const NOT_FOUND: NodeJS.ErrnoException = Object.freeze(Object.assign(new Error('no such file'), { code: 'ENOENT' }));

const refuseWrite = async (): Promise<never> => {
  throw new Error('read-only file system adapter');
};

/** Reads through the synchronous calls: small files, and far fewer thread-pool round trips. */
export const readFs = {
  promises: {
    // isomorphic-git calls readFile() without a path to find out whether the API returns promises.
    readFile: (path: string | undefined, options?: unknown): Promise<Buffer | string> => {
      if (path === undefined || !fs.existsSync(path)) return Promise.reject(NOT_FOUND);
      return Promise.resolve(fs.readFileSync(path, options as fs.ObjectEncodingOptions));
    },
    stat: (path: string): Promise<fs.Stats> => {
      const stat = fs.statSync(path, { throwIfNoEntry: false });
      return stat ? Promise.resolve(stat) : Promise.reject(NOT_FOUND);
    },
    lstat: (path: string): Promise<fs.Stats> => {
      const stat = fs.lstatSync(path, { throwIfNoEntry: false });
      return stat ? Promise.resolve(stat) : Promise.reject(NOT_FOUND);
    },
    readdir: async (path: string) => fs.readdirSync(path),
    readlink: async (path: string) => fs.readlinkSync(path),
    writeFile: refuseWrite,
    mkdir: refuseWrite,
    rmdir: refuseWrite,
    unlink: refuseWrite,
    symlink: refuseWrite,
    chmod: async () => undefined,
  },
};

/** One batch of durable object writes: isomorphic-git writes through it, then `sync()` fsyncs the folders. */
export class DurableWriteFs {
  private readonly dirtyFolders = new Set<string>();
  readonly promises = {
    readFile: readFs.promises.readFile,
    stat: readFs.promises.stat,
    lstat: readFs.promises.lstat,
    readdir: readFs.promises.readdir,
    readlink: readFs.promises.readlink,
    chmod: readFs.promises.chmod,
    unlink: (path: string) => fs.promises.unlink(path),
    rmdir: (path: string) => fs.promises.rmdir(path),
    symlink: async () => {
      throw new Error('symbolic links are never written');
    },
    mkdir: async (path: string) => {
      await fs.promises.mkdir(path);
      this.dirtyFolders.add(dirname(path));
    },
    writeFile: async (path: string, data: Uint8Array | string) => {
      await writeFileAtomic(path, data);
      this.dirtyFolders.add(dirname(path));
    },
  };

  /** Makes every rename and folder creation of this batch durable. */
  async sync(): Promise<void> {
    await Promise.all([...this.dirtyFolders].map(fsyncFolder));
    this.dirtyFolders.clear();
  }
}

/**
 * Writes `data` to a temporary file beside `path` and fsyncs it; returns the temporary file's
 * path, for the caller to rename into place. `tmp_obj_` is the prefix git's gc recognises and
 * prunes if a crash leaves one behind.
 */
export async function writeTemporary(path: string, data: Uint8Array | string, mode = 0o444): Promise<string> {
  const temporary = `${dirname(path)}/tmp_obj_${process.pid}_${randomBytes(6).toString('hex')}`;
  const handle = await fs.promises.open(temporary, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temporary;
}

/** Moves a temporary file into place; removes it if that fails. */
export async function renameIntoPlace(temporary: string, path: string): Promise<void> {
  try {
    await fs.promises.rename(temporary, path);
  } catch (error) {
    await fs.promises.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Writes a file under a temporary name, fsyncs it and renames it into place. */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode = 0o444): Promise<void> {
  await renameIntoPlace(await writeTemporary(path, data, mode), path);
}

export async function fsyncFolder(path: string): Promise<void> {
  const handle = await fs.promises.open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
