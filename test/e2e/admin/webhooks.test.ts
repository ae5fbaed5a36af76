/**
 * Signed webhooks against a real receiving server (node:http on a loopback port) that checks
 * each body's HMAC-SHA256 signature with the secret it was given: a POST after each commit (a
 * push, a revert, a commit made with plain git), naming the commit, its parent, the comment, the
 * token's label, the keys changed and how many read contexts' answers changed; the receiver
 * going down and coming back (the delivery is retried and arrives); a push answered while its
 * delivery to a receiver that never answers is still in flight; the queue's bound (the oldest
 * waiting delivery dropped and marked); the delivery log and redelivery over the admin API and
 * the CLI; the secret never shown, stored only sealed, never logged; neither the sealing key nor
 * a sealed secret sent to a read replica.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  runCommand,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';
import { until } from '../../support/poll.js';
import { Receiver } from '../../support/webhookReceiver.js';
import { metricOf, plainGitCommit } from '../../support/reads.js';
import { eventually, startTestReplica } from '../../support/replicas.js';
import {
  expectNoHookSecrets,
  expectReplicaCannotOpenHooks,
  firstFeedLine,
  stateAnswer,
} from '../../support/replicatedHooks.js';

const REPO = 'acme/hooks';
const SECRET = 'receiver-secret-7f3a9c2e';

const dir = tempDir();
const receiver = new Receiver(SECRET);
let server: TestServer;
let token: string;
let admin: string;
let hookId: string;

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}/rest/admin/repositories/${REPO}/webhooks${path}`, {
    method,
    headers: { Authorization: `Bearer ${admin}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

interface Delivery {
  id: string;
  commit: string;
  status: string;
  attempts: number;
  lastError?: string;
  lastStatus?: number;
  redeliveryOf?: string;
}
const deliveries = async (): Promise<Delivery[]> => (await (await api('GET', '/deliveries')).json()) as Delivery[];
const deliveryOf = async (commit: string) => (await deliveries()).find((d) => d.commit === commit && !d.redeliveryOf);

async function push(value: string, context = 'Production;*'): Promise<{ status: number; commit: string }> {
  const answer = await pushTo(
    server.url,
    `/rest/push/${REPO}`,
    {
      changeComment: `pool ${value}`,
      enableKeyCreation: true,
      data: [{ key: 'pool.size', values: [{ context, value }] }],
    },
    { 'Client-Token': token },
  );
  expect(answer.status, reasonOf(answer)).toBe(200);
  return { status: answer.status, commit: headOf(dir.path, REPO) };
}

const adminEnv = () => ({ ...process.env, CFGHUB_ADMIN_TOKEN: admin, CFGHUB_SERVER: server.url });

beforeAll(async () => {
  cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Environment,Instance');
  token = cliOk(dir.path, 'token', 'create', REPO, '--name', 'deployer').trim();
  admin = cliOk(dir.path, 'admin-token', 'create', '--name', 'operator').trim();
  await receiver.start();
  server = await startTestServer(dir.path, {
    webhookLimits: { maxInFlight: 1, maxQueued: 3, firstRetryMs: 50, maxRetryMs: 400, attemptTimeoutMs: 60_000 },
  });
  await push('10', '*;*');
  // Two contexts read, so a change reaching one of them counts 1 of 2.
  for (const context of ['Production;node-1', 'Staging;node-2'])
    expect(
      (await fetch(`${server.url}/rest/pull/${REPO}`, { headers: { 'Client-Token': token, Context: context } })).status,
    ).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver.stop();
  dir.remove();
});

describe('webhooks', () => {
  it('are added with a secret read from standard input, which no listing, file or log shows', async () => {
    const added = await runCommand(['webhook', 'add', REPO, receiver.url], { env: adminEnv(), input: `${SECRET}\n` });
    expect(added.code, added.stderr).toBe(0);
    const hook = JSON.parse(added.stdout) as { id: string; url: string };
    hookId = hook.id;
    expect(hook.url).toBe(receiver.url);
    const listed = await runCommand(['webhook', 'list', REPO], { env: adminEnv() });
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: hookId, url: receiver.url })]);
    expect(listed.stdout + added.stdout).not.toContain(SECRET);
    const stored = readFileSync(join(dir.path, '.cfghub', 'webhooks.json'), 'utf8');
    expect(stored).not.toContain(SECRET);
    expect(stored).toMatch(/"secret": "enc:v1:/);
    // A short secret, and a URL with credentials, are refused.
    expect((await api('POST', '', { url: receiver.url, secret: 'short' })).status).toBe(400);
    expect((await api('POST', '', { url: 'http://u:p@127.0.0.1:1/', secret: SECRET })).status).toBe(400);
  });

  it('POST each push to the receiver, signed, naming the commit, parent, comment, token label, keys and answers changed', async () => {
    const parent = headOf(dir.path, REPO);
    const { commit } = await push('20');
    await until(() => receiver.of(commit).length === 1, 'the delivery of the push');
    const [got] = receiver.of(commit);
    expect(got.signed).toBe(true);
    expect(got.headers['x-cfghub-event']).toBe('commit');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.json).toMatchObject({
      event: 'commit',
      repository: REPO,
      commit,
      parent,
      comment: 'pool 20',
      token: 'deployer',
      keysChanged: 1,
      keys: ['pool.size'],
      filesChanged: 0,
      contexts: { changed: 1, weighed: 2 },
    });
    await until(async () => (await deliveryOf(commit))?.status === 'delivered', 'the log to say delivered');
    expect(await deliveryOf(commit)).toMatchObject({ attempts: 1, lastStatus: 204 });
    expect(server.logText()).not.toContain(SECRET);
  });

  it('POST a revert and a commit made with plain git', async () => {
    const pushed = headOf(dir.path, REPO);
    const revert = await fetch(`${server.url}/rest/admin/repositories/${REPO}/revert`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ commit: pushed, comment: 'undo pool 20' }),
    });
    expect(revert.status).toBe(200);
    const reverted = headOf(dir.path, REPO);
    await until(() => receiver.of(reverted).length === 1, 'the delivery of the revert');
    expect(receiver.of(reverted)[0].json).toMatchObject({
      parent: pushed,
      comment: expect.stringContaining('undo pool 20'),
      keys: ['pool.size'],
    });
    const plain = plainGitCommit(gitdirOf(dir.path, REPO), { 'notes.txt': 'by hand\n' }, 'a note made with git');
    await until(() => receiver.of(plain).length === 1, 'the delivery of the plain-git commit');
    expect(receiver.of(plain)[0].json).toMatchObject({
      parent: reverted,
      comment: 'a note made with git',
      token: null,
    });
  });

  /** cfghub_webhook_deliveries_total by outcome, from the server's /metrics. */
  const outcomes = async () => {
    const count = (outcome: string) => metricOf(server.url, `cfghub_webhook_deliveries_total{outcome="${outcome}"}`);
    return {
      delivered: await count('delivered'),
      retrying: await count('retrying'),
      failed: await count('failed'),
      dropped: await count('dropped'),
    };
  };

  it('retries while the receiver is down, and delivers once it is back, counting each attempt by outcome', async () => {
    const before = await outcomes();
    await receiver.stop();
    const { commit } = await push('30');
    await until(async () => ((await deliveryOf(commit))?.attempts ?? 0) >= 2, 'two failed attempts');
    const failing = (await deliveryOf(commit))!;
    expect(failing.status).toMatch(/retrying|in-flight/);
    expect(failing.lastError).toContain('ECONNREFUSED');
    await receiver.start(); // the same port
    await until(() => receiver.of(commit).length === 1, 'the retried delivery', 20_000);
    await until(async () => (await deliveryOf(commit))?.status === 'delivered', 'the log to say delivered');
    expect((await deliveryOf(commit))!.attempts).toBeGreaterThanOrEqual(3);
    expect(receiver.of(commit)[0].signed).toBe(true);
    const after = await outcomes();
    expect(after.retrying - before.retrying).toBeGreaterThanOrEqual(2);
    expect(after.delivered - before.delivered).toBe(1);
    expect(after.failed - before.failed).toBe(0);
  });

  it('redelivers a logged delivery as a new one, from the CLI, and lists the log', async () => {
    const commit = headOf(dir.path, REPO);
    const first = (await deliveryOf(commit))!;
    const again = await runCommand(['webhook', 'redeliver', REPO, first.id], { env: adminEnv() });
    expect(again.code, again.stderr).toBe(0);
    const redelivery = JSON.parse(again.stdout) as Delivery;
    expect(redelivery).toMatchObject({ commit, redeliveryOf: first.id });
    await until(() => receiver.of(commit).length === 2, 'the redelivery');
    expect(receiver.of(commit)[1].headers['x-cfghub-delivery']).toBe(redelivery.id);
    expect(receiver.of(commit)[1].signed).toBe(true);
    const log = await runCommand(['webhook', 'deliveries', REPO], { env: adminEnv() });
    expect(JSON.parse(log.stdout)[0]).toMatchObject({ id: redelivery.id });
    expect((await runCommand(['webhook', 'redeliver', REPO, 'no-such-delivery'], { env: adminEnv() })).code).toBe(1);
  });

  it('answers a push while its delivery to a receiver that never answers is in flight, and drops the oldest waiting over the bound', async () => {
    receiver.mode = 'hang';
    const { commit: held } = await push('40');
    // The push has answered; its delivery reaches the receiver, which holds it.
    await until(() => receiver.of(held).length === 1, 'the held delivery to arrive');
    expect(receiver.held.length).toBe(1);
    expect((await deliveryOf(held))!.status).toBe('in-flight');
    // With one in flight (the bound) and three waiting at most, four more pushes answer at once; the oldest waiting is dropped.
    const later: string[] = [];
    for (const value of ['41', '42', '43', '44']) later.push((await push(value)).commit);
    await until(async () => (await deliveryOf(later[0]))?.status === 'dropped', 'the oldest waiting to be dropped');
    expect((await outcomes()).dropped).toBe(1);
    expect((await deliveryOf(later[0]))!.lastError).toBe('dropped: 3 deliveries were waiting');
    expect((await deliveryOf(held))!.status).toBe('in-flight');
    for (const commit of later.slice(1)) expect((await deliveryOf(commit))!.status).toBe('queued');
    // The receiver answers: the waiting ones go out, the dropped one never.
    receiver.mode = 'ok';
    for (const res of receiver.held.splice(0)) res.writeHead(204).end();
    await until(async () => {
      const log = await deliveries();
      return later.slice(1).every((commit) => log.some((d) => d.commit === commit && d.status === 'delivered'));
    }, 'the waiting deliveries to arrive');
    expect(receiver.of(later[0])).toEqual([]);
  });

  it('are not sent to a read replica: its state answer and its folder hold no sealing key and no sealed secret', async () => {
    const replicationToken = cliOk(dir.path, 'token', 'create', '--replication').trim();
    const { text, json } = await stateAnswer(server.url, replicationToken);
    expectNoHookSecrets(text, dir.path);
    // Nor are webhooks compared for it: its feed holds, whatever webhooks digest it says it has.
    expect(await firstFeedLine(server.url, replicationToken, json)).toBe('{"same":true}');
    const folder = tempDir();
    const replica = await startTestReplica(folder.path, server.url, replicationToken);
    try {
      await eventually(
        'the replica to catch up',
        () => headOf(folder.path, REPO) === headOf(dir.path, REPO) || undefined,
      );
      expectReplicaCannotOpenHooks(folder.path, dir.path, REPO);
    } finally {
      await replica.close();
      folder.remove();
    }
  });

  it('are administered only with an admin token, and removed', async () => {
    const asClient = await fetch(`${server.url}/rest/admin/repositories/${REPO}/webhooks`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(asClient.status).toBe(401);
    const removed = await runCommand(['webhook', 'remove', REPO, hookId], { env: adminEnv() });
    expect(removed.code, removed.stderr).toBe(0);
    expect(await (await api('GET', '')).json()).toEqual([]);
    const before = receiver.received.length;
    const { commit } = await push('50');
    expect(
      (await fetch(`${server.url}/rest/pull/${REPO}`, { headers: { 'Client-Token': token, Context: '*;*' } })).status,
    ).toBe(200);
    expect(receiver.of(commit)).toEqual([]);
    expect(receiver.received.length).toBe(before);
    expect(server.logText()).not.toContain(SECRET);
  });
});
