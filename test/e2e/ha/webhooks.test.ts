/**
 * Webhooks in an HA cluster, against a real receiving server that checks each signature: a hook
 * added through the leader is on every member's disk when the leader answers; the leader delivers
 * each commit once (pushed to it or forwarded by a follower), the followers never; after a SIGKILL
 * of the leader, the node elected delivers the commits its old leader had not finished delivering
 * (at least once: a delivery held unanswered by the receiver is made again) and then every new
 * commit, once. The webhooks' sealing key goes to the members (the cluster's token) only: a read
 * replica of the leader receives neither it nor a sealed secret. Real `cfghub serve --cluster`
 * processes and a real etcd on loopback.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, headOf } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster, type HaNode } from '../../support/haCluster.js';
import { holdsFor, until } from '../../support/poll.js';
import { Receiver } from '../../support/webhookReceiver.js';
import { tempDir } from '../../support/paths.js';
import { eventually, startTestReplica } from '../../support/replicas.js';
import {
  expectNoHookSecrets,
  expectReplicaCannotOpenHooks,
  firstFeedLine,
  hookSecretsOn,
  stateAnswer,
} from '../../support/replicatedHooks.js';

const requireEtcd = process.env.CI === 'true';
const APP = 'acme/app';
const SECRET = 'cluster-receiver-secret-5d1e';

/** What a node's folder holds of the webhooks: the hooks and the delivered marks, as on disk. */
function heldHooks(node: HaNode): { hooks: string[]; marks: Record<string, string> } {
  const read = (file: string) => {
    try {
      return JSON.parse(readFileSync(join(node.repos, '.cfghub', file), 'utf8')) as Record<string, unknown[]>;
    } catch {
      return {};
    }
  };
  const hooks = ((read('webhooks.json').webhooks ?? []) as { id: string }[]).map((hook) => hook.id);
  const marks = Object.fromEntries(
    ((read('webhook-delivered.json').delivered ?? []) as { repository: string; commit: string }[]).map((mark) => [
      mark.repository,
      mark.commit,
    ]),
  );
  return { hooks, marks };
}

