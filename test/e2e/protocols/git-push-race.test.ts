/**
 * `git push` beside a steady REST writer, both about every 300 ms for 30 s, through the real
 * server: the git client works as a user does (commit, `git pull --rebase`, `git push`; a refused
 * push is one failed attempt, and the next attempt carries its commit again), and each kind lands
 * at least a third of its attempts. Counted, not timed: the assertion is on the tallies.
 * Every commit git landed is in main's history with its id, and the repository passes fsck.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitAsync } from '../../support/gitCli.js';
import { cliOk, cliWithInput, git, gitdirOf, pushTo, serverForFile } from '../../support/harness.js';
import { keyPath } from '../../support/reads.js';

const REPO = 'acme/raced';
const RACE_MS = 30_000;
const INTERVAL_MS = 300;
const fixture = serverForFile();
const tokens = { rest: '', git: '' };

interface Tally {
  attempts: number;
  landed: number;
}

async function gitIn(cwd: string, ...args: string[]) {
  return gitAsync(['-c', 'user.name=Ada', '-c', 'user.email=ada@example.org', ...args], { cwd });
}

async function token(name: string): Promise<string> {
  const made = await cliWithInput(fixture.repos, '', 'token', 'create', REPO, '--name', name);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trim();
}

/** Runs `attempt` about every INTERVAL_MS until `deadline`, counting attempts and the ones that landed. */
async function paced(deadline: number, attempt: (n: number) => Promise<boolean>): Promise<Tally> {
  const tally: Tally = { attempts: 0, landed: 0 };
  while (Date.now() < deadline) {
    const started = Date.now();
    tally.attempts++;
    if (await attempt(tally.attempts)) tally.landed++;
    const left = INTERVAL_MS - (Date.now() - started);
    if (left > 0) await delay(left);
  }
  return tally;
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application');
  tokens.rest = await token('rest');
  tokens.git = await token('git');
});

describe('git push racing REST pushes', () => {
  it('lands at least a third of the attempts of each kind in 30 s, at about one attempt per 300 ms each', async () => {
    const first = await pushTo(
      fixture.server.url,
      '/rest/push',
      { enableKeyCreation: true, data: [{ key: 'rest.counter', values: [{ context: '*;*', value: '0' }] }] },
      { 'Client-Token': tokens.rest },
    );
    expect(first.status, first.body).toBe(200);
    const url = new URL(`${fixture.server.url}/git/${REPO}.git`);
    url.username = 'ada';
    url.password = tokens.git;
    const clone = join(fixture.repos, 'raced-clone');
    expect((await gitIn(fixture.repos, 'clone', '--quiet', url.href, clone)).code).toBe(0);
    const counterPath = join(clone, keyPath('git.counter'));
    mkdirSync(dirname(counterPath), { recursive: true });
    const landedIds: string[] = [];

    const deadline = Date.now() + RACE_MS;
    const [rest, pushed] = await Promise.all([
      paced(deadline, async (n) => {
        const answer = await pushTo(
          fixture.server.url,
          '/rest/push',
          { data: [{ key: 'rest.counter', values: [{ context: '*;*', value: String(n) }] }] },
          { 'Client-Token': tokens.rest },
        );
        return answer.status === 200;
      }),
      paced(deadline, async (n) => {
        writeFileSync(
          counterPath,
          `key: git.counter\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*;*"\n    value: "${n}"\n    active: true\n`,
        );
        if ((await gitIn(clone, 'commit', '--quiet', '-am', `git.counter ${n}`)).code !== 0) {
          await gitIn(clone, 'add', '-A');
          await gitIn(clone, 'commit', '--quiet', '-m', `git.counter ${n}`);
        }
        if ((await gitIn(clone, 'pull', '--quiet', '--rebase')).code !== 0) return false;
        const result = await gitIn(clone, 'push', '--quiet', 'origin', 'main');
        if (result.code !== 0) return false;
        landedIds.push((await gitIn(clone, 'rev-parse', 'HEAD')).stdout.trim());
        return true;
      }),
    ]);

    const tallies = `REST ${rest.landed}/${rest.attempts}, git ${pushed.landed}/${pushed.attempts}`;
    expect(rest.attempts, tallies).toBeGreaterThanOrEqual(10);
    expect(pushed.attempts, tallies).toBeGreaterThanOrEqual(10);
    expect(rest.landed * 3, tallies).toBeGreaterThanOrEqual(rest.attempts);
    expect(pushed.landed * 3, tallies).toBeGreaterThanOrEqual(pushed.attempts);

    const gitdir = gitdirOf(fixture.repos, REPO);
    for (const id of landedIds) git(gitdir, 'merge-base', '--is-ancestor', id, 'main');
    await fixture.server.settle(REPO);
    git(gitdir, 'fsck', '--strict', '--no-dangling');
  }, 120_000);
});
