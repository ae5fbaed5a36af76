/**
 * The test processes' fetch (test/support/freshConnections.ts, a vitest setup file) never writes a
 * request on a kept-alive connection that idled out while the test's event loop was blocked by a
 * synchronous helper.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('fetch after the test blocked its event loop past the server keep-alive', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    // In this process, as the in-process servers of the tests are: its keep-alive timer (5 s, as
    // `cfghub serve`) expires during the block and fires in the turn after it, when the next
    // request has already been written on the connection.
    server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => server.close());

  it('sends a POST on a new connection and gets its answer', async () => {
    expect(await (await fetch(url)).text()).toBe('ok');
    expect(await (await fetch(url)).text()).toBe('ok');
    execFileSync('sleep', ['6']); // as a synchronous `cfghub` or git call on a loaded machine
    const answer = await fetch(url, { method: 'POST', body: 'x'.repeat(700_000) });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('ok');
  }, 20_000);
});
