/**
 * A `/metrics` scrape costs the same whatever the number of open connections: it walks no list of
 * handles, active resources or file descriptors on the event loop (prom-client's default
 * collectors for those did, 20 to 60 ms of held loop per scrape with 10,000 held watches), and
 * still reports the open connections and file descriptors.
 */
import fs from 'node:fs';
import { connect, type Socket } from 'node:net';
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import { afterAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../../support/harness.js';

const CONNECTIONS = 300;

const fixture = serverForFile();
const sockets: Socket[] = [];

afterAll(() => {
  for (const socket of sockets) socket.destroy();
});

async function scrape(): Promise<Family[]> {
  const response = await fetch(`${fixture.server.url}/metrics`);
  expect(response.status).toBe(200);
  return parsePrometheusTextFormat(await response.text());
}

const gauge = (families: Family[], name: string): number | undefined => {
  const value = families.find((family) => family.name === name)?.metrics[0]?.value;
  return value === undefined ? undefined : Number(value);
};

/** Scrapes until `ready` holds of the connections gauge (the server sees sockets open and close a little after the client). */
async function connectionsWhen(ready: (count: number) => boolean): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const count = gauge(await scrape(), 'cfghub_http_connections') ?? -1;
    if (ready(count) || Date.now() > deadline) return count;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Counts the calls made to `object[name]` while `during` runs. */
async function callsDuring<T extends object>(
  object: T,
  name: keyof T,
  during: () => Promise<void>,
  only: (args: unknown[]) => boolean = () => true,
): Promise<number> {
  const original = object[name] as unknown as (...args: unknown[]) => unknown;
  let calls = 0;
  (object as Record<keyof T, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    if (only(args)) calls++;
    return original.apply(this, args);
  };
  try {
    await during();
  } finally {
    (object as Record<keyof T, unknown>)[name] = original;
  }
  return calls;
}

describe('GET /metrics with many connections open', () => {
  it('counts the open connections and file descriptors', async () => {
    const port = Number(new URL(fixture.server.url).port);
    for (let i = 0; i < CONNECTIONS; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      sockets.push(socket);
    }
    // The held sockets, and the scrape's own connection.
    expect(await connectionsWhen((count) => count >= CONNECTIONS)).toBeGreaterThanOrEqual(CONNECTIONS);
    const families = await scrape();
    const listed = fs.readdirSync('/proc/self/fd').length - 1;
    const reported = gauge(families, 'process_open_fds');
    // This process holds both ends of every connection; the figure is within a few of a listing's.
    expect(reported).toBeGreaterThanOrEqual(2 * CONNECTIONS);
    expect(Math.abs(reported! - listed)).toBeLessThan(25);
    for (const socket of sockets.splice(0)) socket.destroy();
    expect(await connectionsWhen((count) => count <= 2)).toBeLessThanOrEqual(2);
  });

  it('walks no handle, resource or descriptor list to answer', async () => {
    const processHooks = process as unknown as {
      _getActiveHandles: () => unknown[];
      getActiveResourcesInfo: () => string[];
    };
    let families: Family[] = [];
    const scrapeNow = async () => {
      families = await scrape();
    };
    const handleWalks = await callsDuring(processHooks, '_getActiveHandles', () =>
      callsDuring(processHooks, 'getActiveResourcesInfo', scrapeNow).then((resourceWalks) =>
        expect(resourceWalks).toBe(0),
      ),
    );
    expect(handleWalks).toBe(0);
    const listings = await callsDuring(fs, 'readdirSync', scrapeNow, (args) =>
      String(args[0]).startsWith('/proc/self/fd'),
    );
    expect(listings).toBe(0);
    expect(families.map((family) => family.name)).not.toContain('nodejs_active_handles_total');
    expect(gauge(families, 'process_open_fds')).toBeGreaterThan(0);
    expect(gauge(families, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
