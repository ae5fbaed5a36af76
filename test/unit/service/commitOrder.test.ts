/**
 * A commit made without the push journal (a command on the folder, or a server whose journal
 * cannot be made) makes its files durable in rounds, in an order that needs nothing of the file
 * system: everything the new commit needs (its pack, its index, the ref lock's content, the pack
 * folder's entries) is fsynced before the ref's rename, and only the ref's own folder after it. An
 * ext4 without its journal keeps no order between two renames, so a pack folder fsynced after the
 * ref's rename (as before 2026-11-27) could lose the pack's entry through a power cut that kept the
 * ref's.
 */
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listen } from '../../../src/lib/telemetry.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { push } from '../../../src/service/write/push.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { tempDir } from '../../support/harness.js';

let dir: ReturnType<typeof tempDir>;
let repository: GitRepository;
beforeAll(async () => {
  dir = tempDir();
  repository = await createRepository(new RepositoryRegistry(dir.path), {
    account: 'acme',
    name: 'order',
    levels: ['Env'],
  });
});
afterAll(() => dir.remove());

describe('a commit made durable by its own files', () => {
  it('fsyncs everything but the ref folder before the ref is renamed, and the ref folder after', async () => {
    let fsyncs = 0;
    let atRename: number | undefined;
    const stop = listen({ fsync: () => fsyncs++ });
    const rename = fs.promises.rename;
    const spy = vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      if (String(from).endsWith('refs/heads/main.lock')) atRename = fsyncs;
      return rename(from, to);
    });
    try {
      const result = await push(
        repository,
        {
          changeComment: 'one key',
          enableKeyCreation: true,
          data: [{ kind: 'key', key: 'db.host', values: [{ context: '*', value: 'a', hasValue: true }] }],
        },
        { forceKeyPush: false },
      );
      expect(result.kind).toBe('applied');
    } finally {
      spy.mockRestore();
      stop();
    }
    // The pack, its index, the lock's content and the pack folder; then the ref's folder.
    expect(atRename).toBe(4);
    expect(fsyncs).toBe(5);
  });
});
