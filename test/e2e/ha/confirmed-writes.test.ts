/**
 * Writes other than pushes in an HA cluster: a repository made or deleted, a client token and a
 * tag, each made through the leader's admin API, are answered 200 only once every member of the
 * sync set holds them on disk (the leader's confirmation), so they survive a SIGKILL of the
 * leader, on the node elected next.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster, type HaNode } from '../../support/haCluster.js';

const requireEtcd = process.env.CI === 'true';
const APP = 'acme/app';

describe.runIf(etcdInstalled || requireEtcd)('writes other than pushes in an HA cluster', { timeout: 120_000 }, () => {
  let cluster: HaCluster;
  let admin = '';

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      leaseSeconds: 2,
      prepare: (repos) => {
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env');
        admin = cliOk(repos, 'admin-token', 'create', '--name', 'operator').trim();
      },
    });
    await cluster.syncSetOf(2);
  }, 60_000);
  afterAll(() => cluster?.close());

  const call = async (node: HaNode, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${node.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${admin}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const pullWith = async (node: HaNode, token: string) =>
    (await fetch(`${node.url}/rest/pull/${APP}`, { headers: { 'Client-Token': token, Context: 'Prod' } })).status;

  it('holds each on every member when the leader answers, and on the next leader after a SIGKILL', async () => {
    const leader = await cluster.leader();
    const members = cluster.nodes.filter((node) => node !== leader);
    const made = await call(leader, 'POST', '/rest/admin/repositories', {
      account: 'acme',
      name: 'made',
      context: ['Env'],
    });
    expect(made.status).toBe(201);
    for (const node of members) expect(existsSync(gitdirOf(node.repos, 'acme/made')), `node ${node.index}`).toBe(true);

    const token = await call(leader, 'POST', `/rest/admin/repositories/${APP}/tokens`, { label: 'reader' });
    expect(token.status).toBe(201);
    for (const node of members) expect(await pullWith(node, String(token.json.token)), `node ${node.index}`).toBe(200);

    const tag = await call(leader, 'POST', `/rest/admin/repositories/${APP}/tags`, { name: 'release-1' });
    expect(tag.status).toBe(201);
    for (const node of members)
      expect(git(gitdirOf(node.repos, APP), 'tag', '--list').split('\n'), `node ${node.index}`).toContain('release-1');

    const gone = await call(leader, 'DELETE', '/rest/admin/repositories/acme/made');
    expect(gone.status).toBe(200);
    for (const node of members) expect(existsSync(gitdirOf(node.repos, 'acme/made')), `node ${node.index}`).toBe(false);

    await leader.kill();
    const next = await cluster.leader();
    expect(next).not.toBe(leader);
    expect(await pullWith(next, String(token.json.token))).toBe(200);
    expect(git(gitdirOf(next.repos, APP), 'tag', '--list').split('\n')).toContain('release-1');
    expect((await call(next, 'GET', '/rest/admin/repositories/acme/made')).status).toBe(404);
    await leader.start();
  });
});
