/**
 * A request that arrives right after another process's commit sees it, even when its socket
 * comes out of the event loop's poll ahead of the head watch's inotify event. libuv's epoll is
 * level-triggered: a socket reported in one poll stays queued at its old place in the kernel's
 * ready list, so the next request on that connection is handed over before a watch event queued
 * earlier (the cause of stale pulls seen under load in test/reliability/linearizability.test.ts). Here
 * the order is made on purpose, deterministically: while this process handles a request, plain
 * git moves the head (an inotify event is queued), then the client sends its next request on the
 * same connection, all before this process polls again. The read path waits for the watch events
 * queued before the request (`afterQueuedWatchEvents`, as AccessPolicy does); without that wait
 * the second request reads the old head.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { afterQueuedWatchEvents } from '../../../src/disk/refs/changeWatch.js';
import { createRepository } from '../../../src/service/admin/repositories.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import type { GitRepository } from '../../../src/disk/repository.js';
import { pollPhase } from '../../support/eventLoop.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

/** A commit on the head made by another process (plain git), as a second server would. */
function commitOutside(repository: GitRepository, parent: string, round: number): string {
  const tree = execFileSync('git', ['rev-parse', `${parent}^{tree}`], { cwd: repository.gitdir })
    .toString()
    .trim();
  const commit = execFileSync('git', ['commit-tree', tree, '-p', parent, '-m', `outside ${round}`], {
    cwd: repository.gitdir,
    env: GIT_ENV,
  })
    .toString()
    .trim();
  execFileSync('git', ['update-ref', 'refs/heads/main', commit, parent], { cwd: repository.gitdir });
  return commit;
}

describe('a read after another process commits', () => {
  it('sees the commit when its request comes out of the poll ahead of the watch event', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cfghub-watchorder-'));
    const registry = new RepositoryRegistry(root);
    const server = createServer();
    let client: Socket | undefined;
    try {
      const repository = await createRepository(registry, { account: 'acme', name: 'app', levels: ['Environment'] });
      repository.head(); // arms the watch
      await pollPhase();
      const expected: string[] = [];
      const seen: string[] = [];
      server.on('connection', (socket) => {
        socket.on('data', (chunk) => {
          for (const request of chunk.toString().split('\n').filter(Boolean)) {
            if (request.startsWith('commit')) {
              // Handling a request: the head is trusted, another process commits, and the client,
              // told of the commit, sends its read on this same connection.
              const parent = repository.head();
              expected.push(commitOutside(repository, parent, expected.length));
              client!.write('read\n');
            } else {
              void afterQueuedWatchEvents().then(() => {
                seen.push(repository.head());
                socket.write('done\n');
              });
            }
          }
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      client = connect((server.address() as AddressInfo).port, '127.0.0.1');
      await once(client, 'connect');
      for (let round = 0; round < 10; round++) {
        const answered = once(client, 'data');
        client.write('commit\n');
        await answered;
        expect(seen[round], `read ${round} sees the commit acknowledged before it`).toBe(expected[round]);
      }
    } finally {
      client?.destroy();
      server.close();
      registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
