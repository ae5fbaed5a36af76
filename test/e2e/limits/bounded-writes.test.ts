/**
 * Bounded work on writes and passwords (items 3 to 5), against the real server (a child
 * process, so a frozen server fails a test by its time-out): values per key and per push (413), a
 * cold load of a large repository that lets other requests through, one key derivation per group
 * per request and a cap per push, and a body announced too large refused before it is read.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VALUES_PER_KEY, MAX_VALUES_PER_PUSH } from '../../../src/domain/pushRequest.js';
import { MAX_PROFILE_GROUPS } from '../../../src/http/access/securityProfile.js';
import { MAX_PUSH_DERIVATIONS } from '../../../src/service/write/pushPasswords.js';
import { cliOk, cliWithInput, headOf, jsonOrUndefined, tempDir } from '../../support/harness.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';

const LEVELS = 'Environment,Application,Instance';
const ANY = '*;*;*';
const VALUES = 'acme/values';
const BIG = 'acme/big';
const LOCKED = 'acme/locked';
const PASSWORD = 'correct-horse-1';
/** Far beyond what any of these requests needs, far below what a frozen server takes. */
const PATIENCE_MS = 30_000;

let dir: ReturnType<typeof tempDir>;
let server: ServerProcess;

async function request(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(PATIENCE_MS),
  });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), text, json: jsonOrUndefined(text) };
}

const push = (repo: string, data: unknown[], headers: Record<string, string> = {}) =>
  request('POST', `/rest/push/${repo}`, headers, { changeComment: 'test', enableKeyCreation: true, data });
const reason = (answer: { etag: string | null }) => (answer.etag ?? '').replace(/^"|"$/g, '');
const contexts = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i) => ({ context: `e${from + i};*;*`, value: `v${from + i}` }));

