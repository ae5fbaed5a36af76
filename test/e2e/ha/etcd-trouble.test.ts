/**
 * An HA cluster's etcd in trouble, against a real three-member etcd: losing one member changes
 * nothing a client sees (the same leadership goes on acknowledging every push); an etcd rebuilt
 * with new data (a new cluster id, revisions counted from 1 again) is refused by every node until
 * an operator runs `cfghub ha bootstrap NODE`, which makes NODE the leader with epochs counting
 * on above every epoch a node has seen. Reads are served throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, getJson, git, gitdirOf, pushTo, runCommand } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster } from '../../support/haCluster.js';
import { DEFAULT_LEASE_SECONDS } from '../../../src/service/ha/keyspace.js';
import { until } from '../../support/poll.js';

const APP = 'acme/app';
const requireEtcd = process.env.CI === 'true';

let counter = 0;
const push = (url: string) =>
  pushTo(url, `/rest/push/${APP}`, {
    changeComment: `push ${++counter}`,
    enableKeyCreation: true,
    data: [{ key: 'flag', values: [{ context: '*', value: `v${counter}` }] }],
  });

describe.runIf(etcdInstalled || requireEtcd)('an HA cluster whose etcd is in trouble', { timeout: 120_000 }, () => {
  let cluster: HaCluster;

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      etcdMembers: 3,
      leaseSeconds: DEFAULT_LEASE_SECONDS, // the default: what the promise is made for
      prepare: (repos) =>
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull'),
    });
    await cluster.syncSetOf(2);
  }, 90_000);
  afterAll(() => cluster?.close());

  it('goes on as before when one etcd member of three is lost', async () => {
    const leader = await cluster.leader();
    const epoch = (await leader.status())!.epoch;
    // A member that is not etcd's leader: etcd itself goes on at once (the loss of its leader costs
    // etcd an election first, which the fault test's long form covers).
    const etcdLeader = (await cluster.etcd.leaderIndex()) ?? 0;
    await cluster.etcd.kill((etcdLeader + 1) % cluster.etcd.size);
    const lost = performance.now();
    // Pushes one after another, through every node: each answered 200 by the same leadership.
    let node = 0;
    while (performance.now() - lost < 4_000) {
      const answer = await push(cluster.nodes[node++ % cluster.nodes.length].url);
      expect(answer.status, answer.body).toBe(200);
    }
    const status = await leader.status();
    expect(status?.role).toBe('leader');
    expect(status?.epoch).toBe(epoch);
    expect(status?.problem).toBeNull();
    await cluster.etcd.restartAll();
  });

  it('refuses a rebuilt etcd until an operator bootstraps the cluster from a named node', async () => {
    await cluster.syncSetOf(2);
    const before = await cluster.leader();
    let acknowledged = '';
    await until(
      async () => {
        const answer = await push(before.url);
        acknowledged = answer.status === 200 ? answer.etag!.replace(/"/g, '') : '';
        return acknowledged !== '';
      },
      'a push acknowledged before the rebuild',
      30_000,
    );
    const highest = Math.max(...(await Promise.all(cluster.nodes.map(async (node) => (await node.status())!.epoch))));

    await cluster.etcd.rebuild(); // new data, a new cluster id, revisions from 1
    // Every node refuses it and says why; writes are refused, reads served.
    for (const node of cluster.nodes)
      await until(
        async () => {
          const status = await node.status();
          return /cfghub ha bootstrap/.test(status?.problem ?? '') && status?.role === 'follower';
        },
        `node ${node.index} a follower naming the bootstrap`,
        30_000,
      );
    for (const node of cluster.nodes) {
      const refused = await push(node.url);
      expect(refused.status).toBe(503);
      expect(refused.body).toContain('cfghub ha bootstrap');
      const read = await getJson(node.url, `/rest/pull/${APP}`, { Context: 'Prod' });
      expect(read.status).toBe(200);
      expect(read.headers.get('replica-lag')).toBeTruthy();
    }

    // The operator names the node that leads; every node is asked for the highest epoch it saw.
    const chosen = cluster.nodes.find((node) => node !== before)!;
    const chosenId = (await chosen.status())!.node;
    const bootstrap = await runCommand(
      [
        'ha',
        'bootstrap',
        chosenId,
        '--cluster',
        'test',
        '--etcd',
        cluster.etcd.endpoints.join(','),
        '--node-url',
        ...cluster.nodes.map((node) => node.url),
      ],
      { env: { ...process.env, CFGHUB_REPLICATION_TOKEN: cluster.token } },
    );
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    expect(JSON.parse(bootstrap.stdout).epochBase).toBe(highest);

    const leader = await cluster.leader(30_000);
    expect(leader).toBe(chosen);
    expect((await leader.status())!.epoch).toBeGreaterThan(highest);
    const after = await push(leader.url);
    expect(after.status).toBe(200);
    // Nothing acknowledged before the rebuild is lost, on any node once caught up.
    const head = after.etag!.replace(/"/g, '');
    for (const node of cluster.nodes) {
      await until(() => git(gitdirOf(node.repos, APP), 'rev-parse', 'main').trim() === head, 'caught up', 30_000);
      git(gitdirOf(node.repos, APP), 'merge-base', '--is-ancestor', acknowledged, 'main');
    }
    await cluster.syncSetOf(2);
  });
});
