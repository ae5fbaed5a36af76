/**
 * The file system adapter isomorphic-git reads through, and the durable-write helpers of the
 * write path: write a temporary file, fsync it, rename it into place, fsync the folder.
 * (isomorphic-git itself never fsyncs and writes files in place: git-engine-notes §6.)
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
