/**
 * The Kubernetes sidecar pattern of docs/operations/kubernetes.md, as processes: a writer
 * (`cfghub pull --watch --output` into a shared folder, as the sidecar container runs it) and a
 * reader (a separate process polling the file, as an application reloading on change). The reader
 * sees the first answer, then the new one after a push, and never a partial file (the writer
 * replaces the file atomically).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cliOk, pushTo, serverForFile, tempDir } from '../../support/harness.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/pods';
const fixture = serverForFile();
let shared: ReturnType<typeof tempDir>;

/** The application: prints each distinct content of the file, whole, as one JSON line. */
const READER = `
const fs = require('node:fs');
let last;
setInterval(() => {
  let text;
  try { text = fs.readFileSync(process.argv[1], 'utf8'); } catch { return; }
  if (text !== last) { last = text; process.stdout.write(JSON.stringify(text) + '\\n'); }
}, 5);
`;

beforeAll(async () => {
  shared = tempDir();
  cliOk(
    fixture.repos,
    'repo',
    'create',
    REPO,
    '--context',
    'Environment,Pod',
    '--token-free-push',
    '--token-free-pull',
  );
  const answer = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'pods',
    enableKeyCreation: true,
    data: [
      { key: 'pool.size', values: [{ context: '*;*', value: '10' }] },
      { key: 'pad', values: [{ context: '*;*', value: 'x'.repeat(200_000) }] },
    ],
  });
  expect(answer.status).toBe(200);
});

afterAll(() => shared.remove());

describe('a pull-watch sidecar and an application sharing a folder', () => {
  it('keeps the shared file current, replaced whole on each change', async () => {
    const folder = join(shared.path, 'config');
    mkdirSync(folder);
    const file = join(folder, 'application.properties');
    const children: ChildProcess[] = [];
    const seen: string[] = [];
    try {
      const writer = spawn(
        process.execPath,
        [CLI, 'pull', REPO, '--context', 'Production;web-0', '--format', 'properties', '--output', file, '--watch'],
        {
          env: { ...process.env, CFGHUB_SERVER: fixture.server.url },
          stdio: ['ignore', 'ignore', 'ignore'],
        },
      );
      children.push(writer);
      const reader = spawn(process.execPath, ['-e', READER, file], { stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(reader);
      let buffered = '';
      reader.stdout!.on('data', (chunk) => {
        buffered += String(chunk);
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) seen.push(JSON.parse(line));
      });
      await until(
        () => seen.some((text) => text.includes('pool.size=10\n')),
        'the application to read the first answer',
        30_000,
      );
      const push = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
        changeComment: 'grow',
        data: [{ key: 'pool.size', values: [{ context: 'Production;*', value: '20' }] }],
      });
      expect(push.status).toBe(200);
      await until(
        () => seen.some((text) => text.includes('pool.size=20\n')),
        'the application to read the new answer',
        30_000,
      );
      // Every version the application read was a whole answer: the large value and the last line complete.
      for (const text of seen) {
        expect(text).toContain(`pad=${'x'.repeat(200_000)}\n`);
        expect(text).toMatch(/pool\.size=(10|20)\n/);
      }
    } finally {
      for (const child of children) child.kill('SIGTERM');
    }
  });
});
