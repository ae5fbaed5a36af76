/**
 * SIGKILL at random moments ("Guarantees"): the server runs as a child
 * process while clients push concurrently into several repositories; it is killed outright and
 * restarted, round after round. After every restart, every push answered 200 is present with
 * exactly its content, every push left without an answer is either wholly present or wholly
 * absent, `git fsck --strict` is clean, and the restarted server serves.
 *
 * Each client pushes a numbered sequence; push k of client c creates the keys `c.k.x` and `c.k.y`
 * and the file `c/k.txt`, sets `c.last` to its id, and deletes `c.(k-1).y` and `c/(k-1).txt`, so
 * every push is recognisable as a unit and the expected state follows from which pushes landed.
 *
 * `npm test` runs 10 rounds; `npm run test:crash` runs CFGHUB_CRASH_ROUNDS (100).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, pushTo, tempDir } from '../support/harness.js';
import { startServerProcess, type ServerProcess } from '../support/serverProcess.js';
import { recordFigures } from '../support/figures.js';

const ROUNDS = Number(process.env.CFGHUB_CRASH_ROUNDS ?? 10);
const REPOSITORIES = ['crash/alpha', 'crash/beta', 'crash/gamma'];
const CLIENTS_PER_REPOSITORY = 2;
/** Stale ref locks left by a killed server are removed after 1 s here (30 s by default). */
const SERVER_ENV = { CFGHUB_STALE_LOCK_SECONDS: '1' };

type Outcome = 'acknowledged' | 'refused' | 'unanswered';

interface Client {
  readonly repository: string;
  readonly name: string;
  /** What became of each push, by its number. */
  readonly outcomes: Outcome[];
}

const pushId = (client: Client, k: number) => `${client.name}-${k}`;

function pushBody(client: Client, k: number): unknown {
  const id = pushId(client, k);
  const c = client.name;
  const data: unknown[] = [
    {
      key: `${c}.${k}.x`,
      values: [
        { context: '*;*', value: id },
        { context: 'Production;*', value: `${id}-prod` },
      ],
    },
    { key: `${c}.${k}.y`, readme: `pushed by ${id}`, values: [{ context: '*;*', value: id }] },
    { key: `${c}.last`, values: [{ context: '*;*', value: id }] },
    { file: `${c}/${k}.txt`, context: '*;*', content: `file of ${id}\n` },
  ];
  if (k > 0)
    data.push({ key: `${c}.${k - 1}.y`, opp: 'delete' }, { file: `${c}/${k - 1}.txt`, context: '*;*', opp: 'delete' });
  return { changeComment: `push ${id}`, enableKeyCreation: true, data };
}

/** Pushes the client's next pushes until the server stops answering. */
async function pushUntilCut(client: Client, url: string): Promise<void> {
  for (;;) {
    const k = client.outcomes.length;
    try {
      const answer = await pushTo(url, `/rest/push/${client.repository}`, pushBody(client, k));
      client.outcomes.push(answer.status === 200 ? 'acknowledged' : 'refused');
      if (answer.status !== 200) throw new Error(`push ${pushId(client, k)} answered ${answer.status}: ${answer.body}`);
    } catch (error) {
      if (client.outcomes.length === k) {
        client.outcomes.push('unanswered');
        return;
      }
      throw error;
    }
  }
}

interface Exported {
  readonly keys: Map<string, string[]>;
  readonly files: Map<string, string>;
}

async function exportOf(url: string, repository: string): Promise<Exported> {
  const response = await fetch(`${url}/rest/export/${repository}`);
  expect(response.status).toBe(200);
  const { data } = (await response.json()) as { data: any[] };
  const keys = new Map<string, string[]>();
  const files = new Map<string, string>();
  for (const element of data) {
    if ('key' in element) keys.set(element.key, element.values.map((v: any) => `${v.context}=${v.value}`).sort());
    else files.set(`${element.file}@${element.context}`, element.content);
  }
  return { keys, files };
}

/**
 * Checks one repository against what its clients were told; returns how many pushes cut off
 * before their answer turned out to have landed (the others must be wholly absent).
 */
