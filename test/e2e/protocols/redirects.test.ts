/**
 * No client of cfghub's follows a redirect with its credentials or a body. A real server on
 * loopback answers every request with `307 Location: <another origin>`, and the other origin (a
 * second real server) records every request it gets: the CLI (`pull`, `set --server`, an admin
 * command with a group's password), the TypeScript client, a replica process (its state request)
 * and the replica's `git fetch` each stop at the redirect with an error naming it, and nothing
 * reaches the other origin.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, RedirectRefusedError } from '../../../src/client/index.js';
import { createMirror } from '../../../src/service/replication/mirror.js';
import { holdsFor, until } from '../../support/poll.js';
import { runCommand, tempDir } from '../../support/harness.js';
import { startServerProcess } from '../../support/serverProcess.js';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A loopback server that records each request and answers it with `answer`. */
async function recording(answer: (request: IncomingMessage) => { status: number; headers?: Record<string, string> }) {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      const { status, headers } = answer(request);
      response.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((done) => server.close(() => done())) };
}

const TOKEN = 'redirect-test-token-0123456789';
const PASSWORD = 'correct horse battery';
let elsewhere: Awaited<ReturnType<typeof recording>>;
let redirector: Awaited<ReturnType<typeof recording>>;
const dir = tempDir('cfghub-redirect-');

beforeAll(async () => {
  elsewhere = await recording(() => ({ status: 200 }));
  redirector = await recording((request) => ({ status: 307, headers: { Location: `${elsewhere.url}${request.url}` } }));
});

afterAll(async () => {
  await redirector.close();
  await elsewhere.close();
  dir.remove();
});

/** What the redirector was sent since `from`, and that the other origin got nothing at all. */
function expectStoppedAtRedirect(from: number): Received[] {
  expect(elsewhere.received).toEqual([]);
  const sent = redirector.received.slice(from);
  expect(sent.length).toBeGreaterThan(0);
  return sent;
}

const cfghub = (args: string[], env: NodeJS.ProcessEnv) =>
  runCommand(args, {
    env: { ...process.env, CFGHUB_SERVER: '', CFGHUB_TOKEN: '', CFGHUB_ADMIN_TOKEN: '', ...env },
    input: `${PASSWORD}\n`,
  });

describe('no client follows a redirect', () => {
  it('cfghub pull and cfghub set --server stop at the redirect, naming it, and send nothing elsewhere', async () => {
    const from = redirector.received.length;
    const pulled = await cfghub(['pull', 'acme/app', '--context', 'Prod', '--server', redirector.url], {
      CFGHUB_TOKEN: TOKEN,
    });
    expect(pulled.code).toBe(1);
    expect(pulled.stderr).toContain(`answered 307 redirecting to ${elsewhere.url}: cfghub does not follow redirects`);
    const set = await cfghub(
      ['set', 'acme/app', 'db.port', '5433', '--context', 'Prod', '-m', 'moved', '--server', redirector.url],
      { CFGHUB_TOKEN: TOKEN },
    );
    expect(set.code).toBe(1);
    expect(set.stderr).toContain('cfghub does not follow redirects');
    const sent = expectStoppedAtRedirect(from);
    expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
  });

  it('an admin command (group create, with a password) stops at the redirect and sends the password nowhere else', async () => {
    const from = redirector.received.length;
    const created = await cfghub(['group', 'create', 'acme/app', 'secret', '--server', redirector.url], {
      CFGHUB_ADMIN_TOKEN: TOKEN,
    });
    expect(created.code).toBe(1);
    expect(created.stderr).toContain('cfghub does not follow redirects');
    expectStoppedAtRedirect(from);
  });

  it('the TypeScript client throws RedirectRefusedError for reads and pushes', async () => {
    const from = redirector.received.length;
    const client = new Client({ server: redirector.url, token: TOKEN });
    await expect(client.pull('acme/app', { context: 'Prod' })).rejects.toBeInstanceOf(RedirectRefusedError);
    await expect(client.push('acme/app').set('k', 'v', { context: 'Prod' }).send('c')).rejects.toThrow(
      /307 redirecting to .*cfghub does not follow redirects/,
    );
    expectStoppedAtRedirect(from);
  });

  it("a replica process asks the primary's state and stops at the redirect; its git fetch does not follow one either", async () => {
    const from = redirector.received.length;
    const repos = tempDir('cfghub-redirect-replica-');
    const replica = await startServerProcess(
      repos.path,
      { CFGHUB_REPLICATION_TOKEN: TOKEN },
      [],
      ['--replica-of', redirector.url],
    );
    try {
      await until(
        () => redirector.received.slice(from).some((r) => r.url === '/rest/replication/state'),
        'the state request',
      );
      await until(
        () => replica.output().includes('cfghub does not follow redirects'),
        'the replica saying why it does not replicate',
      );
      await holdsFor(1000, () => expect(elsewhere.received).toEqual([]));
    } finally {
      await replica.stop();
      repos.remove();
    }
    const gitFrom = redirector.received.length;
    const mirrors = tempDir('cfghub-redirect-git-');
    try {
      await expect(
        createMirror(mirrors.path, { primary: redirector.url, token: TOKEN }, 'acme', 'app'),
      ).rejects.toThrow(/git fetch of acme\/app failed/);
    } finally {
      mirrors.remove();
    }
    expect(redirector.received.slice(gitFrom).map((r) => r.url)).toEqual([
      '/git/acme/app.git/info/refs?service=git-upload-pack',
    ]);
    expect(elsewhere.received).toEqual([]);
  });
});
