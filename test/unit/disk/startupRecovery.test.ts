/**
 * The start-up recovery pass (src/disk/startupRecovery.ts) on a real repository made by cfghub:
 * what crashed writers left (a half-created repository, a `.keep` and a temporary pack file of
 * cfghub's, stale ref and packed-refs locks) is removed and reported per repository without a
 * path; what may still be in use (fresh leftovers, an operator's `.keep`) stays; git still finds
 * the repository whole afterwards.
 */
import { afterEach, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { KEEP_TEXT } from '../../../src/disk/objects/objectStore.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { onStaleLockRemoved, STALE_LOCK_MS, type StaleLockReport } from '../../../src/disk/refs/refs.js';
import { recoverAtStart } from '../../../src/disk/startupRecovery.js';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Makes a file look left behind by a process that died well past the stale age. */
function old(path: string): void {
  const then = new Date(Date.now() - STALE_LOCK_MS - 60_000);
  utimesSync(path, then, then);
}

it('removes and reports what crashed writers left, keeps what may be in use, and leaves git a whole repository', async () => {
  root = mkdtempSync(join(tmpdir(), 'cfghub-recovery-'));
  const registry = new RepositoryRegistry(root);
  const repository = await createRepository(registry, { account: 'acme', name: 'app', levels: ['Environment'] });
  registry.close();
  const pack = join(repository.gitdir, 'objects', 'pack');
  mkdirSync(pack, { recursive: true });
  const planted = {
    halfCreated: join(root, 'acme', '.creating-0123456789ab'),
    keep: join(pack, 'pack-dead.keep'),
    temporary: join(pack, '.cfghub-tmp-dead.pack'),
    refLock: join(repository.gitdir, 'refs', 'heads', 'main.lock'),
    packedRefsLock: join(repository.gitdir, 'packed-refs.lock'),
  };
  mkdirSync(join(planted.halfCreated, 'objects'), { recursive: true });
  writeFileSync(planted.keep, KEEP_TEXT);
  writeFileSync(planted.temporary, 'half a pack');
  writeFileSync(planted.refLock, '0'.repeat(40) + '\n');
  writeFileSync(planted.packedRefsLock, '');
  for (const path of Object.values(planted)) old(path);
  const kept = {
    freshTemporary: join(pack, '.cfghub-tmp-live.pack'),
    operatorKeep: join(pack, 'pack-operator.keep'),
    freshHalfCreated: join(root, 'acme', '.creating-ba9876543210'),
  };
  writeFileSync(kept.freshTemporary, 'being written');
  writeFileSync(kept.operatorKeep, 'kept by the operator\n');
  old(kept.operatorKeep);
  mkdirSync(kept.freshHalfCreated);

  const reported: StaleLockReport[] = [];
  const stop = onStaleLockRemoved((report) => reported.push(report));
  const findings = await recoverAtStart(root).finally(stop);

  for (const path of Object.values(planted)) expect(existsSync(path), path).toBe(false);
  for (const path of Object.values(kept)) expect(existsSync(path), path).toBe(true);
  expect(findings).toEqual([
    { repository: 'acme', halfCreatedRemoved: 1, leftoversRemoved: 0, staleLocksRemoved: 0 },
    { repository: 'acme/app', halfCreatedRemoved: 0, leftoversRemoved: 2, staleLocksRemoved: 2 },
  ]);
  expect(JSON.stringify(findings)).not.toContain(root);
  // The locks are reported as any stale lock is (the server logs `stale-lock-removed`).
  expect(reported.map((report) => [report.repository, report.ref]).sort()).toEqual([
    ['acme/app', 'packed-refs'],
    ['acme/app', 'refs/heads/main'],
  ]);
  execFileSync('git', ['--git-dir', repository.gitdir, 'fsck', '--strict'], { stdio: 'pipe' });
  expect(await recoverAtStart(root)).toEqual([]); // nothing left to do the second time
});