beforeAll(async () => {
  dir = tempDir();
  for (const repo of [VALUES, BIG, LOCKED])
    cliOk(dir.path, 'repo', 'create', repo, '--context', LEVELS, '--token-free-push', '--token-free-pull');
  server = await startServerProcess(dir.path);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('values per key and per push', () => {
  it(`answers 413 naming the element for a key of ${MAX_VALUES_PER_KEY + 1} values, and for a push of ${MAX_VALUES_PER_PUSH + 1} values`, async () => {
    const head = headOf(dir.path, VALUES);
    const one = await push(VALUES, [{ key: 'many', values: contexts(MAX_VALUES_PER_KEY + 1) }]);
    expect(one.status).toBe(413);
    expect(one.json).toMatchObject({ error: 'payload_too_large' });
    expect(one.json.message).toMatch(
      new RegExp(
        `data\\[0\\]\\.values: a key holds at most ${MAX_VALUES_PER_KEY} values, this element has ${MAX_VALUES_PER_KEY + 1}`,
      ),
    );
    const keys = Math.ceil((MAX_VALUES_PER_PUSH + 1) / MAX_VALUES_PER_KEY);
    const all = await push(
      VALUES,
      Array.from({ length: keys }, (_, i) => ({ key: `k${i}`, values: contexts(MAX_VALUES_PER_KEY) })),
    );
    expect(all.status).toBe(413);
    expect(all.json.message).toMatch(new RegExp(`a push holds at most ${MAX_VALUES_PER_PUSH} values`));
    expect(headOf(dir.path, VALUES)).toBe(head);
  });

  it(`refuses (304, naming the key) a push that would make a stored key hold more than ${MAX_VALUES_PER_KEY} values`, async () => {
    expect((await push(VALUES, [{ key: 'grows', values: contexts(MAX_VALUES_PER_KEY) }])).status).toBe(200);
    const head = headOf(dir.path, VALUES);
    const more = await push(VALUES, [{ key: 'grows', values: contexts(1, MAX_VALUES_PER_KEY) }]);
    expect(more.status).toBe(304);
    expect(reason(more)).toMatch(
      new RegExp(
        `data\\[0\\] key grows: would hold ${MAX_VALUES_PER_KEY + 1} values, more than the ${MAX_VALUES_PER_KEY}`,
      ),
    );
    expect(headOf(dir.path, VALUES)).toBe(head);
    // Changing an existing value of the full key is fine.
    expect((await push(VALUES, [{ key: 'grows', values: [{ context: 'e0;*;*', value: 'changed' }] }])).status).toBe(
      200,
    );
  });
});

describe('a cold load of a large repository', () => {
  it('lets other requests through while the first pull after a restart builds the snapshot', async () => {
    const data = Array.from({ length: 10_000 }, (_, i) => ({ key: `big.${i}`, values: contexts(3, i % 7) }));
    expect((await push(BIG, data)).status).toBe(200);
    await server.stop();
    server = await startServerProcess(dir.path);
    expect((await request('GET', '/healthz')).status).toBe(200);
    // /healthz one after another for as long as the first pull of BIG is in flight.
    let pulling = true;
    const pull = request('GET', `/rest/pull/${BIG}`, { Context: 'e3;web;n1' }).finally(() => (pulling = false));
    let answered = 0;
    while (pulling) {
      expect((await request('GET', '/healthz')).status).toBe(200);
      if (pulling) answered++;
    }
    const pulled = await pull;
    expect(pulled.status).toBe(200);
    // Key i has contexts e(i mod 7) to e(i mod 7 + 2): e3 resolves where i mod 7 is 1, 2 or 3.
    expect(Object.keys(pulled.json.properties)).toHaveLength(
      Array.from({ length: 10_000 }, (_, i) => i % 7).filter((r) => r >= 1 && r <= 3).length,
    );
    // Built in one piece, the snapshot let one /healthz through at most (the one before it began).
    expect(answered).toBeGreaterThanOrEqual(5);
  }, 120_000);
});

describe('password guessing', () => {
  beforeAll(async () => {
    for (let i = 0; i <= MAX_PUSH_DERIVATIONS; i++) {
      const created = await cliWithInput(dir.path, `${PASSWORD}\n`, 'group', 'create', LOCKED, `g${i}`);
      expect(created.code, created.stderr).toBe(0);
    }
    const data = Array.from({ length: MAX_PUSH_DERIVATIONS }, (_, i) => ({
      key: `s${i}`,
      securityGroup: `g${i}`,
      password: PASSWORD,
      values: [{ context: ANY, value: `secret ${i}` }],
    }));
    const answer = await push(LOCKED, data);
    expect(answer.status, reason(answer)).toBe(200);
  }, 120_000);

  it('answers 400 to a header naming one group twice in any case, and to more groups than the cap', async () => {
    const twice = await request('GET', `/rest/pull/${LOCKED}`, {
      Context: ANY,
      'Security-Profile-Auth': JSON.stringify({ g1: 'wrong-one-1', G1: 'wrong-two-2' }),
    });
    expect(twice.status).toBe(400);
    expect(twice.json.message).toMatch(/names security group "G1" twice \(also as "g1"\)/);
    const names = Object.fromEntries(Array.from({ length: MAX_PROFILE_GROUPS + 1 }, (_, i) => [`g${i}`, PASSWORD]));
    const many = await request('GET', `/rest/pull/${LOCKED}`, {
      Context: ANY,
      'Security-Profile-Auth': JSON.stringify(names),
    });
    expect(many.status).toBe(400);
    expect(many.json.message).toMatch(
      new RegExp(`names ${MAX_PROFILE_GROUPS + 1} security groups, more than the ${MAX_PROFILE_GROUPS} allowed`),
    );
    expect(JSON.stringify([twice.json, many.json])).not.toContain(PASSWORD);
    // Within the cap, the groups open.
    const ok = await request('GET', `/rest/pull/${LOCKED}`, {
      Context: ANY,
      'Security-Profile-Auth': JSON.stringify({ g0: PASSWORD, G1: PASSWORD }),
    });
    expect(ok.status).toBe(200);
    expect(ok.json.properties.s0.val).toBe('secret 0');
    expect(ok.json.properties.s1.val).toBe('secret 1');
    expect(ok.json.properties.s2.encryption).toBeTruthy();
    expect(ok.json.properties.s2.val).not.toBe('secret 2');
  });

  it(`caps a push at ${MAX_PUSH_DERIVATIONS} checks of a password against a group, however few passwords it carries`, async () => {
    const head = headOf(dir.path, LOCKED);
    // One password, on keys of 17 groups: 17 derivations.
    const data = Array.from({ length: MAX_PUSH_DERIVATIONS + 1 }, (_, i) => ({
      key: `s${i}`,
      securityGroup: `g${i}`,
      password: PASSWORD,
      values: [{ context: ANY, value: `new ${i}` }],
    }));
    const answer = await push(LOCKED, data);
    expect(answer.status).toBe(304);
    expect(reason(answer)).toMatch(
      new RegExp(
        `at most ${MAX_PUSH_DERIVATIONS} passwords against security groups .* this one needs ${MAX_PUSH_DERIVATIONS + 1}`,
      ),
    );
    expect(headOf(dir.path, LOCKED)).toBe(head);
    // A password is tried only on the groups its element involves: 16 elements, 16 derivations, accepted.
    expect((await push(LOCKED, data.slice(1))).status).toBe(200);
  }, 60_000);
});

describe('a body announced larger than the limit', () => {
  it('gets 413 at once, while the body is still being sent', async () => {
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    const answer = new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += String(chunk);
        if (text.includes('\r\n\r\n') && text.includes('}')) resolve(text);
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error(`no answer within ${PATIENCE_MS} ms: ${text}`)), PATIENCE_MS).unref();
    });
    socket.write(
      `POST /rest/push/${VALUES} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 ** 30}\r\n\r\n{"data": [`,
    );
    const text = await answer;
    socket.destroy();
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/connection: close/i);
    expect(text).toContain(
      `"the request body is ${2 ** 30} bytes (Content-Length), more than the limit of ${16 * 1024 * 1024}"`,
    );
  });
});
