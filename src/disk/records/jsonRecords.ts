/**
 * A list of records kept as one JSON file in `<repos>/.cfghub/` (`{ "<field>": [ … ] }`), read
 * whole on each use (the files are small and rarely read) and replaced under the one lock
 * primitive (lockedFileUpdate.ts), durably: the admin tokens' and the webhooks' files.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { updateLockedFile } from '../refs/lockedFileUpdate.js';

export class JsonRecords<T> {
  private readonly path: string;

  constructor(
    private readonly folder: string,
    private readonly name: string,
    private readonly field: string,
    private readonly schema: z.ZodType<Record<string, T[]>>,
    private readonly what: string,
    private readonly lock: { staleMs: number; owner: string; mode: number },
  ) {
    this.path = join(folder, name);
  }

  /** Every record, as on disk now; none when the file does not exist. */
  all(): T[] {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    return this.schema.parse(JSON.parse(text))[this.field];
  }

  /** Replaces the records by `change(records)`, under the lock, durably. Returns what `change` returned. */
  async update<R>(change: (records: T[]) => { records: T[]; result: R }): Promise<R> {
    await fs.promises.mkdir(this.folder, { recursive: true, mode: 0o700 });
    return updateLockedFile(this.folder, this.name, this.what, this.lock, () => {
      const { records, result } = change(this.all());
      return { content: `${JSON.stringify({ [this.field]: records }, null, 2)}\n`, result };
    });
  }
}
