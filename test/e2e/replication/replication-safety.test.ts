/**
 * What a replica refuses, as an operator would meet it: `cfghub serve` processes with the real
 * command line, a primary restarted on the same address with another folder, with its records but
 * none of its repositories, with its branch moved backwards, and an old primary after a promotion;
 * a replica killed in the middle of a fetch. The replica keeps serving what it has and says why
 * (`/readyz`, its log, a metric) until it is started with `--accept-new-primary`.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, getJson, git, gitdirOf, headOf, pushTo, tempDir } from '../../support/harness.js';
import { eventually } from '../../support/replicas.js';
import { until } from '../../support/poll.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';
import { reservedPorts } from '../../support/ports.js';

const APP = 'acme/app';
const TWO = 'acme/two';
const dirs = {
  primary: tempDir(),
  replica: tempDir(),
  other: tempDir(),
  emptied: tempDir(),
  second: tempDir(),
  late: tempDir(),
};
const running = new Set<ServerProcess>();
let token: string;
let port: number;

async function start(
  repos: string,
  options: { port?: number; follow?: string; accept?: boolean } = {},
): Promise<ServerProcess> {
  const args = [
    ...(options.port ? ['--port', String(options.port)] : []),
    ...(options.follow ? ['--replica-of', options.follow] : []),
    ...(options.accept ? ['--accept-new-primary'] : []),
  ];
  const server = await startServerProcess(repos, options.follow ? { CFGHUB_REPLICATION_TOKEN: token } : {}, [], args);
  running.add(server);
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  await server.stop();
  running.delete(server);
}

const push = (url: string, fullName: string, value: string) =>
  pushTo(url, `/rest/push/${fullName}`, {
    enableKeyCreation: true,
    data: [{ key: 'feature.flag', values: [{ context: '*', value }] }],
  });
const read = (url: string, fullName = APP) => getJson(url, `/rest/pull/${fullName}`, { Context: 'Prod' });
const serves = (url: string, value: string, fullName = APP) =>
  eventually(
    `${url} serving ${value}`,
    async () => {
      const answer = await read(url, fullName);
      return answer.status === 200 && answer.text.includes(value) ? answer : undefined;
    },
    20_000,
  );
const readiness = async (url: string) => (await getJson(url, '/readyz')).json;
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

let primaryUrl: string;
let primary: ServerProcess;
let replica: ServerProcess;

beforeAll(async () => {
  for (const name of [APP, TWO])
    cliOk(dirs.primary.path, 'repo', 'create', name, '--context', 'Env', '--token-free-push', '--token-free-pull');
  token = cliOk(dirs.primary.path, 'token', 'create', '--replication').trim();
  [port] = await reservedPorts(1); // the primary restarts on the address its replicas follow
  primaryUrl = `http://127.0.0.1:${port}`;
  primary = await start(dirs.primary.path, { port });
  replica = await start(dirs.replica.path, { follow: primaryUrl });
  expect((await push(primaryUrl, APP, 'one')).status).toBe(200);
  await serves(replica.url, 'one');
});

afterAll(async () => {
  for (const server of running) await server.kill();
  for (const dir of Object.values(dirs)) dir.remove();
});

/** The replica refuses, says why in /readyz (still 200: it serves), its log and a metric, and still serves `value`. */
async function refuses(why: RegExp, logged: RegExp, value: string): Promise<void> {
  const ready = await eventually(
    'the refusal in /readyz',
    async () => {
      const answer = await readiness(replica.url);
      return answer.warnings?.some((w: string) => why.test(w)) ? answer : undefined;
    },
    20_000,
  );
  expect(ready.status).toBe('ready');
  expect(ready.replica.refused ?? ready.replica.rewindsRefused.join(',')).toBeTruthy();
  await until(
    () =>
      replica
        .output()
        .split('\n')
        .some((line) => logged.test(line)),
    'the refusal in the log',
  );
  expect(
    (await metric(replica.url, 'cfghub_replication_refused')) +
      (await metric(replica.url, 'cfghub_replication_rewinds_refused')),
  ).toBeGreaterThan(0);
  expect((await read(replica.url)).text).toContain(value);
  for (const name of [APP, TWO]) git(gitdirOf(dirs.replica.path, name), 'fsck', '--strict');
}

