/**
 * The etcd client against a real etcd (one member, and three for failing over between members).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClient, EtcdClusterChanged, EtcdUnavailable } from '../../../src/lib/etcd.js';
import { EtcdCluster, etcdInstalled } from '../../support/etcdCluster.js';
import { until } from '../../support/poll.js';

const requireEtcd = process.env.CI === 'true';

describe.runIf(etcdInstalled || requireEtcd)('etcd client against one member', () => {
  let etcd: EtcdCluster;
  let client: EtcdClient;
  beforeAll(async () => {
    etcd = await EtcdCluster.start(1);
    client = new EtcdClient(etcd.endpoints);
  });
  afterAll(() => etcd?.close());

  it('puts, gets and gets by prefix, with revisions', async () => {
    const first = await client.put('/t/a', 'one');
    await client.put('/t/b', 'two ünïcode');
    const { kvs } = await client.get('/t/', { prefix: true });
    expect(kvs.map((kv) => [kv.key, kv.value])).toEqual([
      ['/t/a', 'one'],
      ['/t/b', 'two ünïcode'],
    ]);
    expect(kvs[0].createRevision).toBe(first.revision);
    expect((await client.get('/t/none')).kvs).toEqual([]);
  });

  it('runs a transaction guarded on a create revision: only the first of two creators wins', async () => {
    const create = () =>
      client.txn(
        [{ key: '/t/leader', target: 'CREATE', number: 0 }],
        [{ put: { key: '/t/leader', value: 'me' } }],
        [{ get: { key: '/t/leader' } }],
      );
    const [one, two] = await Promise.all([create(), create()]);
    expect([one.succeeded, two.succeeded].sort()).toEqual([false, true]);
    const loser = one.succeeded ? two : one;
    expect(loser.ranges[0][0].value).toBe('me');
  });

  it('binds a key to a lease: it goes when the lease is revoked, and a renewal reports the TTL', async () => {
    const lease = await client.grant(30);
    await client.put('/t/leased', 'x', lease.id);
    expect(await client.keepAlive(lease.id)).toBeGreaterThan(0);
    await client.revoke(lease.id);
    expect((await client.get('/t/leased')).kvs).toEqual([]);
    expect(await client.keepAlive(lease.id)).toBeLessThanOrEqual(0);
  });

  it('watches a prefix from a revision, in order, and ends when closed', async () => {
    const start = (await client.put('/w/0', 'zero')).revision;
    await client.put('/w/1', 'one');
    const seen: string[] = [];
    const watch = client.watch('/w/', { prefix: true, fromRevision: start }, (event) =>
      seen.push(`${event.type} ${event.kv.key}`),
    );
    await until(() => seen.length === 2, 'the two past events');
    await client.txn([], [{ delete: { key: '/w/0' } }]);
    await until(() => seen.length === 3, 'the delete');
    expect(seen).toEqual(['PUT /w/0', 'PUT /w/1', 'DELETE /w/0']);
    watch.close();
    await watch.ended;
  });

  it('refuses an etcd whose cluster id changed (a rebuilt etcd)', async () => {
    const pinned = new EtcdClient(etcd.endpoints);
    await pinned.get('/t/a');
    await etcd.rebuild();
    await expect(pinned.get('/t/a')).rejects.toBeInstanceOf(EtcdClusterChanged);
    // A new client sees the new cluster, and its data is gone.
    expect((await new EtcdClient(etcd.endpoints).get('/t/a')).kvs).toEqual([]);
    client = new EtcdClient(etcd.endpoints);
  });

  it('says etcd is unavailable, within its timeout, when no member answers', async () => {
    const nowhere = new EtcdClient(['http://127.0.0.1:9'], { requestTimeoutMs: 300 });
    await expect(nowhere.get('/t/a')).rejects.toBeInstanceOf(EtcdUnavailable);
  });
});

describe.runIf(etcdInstalled || requireEtcd)('etcd client against three members', () => {
  let etcd: EtcdCluster;
  beforeAll(async () => {
    etcd = await EtcdCluster.start(3);
  });
  afterAll(() => etcd?.close());

  it('goes on through the other members when one is killed or paused', async () => {
    const client = new EtcdClient(etcd.endpoints, { requestTimeoutMs: 500 });
    await client.put('/m/a', '1');
    await etcd.kill(0);
    await until(
      async () =>
        await client.put('/m/a', '2').then(
          () => true,
          () => false,
        ),
      'a put with member 0 killed',
      15_000,
    );
    expect((await client.get('/m/a')).kvs[0].value).toBe('2');
    await etcd.pause(1);
    // Two of three down: no quorum, so nothing is written.
    await expect(client.put('/m/a', '3')).rejects.toBeInstanceOf(EtcdUnavailable);
    etcd.resume(1);
    await etcd.restart(0);
    await until(
      async () =>
        await client.put('/m/a', '4').then(
          () => true,
          () => false,
        ),
      'a put with the quorum back',
      15_000,
    );
    expect((await client.get('/m/a')).kvs[0].value).toBe('4');
  });
});
