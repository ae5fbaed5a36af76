/**
 * Read replicas: one primary and two replicas, each the real server on a loopback port with its
 * own folder; the replicas follow through the replication endpoints and `git fetch`. Checked with
 * the real git CLI on every folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  cliWithInput,
  getJson,
  git,
  gitdirOf,
  headOf,
  pushTo,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';
import { eventually, startTestReplica, type TestReplica } from '../../support/replicas.js';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { rawRequest } from '../../support/rawHttp.js';
import { metricOf } from '../../support/reads.js';
import { until } from '../../support/poll.js';

const APP = 'acme/app';
const CONTEXT = { Context: 'Prod;web' };

let primaryDir: ReturnType<typeof tempDir>;
let dirA: ReturnType<typeof tempDir>;
let dirB: ReturnType<typeof tempDir>;
let primary: TestServer;
let replicaA: TestReplica;
let replicaB: TestReplica;
let replicationToken: string;
let appToken: string;
let adminToken: string;

/** The CLI without blocking this process, whose servers (primary and replicas) must keep running meanwhile. */
async function cliAsync(repos: string, ...args: string[]): Promise<string> {
  const result = await cliWithInput(repos, '', ...args);
  if (result.code !== 0) throw new Error(`cfghub ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const commitOf = (etag: string | null) => (etag ?? '').replace(/"/g, '');
const pushValue = (url: string, key: string, value: string, headers: Record<string, string> = {}) =>
  pushTo(
    url,
    `/rest/push/${APP}`,
    { enableKeyCreation: true, data: [{ key, values: [{ context: '*;*', value }] }] },
    headers,
  );

/** Waits until a server's pull of APP carries a value, and returns its answer. */
const readsValue = (url: string, value: string, ms = 10_000) =>
  eventually(
    `${url} serving ${value}`,
    async () => {
      const answer = await getJson(url, `/rest/pull/${APP}`, CONTEXT);
      return answer.status === 200 && answer.text.includes(value) ? answer : undefined;
    },
    ms,
  );

/** Waits until a folder's copy of a repository has this head. */
const hasHead = (repos: string, fullName: string, head: string) =>
  eventually(`${fullName} at ${head.slice(0, 8)} in ${repos}`, () =>
    existsSync(gitdirOf(repos, fullName)) && headOf(repos, fullName) === head ? true : undefined,
  );

beforeAll(async () => {
  primaryDir = tempDir();
  dirA = tempDir();
  dirB = tempDir();
  cliOk(primaryDir.path, 'repo', 'create', APP, '--context', 'Env,App', '--token-free-push', '--token-free-pull');
  cliOk(primaryDir.path, 'repo', 'create', 'acme/secret', '--context', 'Env', '--private');
  appToken = cliOk(primaryDir.path, 'token', 'create', 'acme/secret', '--name', 'reader').trim();
  replicationToken = cliOk(primaryDir.path, 'token', 'create', '--replication', '--name', 'replicas').trim();
  adminToken = cliOk(primaryDir.path, 'admin-token', 'create', '--name', 'ops').trim();
  primary = await startTestServer(primaryDir.path);
  replicaA = await startTestReplica(dirA.path, primary.url, replicationToken, { holdMs: 3_000 });
  replicaB = await startTestReplica(dirB.path, primary.url, replicationToken, { holdMs: 3_000 });
});

afterAll(async () => {
  await replicaA?.close();
  await replicaB?.close();
  await primary?.close();
  for (const dir of [primaryDir, dirA, dirB]) dir?.remove();
});

describe('replication tokens', () => {
  it('open the replication state, which a repository token does not, and read no repository over REST', async () => {
    const state = await getJson(primary.url, '/rest/replication/state', { 'Client-Token': replicationToken });
    expect(state.status).toBe(200);
    expect(state.json.repositories.map((r: any) => `${r.account}/${r.name}`).sort()).toEqual([APP, 'acme/secret']);
    expect(JSON.stringify(state.json)).not.toContain(appToken); // hashes only
    expect((await getJson(primary.url, '/rest/replication/state', { 'Client-Token': appToken })).status).toBe(403);
    expect((await getJson(primary.url, '/rest/replication/state')).status).toBe(401);
    expect(
      (await getJson(primary.url, '/rest/pull/acme/secret', { 'Client-Token': replicationToken, Context: 'Prod' }))
        .status,
    ).toBe(403);
  });

  it('open a change feed that heartbeats while nothing changes, answers the state after its hold, and at once on a difference', async () => {
    const state = (await getJson(primary.url, '/rest/replication/state', { 'Client-Token': replicationToken })).json;
    expect(state.origin).toEqual({ folder: expect.stringMatching(/^[0-9a-f-]{36}$/), generation: 1 });
    expect(state.adminTokens).toHaveLength(1);
    expect(JSON.stringify(state)).not.toContain(adminToken); // hashes only
    const refs = Object.fromEntries(state.repositories.map((r: any) => [`${r.account}/${r.name}`, r.refs]));
    const held = {
      refs,
      tokensDigest: state.tokensDigest,
      adminTokensDigest: state.adminTokensDigest,
      origin: state.origin,
    };
    const feed = (body: unknown) =>
      fetch(`${primary.url}/rest/replication/feed`, {
        method: 'POST',
        headers: { 'Client-Token': replicationToken, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const same = await feed({ ...held, holdMs: 1_500 });
    const lines = (await same.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.slice(0, -1)).toContainEqual({ same: true });
    expect(lines.at(-1).state.tokensDigest).toBe(state.tokensDigest);
    const started = Date.now();
    const moved = await feed({ ...held, refs: { ...refs, [APP]: '0'.repeat(64) }, holdMs: 30_000 });
    const answer = JSON.parse((await moved.text()).trim());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer.state.repositories.find((r: any) => `${r.account}/${r.name}` === APP).refs).toBe(refs[APP]);
    expect((await feed({ refs: 'all' })).status).toBe(400);
    expect((await feed({ ...held, holdMs: 600_000 })).status).toBe(400);
  });

  it('stop working at once when revoked', async () => {
    const spare = (await cliAsync(primaryDir.path, 'token', 'create', '--replication', '--name', 'spare')).trim();
    expect((await getJson(primary.url, '/rest/replication/state', { 'Client-Token': spare })).status).toBe(200);
    await cliAsync(primaryDir.path, 'token', 'revoke', '--replication', 'spare');
    expect((await getJson(primary.url, '/rest/replication/state', { 'Client-Token': spare })).status).toBe(401);
    expect(git(gitdirOf(primaryDir.path, APP), 'rev-parse', 'HEAD')).toBeTruthy();
  });
});

describe('a replica', () => {
  it('mirrors every repository as a bare repository, with the tokens of the primary', async () => {
    for (const replica of [replicaA, replicaB]) {
      await hasHead(replica.repos, APP, headOf(primaryDir.path, APP));
      await hasHead(replica.repos, 'acme/secret', headOf(primaryDir.path, 'acme/secret'));
      git(gitdirOf(replica.repos, APP), 'fsck', '--strict');
      // The token records follow the repositories: a token of the primary reads on the replica.
      await eventually('the token on the replica', async () => {
        const secret = await getJson(replica.url, '/rest/pull/acme/secret', {
          'Client-Token': appToken,
          Context: 'Prod',
        });
        return secret.status === 200 ? true : undefined;
      });
    }
  });

  it('serves a push to the primary on both replicas, with the commit served and its lag', async () => {
    const pushed = await pushValue(primary.url, 'db.host', 'db-one');
    expect(pushed.status).toBe(200);
    const commit = commitOf(pushed.etag);
    for (const replica of [replicaA, replicaB]) {
      const answer = await readsValue(replica.url, 'db-one');
      expect(answer.headers.get('commit')).toBe(commit);
      expect(Number(answer.headers.get('replica-lag'))).toBeLessThan(5);
    }
  });

  it('wakes a watch held on a replica when a push lands on the primary', async () => {
    const current = await getJson(replicaB.url, `/rest/pull/${APP}`, CONTEXT);
    const etag = current.headers.get('etag')!;
    const watch = fetch(`${replicaB.url}/rest/pull/${APP}`, {
      headers: { ...CONTEXT, 'If-None-Match': etag, Wait: '20' },
    });
    // The watch is held before the push (a 304 would mean it was not).
    await until(async () => (await metricOf(replicaB.url, 'cfghub_watchers')) >= 1, 'the watch held on the replica');
    const pushed = await pushValue(primary.url, 'db.host', 'watched');
    expect(pushed.status).toBe(200);
    const answer = await watch;
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('watched');
    expect(answer.headers.get('replica-lag')).not.toBeNull();
  });

  it('waits for a Min-Commit it does not have yet, and serves at least that commit', async () => {
    const pushed = await pushValue(primary.url, 'db.host', 'db-two');
    const commit = commitOf(pushed.etag);
    const answer = await getJson(replicaA.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': commit });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('commit')).toBe(commit);
    expect(answer.text).toContain('db-two');
    const bad = await getJson(replicaA.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': 'not-a-commit' });
    expect(bad.status).toBe(400);
  });

  it('forwards only to its primary, whatever the request target names', async () => {
    const elsewhere = await startTestServer(primaryDir.path); // a server the replica must never reach
    try {
      const body = {
        enableKeyCreation: true,
        data: [{ key: 'x', values: [{ context: '*;*', value: 'misdirected' }] }],
      };
      const absolute = await rawRequest(replicaA.url, {
        method: 'POST',
        path: `${elsewhere.url}/rest/push/${APP}`,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(absolute.status).toBe(400);
      const before = headOf(primaryDir.path, APP);
      const doubled = await rawRequest(replicaA.url, {
        method: 'POST',
        path: `//${new URL(elsewhere.url).host}/rest/push/${APP}`,
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      expect(doubled.status).toBe(404); // sent to the primary as the path //host/rest/push/…, which it does not serve
      expect(elsewhere.logs.some((line) => line.method === 'POST')).toBe(false);
      expect(headOf(primaryDir.path, APP)).toBe(before);
    } finally {
      await elsewhere.close();
    }
  });

  it('forwards a push to the primary, which every replica then serves', async () => {
    const pushed = await pushValue(replicaA.url, 'db.host', 'via-replica');
    expect(pushed.status).toBe(200);
    const commit = commitOf(pushed.etag);
    expect(headOf(primaryDir.path, APP)).toBe(commit); // landed on the primary, acknowledged by it
    await readsValue(replicaB.url, 'via-replica');
    await hasHead(replicaA.repos, APP, commit);
    // The replica wrote nothing itself: its head is the primary's.
    expect(headOf(replicaA.repos, APP)).toBe(headOf(primaryDir.path, APP));
  });

  it('follows a plain-git commit on the primary', async () => {
    const gitdir = gitdirOf(primaryDir.path, APP);
    const env = {
      GIT_AUTHOR_NAME: 'Someone',
      GIT_AUTHOR_EMAIL: 's@example.com',
      GIT_COMMITTER_NAME: 'Someone',
      GIT_COMMITTER_EMAIL: 's@example.com',
    };
    Object.assign(process.env, env);
    const commit = git(
      gitdir,
      'commit-tree',
      'refs/heads/main^{tree}',
      '-p',
      'refs/heads/main',
      '-m',
      'plain git',
    ).trim();
    git(gitdir, 'update-ref', 'refs/heads/main', commit);
    git(gitdir, 'tag', '-a', 'v1', '-m', 'a tag by plain git', commit);
    for (const replica of [replicaA, replicaB]) {
      await hasHead(replica.repos, APP, commit);
      await eventually('the tag', () =>
        git(gitdirOf(replica.repos, APP), 'tag', '--list').includes('v1') ? true : undefined,
      );
      const answer = await eventually('served', async () => {
        const a = await getJson(replica.url, `/rest/pull/${APP}`, CONTEXT);
        return a.headers.get('commit') === commit ? a : undefined;
      });
      expect(answer.status).toBe(200);
    }
  });

  it('receives tags made by the CLI, the admin API and plain git, with no push after, and serves reads of them', async () => {
    const head = headOf(primaryDir.path, APP);
    await cliAsync(primaryDir.path, 'tag', 'create', APP, 'by-cli', '--comment', 'made by the CLI');
    const byApi = await fetch(`${primary.url}/rest/admin/repositories/${APP}/tags`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'by-api', comment: 'made through the admin API' }),
    });
    expect(byApi.status).toBe(201);
    git(gitdirOf(primaryDir.path, APP), 'tag', '-a', 'by-git', '-m', 'made by plain git', head);
    expect(headOf(primaryDir.path, APP)).toBe(head); // no push: main did not move
    for (const replica of [replicaA, replicaB]) {
      for (const tag of ['by-cli', 'by-api', 'by-git']) {
        const answer = await eventually(`${tag} served by ${replica.url}`, async () => {
          const read = await getJson(replica.url, `/rest/pull/${APP}`, { ...CONTEXT, Tag: tag });
          return read.status === 200 ? read : undefined;
        });
        expect(answer.headers.get('commit')).toBe(head);
      }
      expect(git(gitdirOf(replica.repos, APP), 'for-each-ref', 'refs/tags')).toBe(
        git(gitdirOf(primaryDir.path, APP), 'for-each-ref', 'refs/tags'),
      );
    }
    // A tag deleted on the primary is deleted on the replicas too.
    expect(
      (
        await fetch(`${primary.url}/rest/admin/repositories/${APP}/tags/by-api`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${adminToken}` },
        })
      ).status,
    ).toBe(200);
    for (const replica of [replicaA, replicaB]) {
      await eventually('the tag deleted', async () =>
        (await getJson(replica.url, `/rest/pull/${APP}`, { ...CONTEXT, Tag: 'by-api' })).status === 404
          ? true
          : undefined,
      );
    }
  });

  it("holds the primary's admin tokens, revocations included: the admin API answers them on a replica", async () => {
    const listing = (url: string, token: string) =>
      fetch(`${url}/rest/admin/repositories`, { headers: { Authorization: `Bearer ${token}` } });
    for (const replica of [replicaA, replicaB]) {
      await eventually('the admin token on the replica', async () =>
        (await listing(replica.url, adminToken)).status === 200 ? true : undefined,
      );
    }
    const second = (await cliAsync(primaryDir.path, 'admin-token', 'create', '--name', 'second')).trim();
    for (const replica of [replicaA, replicaB]) {
      await eventually('the new admin token', async () =>
        (await listing(replica.url, second)).status === 200 ? true : undefined,
      );
    }
    await cliAsync(primaryDir.path, 'admin-token', 'revoke', 'second');
    for (const replica of [replicaA, replicaB]) {
      await eventually('the revocation', async () =>
        (await listing(replica.url, second)).status === 401 ? true : undefined,
      );
    }
  });

  it('answers Min-Commit on the primary too: 409 commit_unknown for a commit that is neither the head nor an ancestor', async () => {
    const head = headOf(primaryDir.path, APP);
    const parent = git(gitdirOf(primaryDir.path, APP), 'rev-parse', `${head}^`).trim();
    for (const commit of [head, parent]) {
      const answer = await getJson(primary.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': commit });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('commit')).toBe(head);
    }
    // A commit of another repository: on disk nowhere in this one's history.
    const other = headOf(primaryDir.path, 'acme/secret');
    const unknown = await getJson(primary.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': other });
    expect(unknown.status).toBe(409);
    expect(unknown.json.error).toBe('commit_unknown');
    expect(unknown.json.message).toContain(other);
    expect((await getJson(primary.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': 'f'.repeat(40) })).status).toBe(
      409,
    );
    expect((await getJson(primary.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': 'nope' })).status).toBe(400);
  });

  it('mirrors a new repository, sets a deleted one aside as the primary does, and keeps token revocations in step', async () => {
    await cliAsync(primaryDir.path, 'repo', 'create', 'acme/later', '--context', 'Env', '--token-free-pull');
    for (const replica of [replicaA, replicaB])
      await hasHead(replica.repos, 'acme/later', headOf(primaryDir.path, 'acme/later'));
    git(gitdirOf(primaryDir.path, 'acme/later'), 'rev-parse', 'HEAD');
    const { rmSync } = await import('node:fs');
    rmSync(gitdirOf(primaryDir.path, 'acme/later'), { recursive: true, force: true });
    for (const replica of [replicaA, replicaB]) {
      await eventually('the mirror removed', () =>
        existsSync(gitdirOf(replica.repos, 'acme/later')) ? undefined : true,
      );
      expect((await getJson(replica.url, '/rest/pull/acme/later', { Context: 'Prod' })).status).toBe(404);
      // Nothing destroyed: set aside under .cfghub/deleted, a whole repository still.
      const aside = readdirSync(join(replica.repos, '.cfghub', 'deleted', 'acme')).filter((entry) =>
        entry.startsWith('later.git.'),
      );
      expect(aside).toHaveLength(1);
      git(join(replica.repos, '.cfghub', 'deleted', 'acme', aside[0]), 'fsck', '--strict');
    }
    await cliAsync(primaryDir.path, 'token', 'revoke', 'acme/secret', 'reader');
    for (const replica of [replicaA, replicaB]) {
      await eventually('the revocation', async () => {
        const answer = await getJson(replica.url, '/rest/pull/acme/secret', {
          'Client-Token': appToken,
          Context: 'Prod',
        });
        return answer.status === 401 ? true : undefined;
      });
    }
  });

  it('catches up after a restart', async () => {
    await replicaB.close();
    const first = await pushValue(primary.url, 'db.host', 'while-b-was-down');
    expect(first.status).toBe(200);
    replicaB = await startTestReplica(dirB.path, primary.url, replicationToken, { holdMs: 3_000 });
    await readsValue(replicaB.url, 'while-b-was-down');
    expect(headOf(dirB.path, APP)).toBe(commitOf(first.etag));
  });
});

describe('when the primary stops', () => {
  it('the replicas keep serving, report the lag, refuse writes clearly, and one is promoted by the documented steps', async () => {
    const last = await pushValue(primary.url, 'db.host', 'before-the-end');
    const acknowledged = commitOf(last.etag);
    for (const replica of [replicaA, replicaB]) await hasHead(replica.repos, APP, acknowledged);
    await primary.close();

    // Still serving, with a lag that grows and a status that says why.
    const before = await readsValue(replicaA.url, 'before-the-end');
    const lagBefore = Number(before.headers.get('replica-lag'));
    await eventually('disconnected', () => (replicaA.replicator.status().connected ? undefined : true));
    const later = await eventually('lag grows', async () => {
      const answer = await getJson(replicaA.url, `/rest/pull/${APP}`, CONTEXT);
      return Number(answer.headers.get('replica-lag')) > lagBefore + 0.5 ? answer : undefined;
    });
    expect(later.status).toBe(200);
    expect(later.headers.get('commit')).toBe(acknowledged);
    const status = replicaA.replicator.status();
    expect(status.connected).toBe(false);
    expect(status.lastError).toBeTruthy();
    expect(status.lastError).not.toContain(replicationToken);
    const write = await pushValue(replicaA.url, 'db.host', 'nowhere');
    expect(write.status).toBe(503);
    expect(write.json.error).toBe('primary_unavailable');
    const missing = await getJson(replicaA.url, `/rest/pull/${APP}`, { ...CONTEXT, 'Min-Commit': 'f'.repeat(40) });
    expect(missing.status).toBe(503);
    expect(missing.json.message).toMatch(/last confirmed it was current with the primary [0-9.]+ s ago/);

    // Promote A: stop it, promote its folder, serve it as a primary. Re-point B at it, accepting the new primary.
    await replicaA.close();
    expect((await cliAsync(dirA.path, 'promote')).trim()).toBe('2');
    const promoted = await startTestServer(dirA.path);
    try {
      await replicaB.close();
      replicaB = await startTestReplica(dirB.path, promoted.url, replicationToken, {
        holdMs: 3_000,
        acceptNewPrimary: true,
      });
      const pushed = await pushValue(promoted.url, 'db.host', 'after-failover');
      expect(pushed.status).toBe(200);
      const commit = commitOf(pushed.etag);
      await readsValue(replicaB.url, 'after-failover');
      await hasHead(dirB.path, APP, commit);
      // Nothing the old primary acknowledged (and the replicas fetched) is lost: it is an ancestor.
      for (const repos of [dirA.path, dirB.path])
        git(gitdirOf(repos, APP), 'merge-base', '--is-ancestor', acknowledged, commit);
      expect(git(gitdirOf(dirB.path, APP), 'tag', '--list')).toContain('v1');
      expect(replicaB.replicator.status().following).toEqual({ folder: expect.any(String), generation: 2 });
    } finally {
      await promoted.close();
    }
  });
});