async function checkRepository(url: string, repository: string, clients: readonly Client[]): Promise<number> {
  const gitdir = gitdirOf(dir.path, repository);
  execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
  const state = await exportOf(url, repository);
  const messages = new Set(
    git(gitdir, 'log', '--format=%s', 'refs/heads/main')
      .split('\n')
      .filter((s) => s.startsWith('push ')),
  );
  const expectedKeys = new Map<string, string[]>();
  const expectedFiles = new Map<string, string>();
  let landed = 0;
  let unansweredLanded = 0;
  for (const client of clients) {
    const c = client.name;
    const present = client.outcomes.map((_, k) => state.keys.has(`${c}.${k}.x`));
    let last: string | undefined;
    for (const [k, outcome] of client.outcomes.entries()) {
      const id = pushId(client, k);
      if (outcome === 'acknowledged') expect(present[k], `acknowledged push ${id} in ${repository}`).toBe(true);
      if (outcome === 'refused') expect(present[k], `refused push ${id} in ${repository}`).toBe(false);
      expect(messages.has(`push ${id}`), `the commit of push ${id}`).toBe(present[k]);
      if (!present[k]) continue;
      landed++;
      if (outcome === 'unanswered') unansweredLanded++;
      last = id;
      expectedKeys.set(`${c}.${k}.x`, [`*;*=${id}`, `Production;*=${id}-prod`].sort());
      if (!present[k + 1]) {
        expectedKeys.set(`${c}.${k}.y`, [`*;*=${id}`]);
        expectedFiles.set(`${c}/${k}.txt@*;*`, `file of ${id}\n`);
      }
    }
    if (last) expectedKeys.set(`${c}.last`, [`*;*=${last}`]);
  }
  // Exactly the keys and files of the pushes that landed, with their contents: nothing partial.
  expect(new Map([...state.keys].sort()), repository).toEqual(new Map([...expectedKeys].sort()));
  expect(new Map([...state.files].sort()), repository).toEqual(new Map([...expectedFiles].sort()));
  expect(messages.size).toBe(landed);
  return unansweredLanded;
}

let dir: ReturnType<typeof tempDir>;

beforeAll(() => {
  dir = tempDir('cfghub-crash-');
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
});

afterAll(() => dir.remove());

describe(`${ROUNDS} rounds of concurrent pushes cut by SIGKILL`, () => {
  it(
    'keep every acknowledged push exactly, show no partial push, and leave fsck-clean repositories that serve',
    async () => {
      const clients: Client[] = REPOSITORIES.flatMap((repository, r) =>
        Array.from({ length: CLIENTS_PER_REPOSITORY }, (_, i) => ({ repository, name: `c${r}${i}`, outcomes: [] })),
      );
      let server: ServerProcess = await startServerProcess(dir.path, SERVER_ENV);
      let unanswered = 0;
      let unansweredLanded = 0;
      let staleLocksRemoved = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const pushing = Promise.all(clients.map((client) => pushUntilCut(client, server.url)));
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 650));
        expect(await server.kill()).toBe('SIGKILL');
        await pushing;
        staleLocksRemoved += server.output().split('"event":"stale-lock-removed"').length - 1;
        server = await startServerProcess(dir.path, SERVER_ENV);
        unansweredLanded = 0;
        for (const repository of REPOSITORIES) {
          unansweredLanded += await checkRepository(
            server.url,
            repository,
            clients.filter((c) => c.repository === repository),
          );
        }
        unanswered += clients.filter((c) => c.outcomes.at(-1) === 'unanswered').length;
      }
      await server.stop();
      staleLocksRemoved += server.output().split('"event":"stale-lock-removed"').length - 1;
      const pushes = clients.reduce((n, c) => n + c.outcomes.length, 0);
      const acknowledged = clients.reduce((n, c) => n + c.outcomes.filter((o) => o === 'acknowledged').length, 0);
      expect(acknowledged).toBeGreaterThan(ROUNDS); // the rounds did push
      recordFigures('crash', {
        crashes: ROUNDS,
        pushes,
        acknowledged,
        unanswered,
        unansweredLanded,
        staleLocksRemoved,
      });
    },
    ROUNDS * 15_000,
  );
});
