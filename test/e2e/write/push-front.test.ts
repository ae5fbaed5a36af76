/**
 * The push route on plain node:http (src/http/routes/pushFront.ts) answers as the express route
 * does: a push with a gzip body still goes through express (whose body parser inflates it), and the
 * same bad request sent to both fronts gets the same status, type and body, byte for byte. The
 * real server on loopback, a real bare repository, checked with git.
 */
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, headOf, serverForFile } from '../../support/harness.js';
import { rawRequest, type RawAnswer } from '../../support/rawHttp.js';

const REPO = 'acme/front';
const LIMIT = 2_048;

const fixture = serverForFile({ bodyLimit: LIMIT });

const body = (key: string, value: string) => ({
  changeComment: `set ${key}`,
  enableKeyCreation: true,
  data: [{ key, values: [{ context: '*', value }] }],
});

/** POSTs `payload` as JSON, plain (served by node:http) or gzip-compressed (served by express). */
function post(
  path: string,
  payload: string | Buffer,
  compressed: boolean,
  extra: { chunked?: boolean; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  return rawRequest(fixture.server.url, {
    path,
    body: compressed ? gzipSync(bytes) : bytes,
    chunked: extra.chunked,
    headers: {
      'Content-Type': 'application/json',
      ...(compressed ? { 'Content-Encoding': 'gzip' } : {}),
      ...extra.headers,
    },
  });
}

/** What must be the same from both fronts: all but the request id and the date. */
const comparable = (answer: RawAnswer) => ({
  status: answer.status,
  type: answer.headers['content-type'],
  etag: answer.headers.etag,
  body: answer.body,
});

describe('the push route without express', () => {
  beforeAll(() => {
    cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env', '--token-free-push', '--token-free-pull');
  });

  it('lands a plain push and a gzip-compressed one, each answered with its commit', async () => {
    const plain = await post(`/rest/push/${REPO}`, JSON.stringify(body('plain', '1')), false);
    expect(plain.status, plain.body).toBe(200);
    expect(plain.headers.etag).toBe(`"${headOf(fixture.repos, REPO)}"`);
    const compressed = await post(`/rest/push/${REPO}`, JSON.stringify(body('zipped', '2')), true);
    expect(compressed.status, compressed.body).toBe(200);
    expect(compressed.headers.etag).toBe(`"${headOf(fixture.repos, REPO)}"`);
    expect(compressed.headers.etag).not.toBe(plain.headers.etag);
  });

  it.each([
    ['malformed JSON', `/rest/push/${REPO}`, '{"data": [', {}],
    ['a malformed push', `/rest/push/${REPO}`, JSON.stringify({ data: [{ key: 7 }] }), {}],
    [
      'a refused push (304)',
      `/rest/push/${REPO}`,
      JSON.stringify({ ...body('refused', 'x'), enableKeyCreation: false }),
      {},
    ],
    [
      'a body over the limit, sent chunked',
      `/rest/push/${REPO}`,
      JSON.stringify(body('big', 'v'.repeat(3 * LIMIT))),
      { chunked: true },
    ],
    ['an unknown repository', '/rest/push/acme/nowhere', JSON.stringify(body('k', 'v')), {}],
    ['a push without a token on the token form', '/rest/push', JSON.stringify(body('k', 'v')), {}],
    ['a malformed percent-encoding in the path', '/rest/push/acme/%E0%A4%A', JSON.stringify(body('k', 'v')), {}],
    [
      'a bad Client-Version',
      `/rest/push/${REPO}`,
      JSON.stringify(body('k', 'v')),
      { headers: { 'Client-Version': 'v2.0' } },
    ],
    ['a bad If-Match', `/rest/push/${REPO}`, JSON.stringify(body('k', 'v')), { headers: { 'If-Match': 'nope' } }],
  ])('answers %s as express does', async (_name, path, payload, extra) => {
    const head = headOf(fixture.repos, REPO);
    const plain = await post(path, payload, false, extra);
    const compressed = await post(path, payload, true, extra);
    expect(plain.status).toBeGreaterThanOrEqual(300);
    expect(comparable(plain)).toEqual(comparable(compressed));
    expect(headOf(fixture.repos, REPO)).toBe(head);
  });

  it('leaves a wrong Content-Type to the same 415', async () => {
    const plain = await post(`/rest/push/${REPO}`, JSON.stringify(body('k', 'v')), false, {
      headers: { 'Content-Type': 'text/plain' },
    });
    const compressed = await post(`/rest/push/${REPO}`, JSON.stringify(body('k', 'v')), true, {
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(plain.status).toBe(415);
    expect(comparable(plain)).toEqual(comparable(compressed));
  });
});
