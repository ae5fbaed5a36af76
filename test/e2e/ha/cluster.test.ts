/**
 * An HA cluster as an operator runs it: three `cfghub serve --cluster` processes against a real
 * etcd on loopback. One leader takes writes; a push answered 200 is already on the disk of every
 * member of the sync set; followers forward writes to the leader etcd names; a leader killed,
 * paused or stopped is replaced, and never answers 200 again once replaced.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, getJson, git, gitdirOf, headOf, pushTo } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster, type HaNode } from '../../support/haCluster.js';
import { tracked, until } from '../../support/poll.js';
import { expectWithin } from '../../support/wallClock.js';

const APP = 'acme/app';
/** A repository whose pushes need a token. */
const LOCKED = 'acme/locked';
const requireEtcd = process.env.CI === 'true';

const push = (url: string, value: string) =>
  pushTo(url, `/rest/push/${APP}`, {
    changeComment: `set ${value}`,
    enableKeyCreation: true,
    data: [{ key: 'flag', values: [{ context: '*', value }] }],
  });
const commitOf = (answer: { etag?: string | null }) => answer.etag!.replace(/"/g, '');

describe.runIf(etcdInstalled || requireEtcd)('an HA cluster of three nodes on one etcd', { timeout: 120_000 }, () => {
  let cluster: HaCluster;
  let counter = 0;

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      leaseSeconds: 2,
      prepare: (repos) => {
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env', '--token-free-push', '--token-free-pull');
        cliOk(repos, 'repo', 'create', LOCKED, '--context', 'Env');
      },
    });
    await cluster.syncSetOf(2);
  }, 60_000);
  afterAll(() => cluster?.close());

  /** Pushes through `via` until one is answered 200 (an election may be under way); its commit. */
  const pushUntilAccepted = async (via: () => HaNode): Promise<string> => {
    let commit = '';
    await until(
      async () => {
        const answer = await push(via().url, `v${++counter}`).catch(() => undefined);
        if (answer?.status !== 200) return false;
        commit = commitOf(answer);
        return true;
      },
      'a push answered 200',
      30_000,
    );
    return commit;
  };

  it('acknowledges a push only once every member of the sync set holds it on disk', async () => {
    const leader = await cluster.leader();
    const members = (await leader.status())!.syncSet;
    expect(members).toHaveLength(2);
    for (let i = 0; i < 5; i++) {
      const answer = await push(leader.url, `direct-${i}`);
      expect(answer.status).toBe(200);
      const commit = commitOf(answer);
      // No waiting: when the 200 arrives, each follower's ref already names the commit.
      for (const node of cluster.nodes) expect(headOf(node.repos, APP), `node ${node.index}`).toBe(commit);
    }
  });

  it('forwards a write sent to a follower to the leader etcd names', async () => {
    const leader = await cluster.leader();
    const follower = cluster.nodes.find((node) => node !== leader)!;
    const answer = await push(follower.url, 'forwarded');
    expect(answer.status).toBe(200);
    expect(headOf(leader.repos, APP)).toBe(commitOf(answer));
    const read = await getJson(follower.url, `/rest/pull/${APP}`, { Context: 'Prod' });
    expect(read.text).toContain('forwarded');
  });

  it("passes the leader's refusals through a follower unchanged, a body over the limit sent in chunks too", async () => {
    const leader = await cluster.leader();
    const follower = cluster.nodes.find((node) => node !== leader)!;
    const pushBody = (value: string, create = true) => ({
      changeComment: `set ${value}`,
      enableKeyCreation: create,
      data: [{ key: `refused-${value}`, values: [{ context: '*', value }] }],
    });
    const refusals: Array<[string, string, unknown, Record<string, string>?]> = [
      ['a push refused (304, its reason in the ETag)', `/rest/push/${APP}`, pushBody('new-key', false)],
      ['a body that is not JSON (400)', `/rest/push/${APP}`, '{"changeComment":'],
      ['a repository that does not exist (404)', '/rest/push/acme/none', pushBody('x')],
      ['a push without the token the repository asks for (401)', `/rest/push/${LOCKED}`, pushBody('x')],
      ['a push with a token that is no token (401)', `/rest/push/${LOCKED}`, pushBody('x'), { 'Client-Token': 'nope' }],
      ['a body over the limit (413)', `/rest/push/${APP}`, 'x'.repeat(17 * 1024 * 1024)],
    ];
    // A body over the limit sent in chunks, without a length: the leader answers 413 while the
    // follower is still sending it on, and closes the connection.
    const chunked = async (url: string) =>
      new Promise<{ status: number; error?: string }>((resolve, reject) => {
        const request = httpRequest(
          `${url}/rest/push/${APP}`,
          { method: 'POST', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } },
          (response) => {
            let text = '';
            response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode!, error: JSON.parse(text).error }));
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const more = () => {
          while (sent < 40 * 1024 * 1024) {
            sent += chunk.length;
            if (!request.write(chunk)) return void request.once('drain', more);
          }
          request.end();
        };
        more();
      });
    for (let i = 0; i < 5; i++) {
      expect(await chunked(leader.url)).toEqual({ status: 413, error: 'payload_too_large' });
      expect(await chunked(follower.url)).toEqual({ status: 413, error: 'payload_too_large' });
    }
    for (const [what, path, body, headers] of refusals) {
      const direct = await pushTo(leader.url, path, body, headers);
      expect(direct.status, what).not.toBe(200);
      const forwarded = await pushTo(follower.url, path, body, headers);
      expect({ status: forwarded.status, etag: forwarded.etag, error: forwarded.json?.error }, what).toEqual({
        status: direct.status,
        etag: direct.etag,
        error: direct.json?.error,
      });
    }
  });

  it('elects another leader when the leader is killed, with every acknowledged push on it', async () => {
    await cluster.syncSetOf(2);
    const leader = await cluster.leader();
    const acknowledged = await pushUntilAccepted(() => leader);
    await leader.kill();
    const next = await cluster.leader();
    expect(next).not.toBe(leader);
    git(gitdirOf(next.repos, APP), 'merge-base', '--is-ancestor', acknowledged, 'refs/heads/main');
    const after = await pushUntilAccepted(() => next);
    // The killed node comes back as a follower and catches up.
    await leader.start();
    await until(() => headOf(leader.repos, APP) === after, 'the old leader caught up', 30_000);
    expect((await leader.status())!.role).toBe('follower');
    for (const node of cluster.nodes) git(gitdirOf(node.repos, APP), 'fsck', '--strict');
  });

  it('never lets a paused leader answer 200 once another leads', async () => {
    await cluster.syncSetOf(2);
    const leader = await cluster.leader();
    await pushUntilAccepted(() => leader);
    await leader.pause();
    const others = cluster.nodes.filter((node) => node !== leader && node.running);
    // A write sent through a follower now is forwarded to the paused leader, whose kernel takes it.
    const forwarded = tracked(push(others[0].url, 'sent-to-the-paused-leader'));
    await until(
      async () => (await Promise.all(others.map((node) => node.status()))).some((status) => status?.role === 'leader'),
      'a new leader while the old one is paused',
      30_000,
    );
    // Once another leads it is answered (its outcome unknown), not left waiting on the paused one.
    await until(() => forwarded.settled(), 'the forwarded write answered while the old leader is still paused', 5_000);
    const answer = await forwarded.promise;
    expect(answer.status).toBe(503);
    expect(answer.json?.error).toBe('leader_replaced');
    const next = await cluster.leader();
    const acknowledged = await pushUntilAccepted(() => next);
    leader.resume();
    // Resumed, it must not acknowledge a write on its own: its lease is over on the monotonic clock,
    // and the members refuse its epoch.
    const late = await push(leader.url, 'from-the-paused-leader');
    if (late.status === 200) {
      // Forwarded to the new leader: then the new leader made it, on top of what it acknowledged.
      git(gitdirOf(next.repos, APP), 'merge-base', '--is-ancestor', acknowledged, commitOf(late));
      git(gitdirOf(next.repos, APP), 'merge-base', '--is-ancestor', commitOf(late), 'refs/heads/main');
    }
    await until(async () => (await leader.status())?.role === 'follower', 'the old leader a follower', 20_000);
  });

  it('hands leadership over within a second when the leader is stopped cleanly', async () => {
    const leader = await cluster.leader();
    await pushUntilAccepted(() => leader);
    await cluster.syncSetOf(2);
    const started = performance.now();
    await leader.stop();
    const next = await cluster.leader(10_000);
    const elapsed = performance.now() - started;
    expect(next).not.toBe(leader);
    expectWithin(elapsed, 5_000, 'the handover to another node');
    await leader.start();
  });
});
