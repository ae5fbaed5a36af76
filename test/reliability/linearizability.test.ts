/**
 * Linearizability: a concurrent run of pushes and pulls against two server
 * processes on the same repositories folder is recorded, each operation with its start, end and
 * result, and checked per repository against the order of the commits in git:
 * - each pull shows exactly the state after some prefix of the acknowledged pushes;
 * - that prefix holds every push acknowledged before the pull started, and only pushes that had
 *   started before the pull ended (real-time order), so a client always reads its own writes;
 * - a push acknowledged before another started comes first in history.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, pushTo, startTestServer, tempDir, type TestServer } from '../support/harness.js';
import { recordFigures } from '../support/figures.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';

const REPOSITORIES = ['history/left', 'history/right'];
const WRITERS_PER_REPOSITORY = 3;
const PUSHES_PER_WRITER = 15;
const READERS = 4;

interface PushRecord {
  readonly repository: string;
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly commit: string;
}

interface PullRecord {
  readonly repository: string;
  readonly client: string;
  readonly start: number;
  readonly end: number;
  /** The ids of the `w.<id>` keys the pull showed, and the value of `last`. */
  readonly ids: ReadonlySet<string>;
  readonly last: string | undefined;
}

let dir: ReturnType<typeof tempDir>;
let inProcess: TestServer;
let child: ServerProcess;

beforeAll(async () => {
  dir = tempDir('cfghub-history-');
  for (const repository of REPOSITORIES) {
    cliOk(
      dir.path,
      'repo',
      'create',
      repository,
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
  }
  inProcess = await startTestServer(dir.path);
  child = await startServerProcess(dir.path);
});

afterAll(async () => {
  await inProcess.close();
  await child.stop();
  dir.remove();
});

async function pull(url: string, repository: string, client: string): Promise<PullRecord> {
  const start = performance.now();
  const response = await fetch(`${url}/rest/pull/${repository}`, { headers: { Context: 'Production;Web' } });
  const body = (await response.json()) as { properties: Record<string, { val: string }> };
  const end = performance.now();
  expect(response.status).toBe(200);
  const ids = new Set(
    Object.keys(body.properties)
      .filter((k) => k.startsWith('w.'))
      .map((k) => k.slice(2)),
  );
  return { repository, client, start, end, ids, last: body.properties.last?.val };
}

describe('pushes and pulls racing on two server processes', () => {
  it('form a linearizable history per repository, consistent with real time', async () => {
    const urls = [inProcess.url, child.url];
    const pushes: PushRecord[] = [];
    const pulls: PullRecord[] = [];
    let writing = true;

    const writer = async (repository: string, w: number) => {
      for (let n = 0; n < PUSHES_PER_WRITER; n++) {
        const id = `${w}-${n}`;
        const start = performance.now();
        const answer = await pushTo(urls[(w + n) % 2], `/rest/push/${repository}`, {
          changeComment: `push ${id}`,
          enableKeyCreation: true,
          data: [
            { key: `w.${id}`, values: [{ context: '*;*', value: id }] },
            { key: 'last', values: [{ context: '*;*', value: id }] },
          ],
        });
        const end = performance.now();
        expect(answer.status).toBe(200);
        pushes.push({ repository, id, start, end, commit: answer.etag!.replace(/"/g, '') });
        // Read your own write, from the other server.
        pulls.push(await pull(urls[(w + n + 1) % 2], repository, `writer-${w}`));
      }
    };
    const reader = async (r: number) => {
      for (let n = 0; writing; n++)
        pulls.push(await pull(urls[(r + n) % 2], REPOSITORIES[n % REPOSITORIES.length], `reader-${r}`));
    };

    const readers = Array.from({ length: READERS }, (_, r) => reader(r));
    await Promise.all(
      REPOSITORIES.flatMap((repository, r) =>
        Array.from({ length: WRITERS_PER_REPOSITORY }, (_, w) => writer(repository, r * 10 + w)),
      ),
    );
    writing = false;
    await Promise.all(readers);

    for (const repository of REPOSITORIES) {
      const order = git(gitdirOf(dir.path, repository), 'rev-list', '--reverse', '--first-parent', 'refs/heads/main')
        .trim()
        .split('\n');
      const index = new Map(order.map((commit, i) => [commit, i]));
      const mine = pushes.filter((p) => p.repository === repository);
      expect(mine).toHaveLength(WRITERS_PER_REPOSITORY * PUSHES_PER_WRITER);
      const position = new Map(mine.map((p) => [p.id, index.get(p.commit)!]));
      for (const p of mine) expect(position.get(p.id), `commit of push ${p.id} on the branch`).toBeTypeOf('number');
      const byPosition = [...mine].sort((a, b) => position.get(a.id)! - position.get(b.id)!);

      // Pushes: real-time order is kept.
      for (const a of mine) {
        for (const b of mine)
          if (a.end < b.start) expect(position.get(a.id)!, `${a.id} before ${b.id}`).toBeLessThan(position.get(b.id)!);
      }
      // Pulls: a prefix of the pushes, between what had ended before and what had started by the end.
      for (const p of pulls.filter((q) => q.repository === repository)) {
        const prefix = byPosition.filter((push) => p.ids.has(push.id));
        const length = prefix.length;
        expect(new Set(byPosition.slice(0, length).map((push) => push.id)), `${p.client}'s pull is a prefix`).toEqual(
          p.ids,
        );
        expect(p.last).toBe(length ? byPosition[length - 1].id : undefined);
        for (const push of byPosition.slice(length))
          expect(push.end > p.start, `${p.client} missed ${push.id}, acknowledged before the pull`).toBe(true);
        for (const push of byPosition.slice(0, length))
          expect(push.start < p.end, `${p.client} saw ${push.id} before it was sent`).toBe(true);
      }
    }
    recordFigures('history', { pushes: pushes.length, pulls: pulls.length });
  });
});
