/**
 * Change requests reach read replicas: `refs/changes/<n>` and `refs/change-reviews/<n>` follow the
 * primary as its branches and tags do (its refs digest covers them, so a change request made,
 * approved or closed with no push is fetched), a replica shows them, and a replica promoted after
 * the primary is lost holds them: an approved change request made on the old primary is applied
 * on the new one. The real servers on loopback, real bare repositories, real git fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  git,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';
import { eventually, startTestReplica, type TestReplica } from '../../support/replicas.js';

const REPO = 'acme/reviewed';
let primaryDir: ReturnType<typeof tempDir>;
let replicaDir: ReturnType<typeof tempDir>;
let primary: TestServer | undefined;
let replica: TestReplica | undefined;
let promoted: TestServer | undefined;
const tokens: Record<string, string> = {};

const changeRefs = (repos: string) =>
  git(
    gitdirOf(repos, REPO),
    'for-each-ref',
    '--format=%(objectname) %(refname)',
    'refs/changes',
    'refs/change-reviews',
  );

/** Waits until the replica holds exactly the primary's change request refs (and some). */
const replicated = () =>
  eventually('the change refs on the replica', () => {
    const wanted = changeRefs(primaryDir.path);
    return wanted && changeRefs(replicaDir.path) === wanted ? wanted : undefined;
  });

function call(url: string, method: string, path: string, token: string, body?: unknown) {
  return fetch(`${url}${path}`, {
    method,
    headers: { 'Client-Token': token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, json: await response.json() }));
}

beforeAll(async () => {
  primaryDir = tempDir();
  replicaDir = tempDir();
  cliOk(primaryDir.path, 'repo', 'create', REPO, '--context', 'Env,App');
  for (const label of ['alice', 'bob'])
    tokens[label] = cliOk(primaryDir.path, 'token', 'create', REPO, '--name', label).trim();
  cliOk(primaryDir.path, 'repo', 'settings', REPO, '--require-approvals', 'Prod;*=1');
  const replicationToken = cliOk(primaryDir.path, 'token', 'create', '--replication', '--name', 'replicas').trim();
  primary = await startTestServer(primaryDir.path);
  const seed = await pushTo(
    primary.url,
    `/rest/push/${REPO}`,
    { enableKeyCreation: true, data: [{ key: 'db.host', values: [{ context: 'Stage;*', value: 'db.stage' }] }] },
    { 'Client-Token': tokens.alice },
  );
  expect(seed.status, reasonOf(seed)).toBe(200);
  replica = await startTestReplica(replicaDir.path, primary.url, replicationToken, { holdMs: 3_000 });
});

afterAll(async () => {
  await replica?.close();
  await promoted?.close();
  await primary?.close();
  for (const dir of [primaryDir, replicaDir]) dir?.remove();
});

describe('change requests on a read replica', () => {
  it('a change request made and approved on the primary, with no push, reaches the replica, which shows it', async () => {
    const head = headOf(primaryDir.path, REPO);
    const created = await call(primary!.url, 'POST', `/rest/changes/${REPO}`, tokens.alice, {
      title: 'Production database',
      data: [{ key: 'db.host', values: [{ context: 'Prod;*', value: 'db.prod' }] }],
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    await replicated();
    const approved = await call(primary!.url, 'POST', `/rest/changes/${REPO}/${created.json.id}/approve`, tokens.bob);
    expect(approved.status, JSON.stringify(approved.json)).toBe(200);
    const refs = await replicated();
    expect(refs).toContain(`refs/change-reviews/${created.json.id}`);
    expect(headOf(primaryDir.path, REPO)).toBe(head); // nothing pushed: only the change refs moved
    git(gitdirOf(replicaDir.path, REPO), 'fsck', '--strict', '--no-dangling');
    const shown = await call(replica!.url, 'GET', `/rest/changes/${REPO}/${created.json.id}`, tokens.bob);
    expect(shown.status, JSON.stringify(shown.json)).toBe(200);
    expect(shown.json).toMatchObject({ author: 'alice', status: 'open', approvals: [{ by: 'bob' }] });
  });

  it('survives the loss of the primary: the promoted replica applies the approved change request', async () => {
    await primary!.close();
    primary = undefined;
    await replica!.close();
    replica = undefined;
    expect(cliOk(replicaDir.path, 'promote').trim()).toBe('2');
    promoted = await startTestServer(replicaDir.path);
    const applied = await call(promoted.url, 'POST', `/rest/changes/${REPO}/1/apply`, tokens.alice);
    expect(applied.status, JSON.stringify(applied.json)).toBe(200);
    expect(headOf(replicaDir.path, REPO)).toBe(applied.json.commit);
    expect(
      git(gitdirOf(replicaDir.path, REPO), 'log', '-1', '--format=%(trailers:key=Approved-By,valueonly)').trim(),
    ).toBe('bob');
    const pulled = await fetch(`${promoted.url}/rest/pull/${REPO}`, {
      headers: { 'Client-Token': tokens.alice, Context: 'Prod;web' },
    });
    expect(await pulled.text()).toContain('db.prod');
  });
});
