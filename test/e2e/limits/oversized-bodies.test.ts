/**
 * A body over the limit gets its 413, and its reason, at every kind of client: Node's fetch,
 * Python's urllib and Java's HttpURLConnection (which send the whole body before reading), curl
 * with and without `Expect: 100-continue`, and a plain socket sending 64 KiB pieces; on every route
 * that reads a body (the push on node:http and on express, revert, the admin API, the replication
 * feed). The server closes such a connection only after draining the rest of the body unkept
 * (docs/limits.md): its memory stays flat meanwhile and other clients are served.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, createRepo, tempDir, TOKEN_FREE } from '../../support/harness.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';
import { curlPost, fetchPost, javaPosts, socketPost, urllibPosts, type Outcome } from '../../support/uploadClients.js';

const REPO = 'acme/app';
const LIMIT = 16 * 1024 * 1024;
const FEED_LIMIT = 2 * 1024 * 1024;
const MiB = 1024 * 1024;

/** A push of one 17 MiB value: a body anyone might send, over the 16 MiB limit. */
const BODY = Buffer.from(
  JSON.stringify({
    changeComment: 'too big',
    data: [{ key: 'big', values: [{ context: '*;*', value: 'v'.repeat(17 * MiB) }] }],
  }),
);
const ANNOUNCED = `the request body is ${BODY.length} bytes (Content-Length), more than the limit of ${LIMIT}`;

let dir: ReturnType<typeof tempDir>;
let server: ServerProcess;
let bodyFile: string;
let adminToken: string;
let replicationToken: string;

const pushUrl = () => `${server.url}/rest/push/${REPO}`;

/** Every try answered 413 with the Content-Length reason. */
function expectRefusedWithReason(outcomes: readonly Outcome[], reason = ANNOUNCED): void {
  for (const outcome of outcomes) {
    expect(outcome).toEqual({ status: 413, body: expect.any(String) });
    expect(JSON.parse((outcome as { body: string }).body)).toEqual({ error: 'payload_too_large', message: reason });
  }
}

function residentBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

beforeAll(async () => {
  dir = tempDir();
  createRepo(dir.path, REPO, 'Environment,Application', ...TOKEN_FREE);
  adminToken = cliOk(dir.path, 'admin-token', 'create', '--name', 'ops').trim();
  bodyFile = join(dir.path, 'body.json');
  writeFileSync(bodyFile, BODY);
  server = await startServerProcess(dir.path);
  const made = await fetch(`${server.url}/rest/admin/replication-tokens`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ label: 'replica' }),
  });
  replicationToken = ((await made.json()) as { token: string }).token;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('a push of 17 MiB, over the 16 MiB limit', () => {
  it("reaches Node's fetch as its 413, every time", async () => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 5; i++) outcomes.push(await fetchPost(pushUrl(), BODY));
    expectRefusedWithReason(outcomes);
  });

  it("reaches Python's urllib as its 413, every time", async () => {
    expectRefusedWithReason(await urllibPosts(pushUrl(), bodyFile, 3));
  });

  it("reaches Java's HttpURLConnection as its 413, every time", async () => {
    expectRefusedWithReason(await javaPosts(pushUrl(), bodyFile, 3));
  });

  it('reaches curl without Expect as its 413; with Expect: 100-continue, the 413 comes instead of the 100 and the body is never sent', async () => {
    for (let i = 0; i < 3; i++) {
      const { uploaded, ...outcome } = await curlPost(pushUrl(), bodyFile, false);
      expectRefusedWithReason([outcome]);
    }
    const { uploaded, ...outcome } = await curlPost(pushUrl(), bodyFile, true);
    expectRefusedWithReason([outcome]);
    expect(uploaded).toBe(0);
    // On the wire: no 100 before the 413.
    const answer = await socketPost(server.url, {
      path: `/rest/push/${REPO}`,
      body: BODY,
      stopAtAnswer: true,
      expectContinue: true,
    });
    expect(answer.continued).toBe(false);
    expect(answer.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(answer.json).toEqual({ error: 'payload_too_large', message: ANNOUNCED });
    expect(answer.sent).toBe(0);
  });

  it('gets its 100 Continue, with Expect, when it is within the limit and read', async () => {
    const body = Buffer.from(
      JSON.stringify({
        changeComment: 'within',
        enableKeyCreation: true,
        data: [{ key: 'k', values: [{ context: '*;*', value: 'v'.repeat(256 * 1024) }] }],
      }),
    );
    const answer = await socketPost(server.url, {
      path: `/rest/push/${REPO}`,
      body,
      stopAtAnswer: false,
      expectContinue: true,
    });
    expect(answer.continued).toBe(true);
    expect(answer.status).toBe(200);
  });

  it('reaches a plain socket sending 64 KiB pieces, whether it stops at the answer or sends everything first, without a reset', async () => {
    for (const stopAtAnswer of [true, false, true]) {
      const answer = await socketPost(server.url, { path: `/rest/push/${REPO}`, body: BODY, stopAtAnswer });
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(413);
      expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
      expect(answer.json).toEqual({ error: 'payload_too_large', message: ANNOUNCED });
      if (!stopAtAnswer) expect(answer.sent).toBe(BODY.length);
    }
  });

  it('sent in chunks, without a Content-Length, is answered 413 as soon as it passes the limit, not at its end', async () => {
    const answer = await socketPost(server.url, {
      path: `/rest/push/${REPO}`,
      body: 48 * MiB,
      chunked: true,
      stopAtAnswer: true,
    });
    expect(answer.error).toBeUndefined();
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({ error: 'payload_too_large', message: 'the request body is larger than the limit' });
    expect(answer.sent).toBeLessThan(32 * MiB);
    // And when the client sends it all regardless, it still reads the answer.
    const regardless = await socketPost(server.url, {
      path: `/rest/push/${REPO}`,
      body: BODY,
      chunked: true,
      stopAtAnswer: false,
    });
    expect(regardless.error).toBeUndefined();
    expect(regardless.status).toBe(413);
  });
});

