/**
 * Change requests in an HA cluster: creating, approving and closing one writes only refs
 * (`refs/changes/<n>`, `refs/change-reviews/<n>`), not a commit of main, so they travel as the
 * other writes that are not pushes do: the leader answers once every member of the sync set holds
 * them. An approved change request made through a leader killed with SIGKILL is applied on the
 * node elected next.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf } from '../../support/harness.js';
import { etcdInstalled } from '../../support/etcdCluster.js';
import { HaCluster, type HaNode } from '../../support/haCluster.js';

const requireEtcd = process.env.CI === 'true';
const APP = 'acme/reviewed';

describe.runIf(etcdInstalled || requireEtcd)('change requests in an HA cluster', { timeout: 120_000 }, () => {
  let cluster: HaCluster;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    cluster = await HaCluster.start({
      nodes: 3,
      leaseSeconds: 2,
      prepare: (repos) => {
        cliOk(repos, 'repo', 'create', APP, '--context', 'Env,App');
        for (const label of ['alice', 'bob'])
          tokens[label] = cliOk(repos, 'token', 'create', APP, '--name', label).trim();
        cliOk(repos, 'repo', 'settings', APP, '--require-approvals', 'Prod;*=1');
      },
    });
    await cluster.syncSetOf(2);
  }, 60_000);
  afterAll(() => cluster?.close());

  const call = async (node: HaNode, token: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${node.url}${path}`, {
      method,
      headers: { 'Client-Token': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const refOn = (node: HaNode, ref: string) =>
    git(gitdirOf(node.repos, APP), 'for-each-ref', '--format=%(objectname)', ref).trim();

  it('holds each change request and approval on every member when the leader answers, and applies on the next leader after a SIGKILL', async () => {
    const leader = await cluster.leader();
    const members = cluster.nodes.filter((node) => node !== leader);
    const made = await call(leader, tokens.alice, 'POST', `/rest/changes/${APP}`, {
      title: 'Production database',
      enableKeyCreation: true,
      data: [{ key: 'db.host', values: [{ context: 'Prod;*', value: 'db.prod' }] }],
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const id = Number(made.json.id);
    for (const node of members) expect(refOn(node, `refs/changes/${id}`), `node ${node.index}`).toBe(made.json.commit);

    const approved = await call(leader, tokens.bob, 'POST', `/rest/changes/${APP}/${id}/approve`);
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    const review = refOn(leader, `refs/change-reviews/${id}`);
    for (const node of members) expect(refOn(node, `refs/change-reviews/${id}`), `node ${node.index}`).toBe(review);

    await leader.kill();
    const next = await cluster.leader();
    expect(next).not.toBe(leader);
    const applied = await call(next, tokens.alice, 'POST', `/rest/changes/${APP}/${id}/apply`);
    expect(applied.status, JSON.stringify(applied.json)).toBe(200);
    const pulled = await fetch(`${next.url}/rest/pull/${APP}`, {
      headers: { 'Client-Token': tokens.alice, Context: 'Prod;web' },
    });
    expect(await pulled.text()).toContain('db.prod');
    await leader.start();
  });
});