describe('a replica whose primary comes back wrong', () => {
  it('refuses a primary restarted on another folder, and follows again when the right one returns', async () => {
    cliOk(dirs.other.path, 'repo', 'create', 'other/thing', '--context', 'Env', '--token-free-pull');
    // Another folder set up with the same tokens (a copy of the token file): only its identity tells it apart.
    fs.mkdirSync(join(dirs.other.path, '.cfghub'), { recursive: true });
    fs.copyFileSync(join(dirs.primary.path, '.cfghub', 'tokens.json'), join(dirs.other.path, '.cfghub', 'tokens.json'));
    await stop(primary);
    primary = await start(dirs.other.path, { port });
    await refuses(/another repositories folder/, /"event":"replication-refused".*another repositories folder/, 'one');
    expect(fs.existsSync(gitdirOf(dirs.replica.path, 'other/thing'))).toBe(false);
    expect(fs.existsSync(gitdirOf(dirs.replica.path, APP))).toBe(true);

    await stop(primary);
    primary = await start(dirs.primary.path, { port });
    expect((await push(primaryUrl, APP, 'one-again')).status).toBe(200);
    await serves(replica.url, 'one-again');
    await eventually('the refusal cleared', async () =>
      (await readiness(replica.url)).warnings === undefined ? true : undefined,
    );
    expect(await metric(replica.url, 'cfghub_replication_refused')).toBe(0);
  });

  it('refuses a primary restarted on a folder with its records but none of its repositories: no mirror removed', async () => {
    fs.cpSync(join(dirs.primary.path, '.cfghub'), join(dirs.emptied.path, '.cfghub'), { recursive: true });
    await stop(primary);
    primary = await start(dirs.emptied.path, { port });
    await refuses(
      /remove 2 of this replica's 2 repositories/,
      /"event":"replication-refused".*remove 2 of/,
      'one-again',
    );
    expect(fs.existsSync(join(dirs.replica.path, '.cfghub', 'deleted'))).toBe(false);
    await stop(primary);
    primary = await start(dirs.primary.path, { port });
    await eventually('the refusal cleared', async () =>
      (await readiness(replica.url)).warnings === undefined ? true : undefined,
    );
  });

  it('keeps its head when the primary rewinds a branch, and follows with --accept-new-primary, the old head kept', async () => {
    const before = headOf(dirs.primary.path, APP);
    expect((await push(primaryUrl, APP, 'two')).status).toBe(200);
    const acknowledged = headOf(dirs.primary.path, APP);
    await serves(replica.url, 'two');
    await stop(primary);
    git(gitdirOf(dirs.primary.path, APP), 'update-ref', 'refs/heads/main', before); // a primary restored from an older copy
    primary = await start(dirs.primary.path, { port });
    await refuses(
      /moved the branch of acme\/app backwards/,
      /"event":"replication-rewind-refused","repository":"acme\/app"/,
      'two',
    );
    expect(headOf(dirs.replica.path, APP)).toBe(acknowledged);
    expect(await metric(replica.url, 'cfghub_replication_rewinds_refused')).toBe(1);

    await stop(replica);
    replica = await start(dirs.replica.path, { follow: primaryUrl, accept: true });
    await eventually(
      'the replica at the rewound head',
      () => (headOf(dirs.replica.path, APP) === before ? true : undefined),
      20_000,
    );
    const kept = git(
      gitdirOf(dirs.replica.path, APP),
      'for-each-ref',
      '--format=%(refname) %(objectname)',
      'refs/cfghub/rewound/',
    )
      .trim()
      .split('\n');
    expect(kept).toEqual([expect.stringMatching(new RegExp(`^refs/cfghub/rewound/[0-9TZ]+/main ${acknowledged}$`))]);
    git(gitdirOf(dirs.replica.path, APP), 'fsck', '--strict');
    await eventually('no warning', async () =>
      (await readiness(replica.url)).warnings === undefined ? true : undefined,
    );
  });
});

describe('generations', () => {
  it('a replica of a promoted primary refuses the old one, which says loudly that it is behind', async () => {
    // The replica is promoted (generation 2); a second replica follows it, then is pointed back at the old primary.
    await stop(replica);
    expect(cliOk(dirs.replica.path, 'promote').trim()).toBe('2');
    const promoted = await start(dirs.replica.path);
    let second = await start(dirs.second.path, { follow: promoted.url });
    await serves(second.url, 'one');
    await stop(second);
    second = await start(dirs.second.path, { follow: primaryUrl });
    const refusal = await eventually('the refusal', async () => (await readiness(second.url)).warnings?.[0], 20_000);
    expect(refusal).toMatch(/another repositories folder/);

    const ready = await eventually('the old primary unready', async () => {
      const answer = await getJson(primaryUrl, '/readyz');
      return answer.status === 503 ? answer.json : undefined;
    });
    expect(ready.problems).toEqual([
      expect.stringMatching(/a replica follows primary generation 2, above this server's 1/),
    ]);
    await until(
      () => /"event":"replication-generation-behind"/.test(primary.output()),
      'the generation-behind log line',
    );
    expect(await metric(primaryUrl, 'cfghub_replication_newer_generation')).toBe(2);
    await stop(second);
    await stop(promoted);
  });
});

describe('a replica killed in the middle of a fetch', () => {
  it('starts again, clears the unfinished mirror and catches up, every mirror whole', async () => {
    // A repository big enough that its first fetch takes a while.
    cliOk(
      dirs.primary.path,
      'repo',
      'create',
      'acme/big',
      '--context',
      'Env',
      '--token-free-push',
      '--token-free-pull',
    );
    const data = Array.from({ length: 3_000 }, (_, i) => ({
      key: `key.${i}`,
      values: [{ context: '*', value: `value ${i} ${'x'.repeat(200)}` }],
    }));
    expect((await pushTo(primaryUrl, '/rest/push/acme/big', { enableKeyCreation: true, data })).status).toBe(200);
    const work = join(dirs.late.path, '.cfghub', 'replica-work');
    let late = await start(dirs.late.path, { follow: primaryUrl });
    await until(() => fs.existsSync(work) && fs.readdirSync(work).length > 0, 'a mirror being fetched', 20_000);
    await late.kill();
    running.delete(late);
    late = await start(dirs.late.path, { follow: primaryUrl });
    const big = await serves(late.url, 'value 2999', 'acme/big');
    expect(big.headers.get('commit')).toBe(headOf(dirs.primary.path, 'acme/big'));
    await until(() => !fs.existsSync(work) || fs.readdirSync(work).length === 0, 'the unfinished mirror cleared');
    for (const name of [APP, TWO, 'acme/big']) {
      await eventually(
        `${name} in step`,
        () => (headOf(dirs.late.path, name) === headOf(dirs.primary.path, name) ? true : undefined),
        20_000,
      );
      git(gitdirOf(dirs.late.path, name), 'fsck', '--strict');
    }
  });
});
