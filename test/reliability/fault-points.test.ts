/**
 * Each step of a push's commit, crashed deterministically (CFGHUB_FAULT=<step> makes the server
 * SIGKILL itself there): after a restart the push is absent if the crash came before its record in
 * the push journal was durable and fully present after (the ref renamed then, or by the journal's
 * replay at the restart), `git fsck --strict` is clean, and the next push is served,
 * including after the crash that left `refs/heads/main.lock` behind.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_STEPS, type FaultStep } from '../../src/disk/faultPoints.js';
import { cliOk, git, gitdirOf, headOf, keysAtHead, pushTo, tempDir } from '../support/harness.js';
import { startServerProcess } from '../support/serverProcess.js';
import { until } from '../support/poll.js';

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir('cfghub-fault-');
});

afterAll(() => dir.remove());

/** Steps after which the ref already holds the new commit. */
const MOVED_AT: ReadonlySet<FaultStep> = new Set(['ref-renamed', 'lock-released']);
/** Steps after which the push is committed once the server starts again: its journal's record is durable, and replayed then (journalReplay.ts). */
const COMMITTED_AT: ReadonlySet<FaultStep> = new Set(['journaled', ...MOVED_AT]);

const setKey = (key: string) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*;*', value: key }] }],
});

describe.each(FAULT_STEPS)('a crash at %s', (step) => {
  it(`leaves the push ${COMMITTED_AT.has(step) ? 'fully present' : 'absent'}, a clean repository, and a server that takes the next push`, async () => {
    const name = `acme/fault-${step}`;
    cliOk(dir.path, 'repo', 'create', name, '--context', 'Environment,Application', '--token-free-push');
    const gitdir = gitdirOf(dir.path, name);
    const before = headOf(dir.path, name);

    const faulty = await startServerProcess(dir.path, { CFGHUB_FAULT: step });
    const answer = await pushTo(faulty.url, `/rest/push/${name}`, setKey('crashed.push')).catch(
      (error: Error) => error,
    );
    expect(answer).toBeInstanceOf(Error); // the connection died with the process: no answer at all
    expect(await faulty.exited).toBe('SIGKILL');

    const moved = MOVED_AT.has(step);
    const committed = COMMITTED_AT.has(step);
    expect(headOf(dir.path, name) === before).toBe(!moved);
    expect(keysAtHead(gitdir)).toEqual(moved ? ['crashed.push'] : []);
    if (moved) expect(git(gitdir, 'rev-list', '--count', `${before}..refs/heads/main`).trim()).toBe('1');
    // A crash before the rename leaves the lock (taken while the objects are written, so perhaps not
    // yet at the first two steps); the one before renaming the pack, its temporary files.
    const lockLeft = existsSync(join(gitdir, 'refs/heads/main.lock'));
    if (step === 'lock-taken' || step === 'journaled' || moved) expect(lockLeft).toBe(!moved);
    // Temporary files are named so `git gc --prune=now` leaves them alone (not `tmp_*`); a crash
    // after they are renamed leaves the pack's `.keep` (held until the ref moves), which git honours.
    const temporaries = readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.startsWith('.cfghub-tmp-'));
    expect(temporaries.length > 0).toBe(step === 'objects-written');
    const keeps = readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.endsWith('.keep'));
    expect(keeps.length > 0).toBe(step !== 'objects-written');
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });

    // Restarted (stale locks age out after 1 s here, 30 s by default), the server takes the next push.
    const restarted = await startServerProcess(dir.path, { CFGHUB_STALE_LOCK_SECONDS: '1' });
    try {
      const next = await pushTo(restarted.url, `/rest/push/${name}`, setKey('next.push'));
      expect(next.status).toBe(200);
      expect(keysAtHead(gitdir)).toEqual(committed ? ['crashed.push', 'next.push'] : ['next.push']);
      const logged = () => restarted.output().includes('"event":"stale-lock-removed"');
      // The log line comes through a pipe, maybe after the answer: waited for where it is expected.
      if (lockLeft) await until(logged, 'the stale-lock-removed log line');
      expect(logged()).toBe(lockLeft);
    } finally {
      await restarted.stop();
    }
    expect(existsSync(join(gitdir, 'refs/heads/main.lock'))).toBe(false);
    execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
  });
});
