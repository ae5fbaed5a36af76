/**
 * The TypeScript client, imported as a user would (`cfghub/client`, the
 * built package), against the real server: pull, push with the builder (a refusal is a
 * PushRefusedError with the reason), history, diff, and a watch that reconnects after a server
 * restart and gets the state that changed during the outage, without repeating one it had.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ClientError, PushRefusedError, type PullAnswer } from 'cfghub/client';
import { cliOk, startTestServer, tempDir, type TestServer } from '../../support/harness.js';

const REPO = 'acme/client';
let dir: ReturnType<typeof tempDir>;
let server: TestServer;
let client: Client;

beforeAll(async () => {
  dir = tempDir();
  cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  server = await startTestServer(dir.path);
  client = new Client({ server: server.url, applicationName: 'client-test' });
  await client
    .push(REPO)
    .set('db.host', 'localhost', { context: '*;*' })
    .set('db.port', '5432', { context: '*;*', type: 'Integer' })
    .send('first keys');
});

afterAll(async () => {
  await server?.close();
  dir?.remove();
});

describe('the client', () => {
  it('pulls, pushes with the builder, and reads history and diff', async () => {
    const first = await client.pull(REPO, { context: 'Prod;web' });
    expect(first.body?.properties?.['db.host'].val).toBe('localhost');
    const { commit } = await client
      .push(REPO)
      .set('db.host', 'db.prod', { context: 'Prod;*' })
      .unset('db.port', { context: '*;*' })
      .send('prod database');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    const after = await client.pull(REPO, { context: 'Prod;web', format: 'yaml' });
    expect(after.text).toBe('db.host: db.prod\n');
    const history = await client.history(REPO, { key: 'db.host' });
    expect(history.commits.map((c) => c.comment)).toEqual(['prod database', 'first keys']);
    expect(history.commits[0].applicationName).toBe('client-test');
    const diff = await client.diff(REPO, history.commits[1].id, { context: 'Prod;web' });
    expect(diff.resolved?.properties.changed['db.host']).toBeDefined();
    expect(Object.keys(diff.resolved?.properties.removed ?? {})).toEqual(['db.port']);
  });

  it('reports a refused push with its reason, and a bad request with the server’s message', async () => {
    const refused = client.push(REPO).set('db.port', 'many', { context: '*;*', type: 'Integer' }).send('bad port');
    await expect(refused).rejects.toBeInstanceOf(PushRefusedError);
    await expect(refused).rejects.toThrow('value is not an Integer');
    const error = await client.pull(REPO, { context: 'only-one-item' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).status).toBe(400);
    await expect(
      client
        .push(REPO)
        .element({ key: 'x', values: [{ context: '*;*', value: 'v', opp: 'remove' as never }] })
        .send('typo'),
    ).rejects.toThrow('opp may only be "delete"');
  });

  it('watches: the current answer first, then each change of the context only', async () => {
    const stop = new AbortController();
    const seen: PullAnswer[] = [];
    const watching = (async () => {
      for await (const answer of client.watch(REPO, { context: 'Dev;web', signal: stop.signal, waitSeconds: 30 })) {
        seen.push(answer);
        if (seen.length === 1) {
          await client.push(REPO).set('db.host', 'prod-only', { context: 'Prod;*' }).send('not seen by Dev');
          await client.push(REPO).set('db.host', 'db.dev', { context: 'Dev;*' }).send('seen by Dev');
        }
        if (seen.length === 2) stop.abort();
      }
    })();
    await watching;
    expect(seen.map((a) => a.body?.properties?.['db.host'].val)).toEqual(['localhost', 'db.dev']);
  });
});

describe('a watch across a server restart', () => {
  it('reconnects with back-off and gets the state that changed during the outage, once', async () => {
    const port = Number(new URL(server.url).port);
    const stop = new AbortController();
    const seen: unknown[] = [];
    let retries = 0;
    let next: (() => void) | undefined;
    const arrived = () => new Promise<void>((resolve) => (next = resolve));
    const watching = (async () => {
      for await (const answer of client.watch(REPO, {
        context: 'Test;web',
        signal: stop.signal,
        waitSeconds: 30,
        backOff: { firstMs: 20, maxMs: 200 },
        onRetry: () => retries++,
      })) {
        seen.push(answer.body?.properties?.['db.host'].val);
        next?.();
      }
    })();
    let first = arrived();
    await first;
    expect(seen).toEqual(['localhost']);

    // The server stops; while it is away another server process changes the context's value.
    await server.close();
    const other = await startTestServer(dir.path);
    await new Client({ server: other.url })
      .push(REPO)
      .set('db.host', 'changed-while-away', { context: 'Test;*' })
      .send('during the outage');
    await other.close();
    // Held until the client has tried at least once against the stopped server.
    const deadline = Date.now() + 10_000;
    while (retries === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(retries).toBeGreaterThan(0);

    first = arrived();
    server = await startTestServer(dir.path, { port });
    await first;
    expect(seen).toEqual(['localhost', 'changed-while-away']);
    stop.abort();
    await watching;
  });
});
