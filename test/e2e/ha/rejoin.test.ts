/**
 * A node that returns to its HA cluster holding a commit the cluster never acknowledged: its
 * leader journaled a push, then died before sending it to any member (the `record-journaled`
 * fault point). Restarted, the node's journal replays the push onto its own main, which then
 * parts from the history the new leader went on with. The node keeps that commit under
 * `refs/cfghub/orphaned/<time>/main` (never deleted), and its main follows the leader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, headOf, pushTo } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster } from '../../support/haCluster.js';
import { until } from '../../support/poll.js';

const APP = 'acme/app';
const requireEtcd = process.env.CI === 'true';

const push = (url: string, value: string) =>
  pushTo(url, `/rest/push/${APP}`, {
    changeComment: `set ${value}`,
    enableKeyCreation: true,
    data: [{ key: 'flag', values: [{ context: '*', value }] }],
  });

describe.runIf(etcdInstalled || requireEtcd)('a node rejoining its HA cluster', { timeout: 120_000 }, () => {
  let cluster: HaCluster;

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      leaseSeconds: 2,
      env: { CFGHUB_FAULT: 'record-journaled', CFGHUB_FAULT_ARMED_BY: 'SIGUSR2' },
      prepare: (repos) =>
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull'),
    });
    await cluster.syncSetOf(2);
  }, 60_000);
  afterAll(() => cluster?.close());

  it('keeps the commits the cluster never acknowledged under refs/cfghub/orphaned/ and follows the leader', async () => {
    const leader = await cluster.leader();
    expect((await push(leader.url, 'acknowledged')).status).toBe(200);
    const base = headOf(leader.repos, APP);

    // The leader journals the next push, then dies before any member hears of it.
    leader.signal('SIGUSR2');
    await expect(push(leader.url, 'never-acknowledged')).rejects.toThrow();
    expect(await leader.exited()).toBe('SIGKILL');

    const next = await cluster.leader();
    expect(next).not.toBe(leader);
    const after = await push(next.url, 'after-the-failover');
    expect(after.status).toBe(200);
    const leaderHead = after.etag!.replace(/"/g, '');

    // Its journal's record is replayed at the start: its main holds the push no one acknowledged.
    await leader.start();
    const gitdir = gitdirOf(leader.repos, APP);
    await until(() => headOf(leader.repos, APP) === leaderHead, 'the returning node at the leader’s head', 30_000);

    const orphaned = git(gitdir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/cfghub/orphaned/')
      .split('\n')
      .filter(Boolean);
    expect(orphaned).toHaveLength(1);
    const [ref, commit] = orphaned[0].split(' ');
    expect(ref).toMatch(/^refs\/cfghub\/orphaned\/[0-9TZ]+\/main$/);
    // The orphan is the push the leader journaled: one commit on the acknowledged base, on no other node.
    expect(git(gitdir, 'rev-parse', `${commit}^`).trim()).toBe(base);
    expect(git(gitdir, 'show', '-s', '--format=%s', commit)).toContain('never-acknowledged');
    git(gitdir, 'cat-file', '-e', `${commit}^{tree}`);
    expect(() => git(gitdir, 'merge-base', '--is-ancestor', commit, 'refs/heads/main')).toThrow();
    for (const node of cluster.nodes.filter((node) => node !== leader))
      expect(() => git(gitdirOf(node.repos, APP), 'cat-file', '-e', commit)).toThrow();
    git(gitdir, 'fsck', '--strict', '--no-progress');
    // And it takes its place in the sync set again.
    await cluster.syncSetOf(2);
  });
});
