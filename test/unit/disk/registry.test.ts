/**
 * The registry's memory of found repositories: it never answers for a folder that is gone once
 * the repository's head is read, and creation always looks at the disk, so a repository removed
 * by hand can be created again by a process that had found it before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { RepositoryGoneError } from '../../../src/disk/errors.js';

const NEW = { account: 'acme', name: 'app', levels: ['Environment'] };

describe('RepositoryRegistry', () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates a repository again after its folder was removed, in the process that had found it', async () => {
    root = mkdtempSync(join(tmpdir(), 'cfghub-registry-'));
    const registry = new RepositoryRegistry(root);
    const first = await createRepository(registry, NEW);
    rmSync(first.gitdir, { recursive: true, force: true });
    const second = await createRepository(registry, NEW); // not "already exists"
    expect(registry.find('ACME', 'App')?.head()).toBe(second.head());
  });

  it('reports a found repository whose folder is gone once its head is read, and finds nothing after', async () => {
    root = mkdtempSync(join(tmpdir(), 'cfghub-registry-'));
    const registry = new RepositoryRegistry(root);
    const repository = await createRepository(registry, NEW);
    rmSync(repository.gitdir, { recursive: true, force: true });
    expect(() => registry.find('acme', 'app')!.head()).toThrow(RepositoryGoneError);
    expect(registry.find('acme', 'app')).toBeUndefined();
  });
});