describe.runIf(etcdInstalled || requireEtcd)('webhooks in an HA cluster', { timeout: 180_000 }, () => {
  let cluster: HaCluster;
  let admin = '';
  let replicationToken = '';
  const receiver = new Receiver(SECRET);

  beforeAll(async () => {
    await receiver.start();
    cluster = await HaCluster.start({
      nodes: 3,
      leaseSeconds: 2,
      prepare: (repos) => {
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env', '--token-free-push');
        admin = cliOk(repos, 'admin-token', 'create', '--name', 'operator').trim();
        replicationToken = cliOk(repos, 'token', 'create', '--replication').trim();
      },
    });
    await cluster.syncSetOf(2);
  }, 90_000);
  afterAll(async () => {
    await cluster?.close();
    await receiver.stop();
  });

  const push = async (node: HaNode, value: string): Promise<string> => {
    const response = await fetch(`${node.url}/rest/push/${APP}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        changeComment: `pool ${value}`,
        enableKeyCreation: true,
        data: [{ key: 'pool.size', values: [{ context: '*', value }] }],
      }),
    });
    expect(response.status, await response.text()).toBe(200);
    return headOf(node.repos, APP);
  };
  const signedOf = (commit: string) => receiver.of(commit).filter((got) => got.signed);

  it('delivers each commit once, from the leader; after a SIGKILL the new leader delivers what was not delivered, then each new commit', async () => {
    const leader = await cluster.leader();
    const followers = cluster.nodes.filter((node) => node !== leader);
    const added = await fetch(`${leader.url}/rest/admin/repositories/${APP}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, secret: SECRET }),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const hook = ((await added.json()) as { id: string }).id;
    // Confirmed like every write of the admin API: on every member when the leader answers.
    for (const node of followers) expect(heldHooks(node).hooks, `node ${node.index}`).toContain(hook);

    // Pushed to the leader, and forwarded by a follower: one signed delivery each.
    const first = await push(leader, '10');
    const forwarded = await push(followers[0], '11');
    await until(() => signedOf(first).length >= 1 && signedOf(forwarded).length >= 1, 'both deliveries');
    await holdsFor(1_500, () => {
      expect(receiver.of(first).length).toBe(1);
      expect(receiver.of(forwarded).length).toBe(1);
    });
    expect(signedOf(first)[0].json.repository).toBe(APP);
    // The delivered mark travels to the members.
    await until(
      () => followers.every((node) => heldHooks(node).marks[APP] === forwarded),
      'the delivered mark on every member',
    );

    // A delivery the receiver holds unanswered when the leader dies: not marked delivered, so the
    // node elected delivers it again.
    receiver.mode = 'hang';
    const held = await push(leader, '12');
    await until(() => receiver.of(held).length === 1, 'the held delivery');
    await leader.kill();
    receiver.mode = 'ok';
    const next = await cluster.leader();
    expect(next).not.toBe(leader);
    await until(() => signedOf(held).length >= 2, 'the held commit delivered again by the new leader', 20_000);
    expect(receiver.of(first).length).toBe(1);
    expect(receiver.of(forwarded).length).toBe(1);

    // A new commit on the new leader: delivered once.
    const after = await push(next, '13');
    await until(() => signedOf(after).length >= 1, 'the new leader delivering its commit');
    await holdsFor(1_500, () => expect(receiver.of(after).length).toBe(1));
    expect(signedOf(after)[0].json.commit).toBe(after);
  });

  it("takes the cluster's token only on the HA routes: a read replica's token is refused and moves no epoch", async () => {
    const leader = await cluster.leader();
    const before = await leader.status();
    const asReplica = { 'Client-Token': replicationToken, 'Content-Type': 'application/json' };
    const forged = JSON.stringify({ epoch: (before?.epoch ?? 0) + 1_000, leader: 'forged' });
    for (const node of cluster.nodes.filter((each) => each.running)) {
      for (const [method, route, body] of [
        ['POST', 'epoch', forged],
        ['POST', 'sync', forged],
        ['POST', 'records', 'x'],
        ['GET', 'heads', undefined],
        ['GET', 'status', undefined],
      ] as const) {
        const answer = await fetch(`${node.url}/rest/ha/${route}`, {
          method,
          headers: route === 'records' ? { ...asReplica, 'Cfghub-Epoch': '999999' } : asReplica,
          body,
        });
        const text = await answer.text();
        expect(answer.status, `${method} /rest/ha/${route} on node ${node.index}: ${text}`).toBe(403);
        expect(text).toContain("the cluster's replication token only");
      }
    }
    expect((await leader.status())?.epoch).toBe(before?.epoch);
    expect((await cluster.leader()).index).toBe(leader.index);
  });

  it("sends the sealing key to the cluster's members only: a read replica of the leader receives no key and no sealed secret", async () => {
    const leader = await cluster.leader();
    const added = await fetch(`${leader.url}/rest/admin/repositories/${APP}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, secret: SECRET }),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const { key } = hookSecretsOn(leader.repos);

    // A member (the cluster's token) receives the key, and holds it: what lets it deliver once elected.
    const asMember = await stateAnswer(leader.url, cluster.token);
    expect((asMember.json.webhooks as { key?: string }).key).toBe(key);
    const members = cluster.nodes.filter((node) => node !== leader && node.running);
    for (const node of members) expect(hookSecretsOn(node.repos).key, `node ${node.index}`).toBe(key);
    expect((await firstFeedLine(leader.url, cluster.token, asMember.json)).startsWith('{"state":')).toBe(true);

    // A read replica (a replication token of its own) receives none of it, nor are webhooks compared for it.
    const asReplica = await stateAnswer(leader.url, replicationToken);
    expectNoHookSecrets(asReplica.text, leader.repos);
    expect(await firstFeedLine(leader.url, replicationToken, asReplica.json)).toBe('{"same":true}');
    const folder = tempDir();
    const replica = await startTestReplica(folder.path, leader.url, replicationToken);
    try {
      await eventually(
        'the read replica to catch up',
        () => headOf(folder.path, APP) === headOf(leader.repos, APP) || undefined,
      );
      expectReplicaCannotOpenHooks(folder.path, leader.repos, APP);
    } finally {
      await replica.close();
      folder.remove();
    }
  });
});
