/**
 * Webhooks under `cfghub serve --workers 2`: every worker sees every commit, and each commit is
 * delivered once; when the delivering worker is killed, the worker replacing it delivers. Both
 * workers are killed in turn, so whichever delivered, its successor is seen delivering.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, headOf, runCommand, tempDir } from '../../support/harness.js';
import { until } from '../../support/poll.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';

const REPO = 'acme/hooked';
const dir = tempDir();
let server: ServerProcess;
let receiver: Server;
let receiverUrl = '';
/** Deliveries received, by commit. */
const received = new Map<string, number>();

interface LogEntry {
  readonly event?: string;
  readonly pid?: number;
  readonly pids?: number[];
}

const logOf = (): LogEntry[] =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogEntry);

async function push(value: string): Promise<string> {
  const answer = await fetch(`${server.url}/rest/push/${REPO}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      changeComment: `pool ${value}`,
      enableKeyCreation: true,
      data: [{ key: 'pool.size', values: [{ context: '*', value }] }],
    }),
  });
  expect(answer.status).toBe(200);
  return headOf(dir.path, REPO);
}

async function pushAndAwaitDelivery(value: string): Promise<string> {
  const commit = await push(value);
  await until(() => received.has(commit), `the delivery of ${commit}`, 30_000);
  return commit;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += String(chunk)));
    req.on('end', () => {
      const commit = (JSON.parse(body) as { commit: string }).commit;
      received.set(commit, (received.get(commit) ?? 0) + 1);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
  cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Environment', '--token-free-push');
  const admin = cliOk(dir.path, 'admin-token', 'create', '--name', 'operator').trim();
  server = await startServerProcess(dir.path, {}, [], ['--workers', '2']);
  await until(() => logOf().some((e) => e.event === 'listening'), 'both workers listening');
  const added = await runCommand(['webhook', 'add', REPO, receiverUrl, '--server', server.url], {
    env: { ...process.env, CFGHUB_ADMIN_TOKEN: admin },
    input: 'a-receiver-secret-of-some-length\n',
  });
  expect(added.code, added.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  dir.remove();
});

describe('webhooks under serve --workers 2', () => {
  it('deliver each commit once, and keep delivering after each worker in turn is killed and replaced', async () => {
    // The hook was added through either worker; the delivering one sees it within a second
    // (HOOKS_RECHECK_MS): pushed until a first commit is delivered.
    let first = '';
    for (let attempt = 0; attempt < 20 && !received.has(first); attempt++) {
      first = await push(`first-${attempt}`);
      await until(() => received.has(first), 'a first delivery', 2_000).catch(() => undefined);
    }
    expect(received.has(first)).toBe(true);
    const pids = logOf().find((e) => e.event === 'listening')!.pids!;
    expect(pids).toHaveLength(2);
    let restarts = 0;
    for (const victim of pids) {
      process.kill(victim, 'SIGKILL');
      restarts++;
      await until(
        () => logOf().filter((e) => e.event === 'worker-restarted').length === restarts,
        'the replacement worker',
        30_000,
      );
      await pushAndAwaitDelivery(`after-${restarts}`);
    }
    // Deliveries of one commit come from one worker: by the last delivery, none came twice.
    expect(received.get(first)).toBe(1);
    expect([...received.values()].every((count) => count === 1)).toBe(true);
  }, 120_000);
});