describe('every route that reads a body', () => {
  const routes: { name: string; path: string; headers: Record<string, string>; limit: number }[] = [
    {
      name: 'a compressed push (express)',
      path: `/rest/push/${REPO}`,
      headers: { 'Content-Encoding': 'gzip' },
      limit: LIMIT,
    },
    { name: 'a revert', path: `/rest/revert/${REPO}`, headers: {}, limit: LIMIT },
    {
      name: 'an admin request',
      path: '/rest/admin/repositories',
      headers: { Authorization: 'Bearer ADMIN' },
      limit: LIMIT,
    },
    {
      name: 'a replication feed request',
      path: '/rest/replication/feed',
      headers: { Authorization: 'Bearer REPLICATION' },
      limit: FEED_LIMIT,
    },
  ];
  const withTokens = (headers: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [
        name,
        value.replace('ADMIN', adminToken).replace('REPLICATION', replicationToken),
      ]),
    );

  it.each(routes)(
    'answers $name over its limit with a 413 that reaches fetch and a plain socket',
    async ({ path, headers, limit }) => {
      const body = BODY.subarray(0, limit + MiB);
      const reason = `the request body is ${body.length} bytes (Content-Length), more than the limit of ${limit}`;
      expectRefusedWithReason([await fetchPost(`${server.url}${path}`, body, withTokens(headers))], reason);
      for (const stopAtAnswer of [true, false]) {
        const answer = await socketPost(server.url, { path, headers: withTokens(headers), body, stopAtAnswer });
        expect(answer.error).toBeUndefined();
        expect(answer.status).toBe(413);
        expect(answer.json).toEqual({ error: 'payload_too_large', message: reason });
      }
    },
  );
});

describe('while refused bodies drain', () => {
  it("keeps the server's memory flat and answers other clients", async () => {
    await socketPost(server.url, { path: `/rest/push/${REPO}`, body: 40 * MiB, stopAtAnswer: false }); // the first drain's own costs, once
    const before = residentBytes(server.pid);
    let peak = before;
    let draining = true;
    // Four clients each sending 40 MiB after their 413, paced so the drains overlap for a while.
    const drains = Promise.all(
      Array.from({ length: 4 }, () =>
        socketPost(server.url, { path: `/rest/push/${REPO}`, body: 40 * MiB, stopAtAnswer: false, pauseMs: 2 }),
      ),
    ).finally(() => (draining = false));
    let pulls = 0;
    while (draining) {
      peak = Math.max(peak, residentBytes(server.pid));
      const pull = await fetch(`${server.url}/rest/pull/${REPO}`, { headers: { Context: 'Production;web' } });
      expect(pull.status).toBe(200);
      await pull.text();
      if (draining) pulls++;
    }
    const answers = await drains;
    for (const answer of answers) {
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(413);
      expect(answer.sent).toBe(40 * MiB);
    }
    // 160 MiB went through; kept, it would be there in memory.
    expect(peak - before).toBeLessThan(32 * MiB);
    expect(pulls).toBeGreaterThanOrEqual(5);
  });
});
