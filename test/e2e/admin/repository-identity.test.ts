/**
 * Repository names are unique without regard to case: a
 * backup restored as `case/Dup.git` beside `case/dup.git` makes the server and the CLI refuse both
 * spellings (409 naming both folders relative to the repositories folder, never a disk path) until
 * one is removed, and a token is bound to one repository identity: a `case/Dup` token never acts
 * on `case/dup`, nor is it listed with it. The real server, the real `cfghub` command, real git.
 */
import { execFileSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOk, cliWithInput, pushTo, serverForFile } from '../../support/harness.js';
import { read } from '../../support/reads.js';
import { until } from '../../support/poll.js';

const fixture = serverForFile();
let upperToken: string;
let lowerToken: string;
const backup = () => join(fixture.repos, '..', `${fixture.repos.split('/').pop()}-backup-Dup.git`);

const pull = (repo: string, headers: Record<string, string> = {}) =>
  read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'Prod', ...headers });

beforeAll(async () => {
  // case/Dup first, with a token; then it is moved out (a backup), and case/dup is created.
  cliOk(
    fixture.repos,
    'repo',
    'create',
    'case/Dup',
    '--context',
    'Environment',
    '--token-free-pull',
    '--token-free-push',
  );
  upperToken = cliOk(fixture.repos, 'token', 'create', 'case/Dup', '--name', 'upper').trim();
  renameSync(join(fixture.repos, 'case', 'Dup.git'), backup());
  cliOk(
    fixture.repos,
    'repo',
    'create',
    'case/dup',
    '--context',
    'Environment',
    '--token-free-pull',
    '--token-free-push',
  );
  lowerToken = cliOk(fixture.repos, 'token', 'create', 'case/dup', '--name', 'lower').trim();
  const pushed = await pushTo(
    fixture.server.url,
    '/rest/push',
    { enableKeyCreation: true, data: [{ key: 'k', values: [{ context: '*', value: 'lower' }] }] },
    { 'Client-Token': lowerToken },
  );
  expect(pushed.status).toBe(200);
});

afterAll(() => {
  rmSync(backup(), { recursive: true, force: true });
});

describe('repository names are unique without regard to case', () => {
  it('a token of a repository whose folder is gone does not fall over to another spelling', async () => {
    expect((await pull('case/dup')).status).toBe(200);
    const answer = await pushTo(
      fixture.server.url,
      '/rest/push',
      { data: [{ key: 'k', values: [{ context: '*', value: 'forged' }] }] },
      { 'Client-Token': upperToken },
    );
    expect(answer.status).toBe(404);
    expect((await pull('case/dup')).json.properties.k).toEqual({ val: 'lower' });
    const labels = JSON.parse((await cliWithInput(fixture.repos, '', 'token', 'list', 'case/dup')).stdout).map(
      (t: { label: string }) => t.label,
    );
    expect(labels).toEqual(['lower']);
  });

  it('with a second spelling restored beside it, both are refused, by the server (within a second) and the CLI', async () => {
    execFileSync('git', ['clone', '--quiet', '--mirror', backup(), join(fixture.repos, 'case', 'Dup.git')]);
    await until(async () => (await pull('case/dup')).status === 409, 'the pull to answer 409', 5_000); // the server trusts a folder listing for a second
    for (const answer of [await pull('case/dup'), await pull('case/Dup'), await pull('CASE/DUP')]) {
      expect(answer.status).toBe(409);
      expect(answer.json.error).toBe('repository_name_conflict');
      expect(answer.json.message).toContain('case/Dup.git');
      expect(answer.json.message).toContain('case/dup.git');
      expect(answer.text).not.toContain(fixture.repos);
    }
    for (const token of [upperToken, lowerToken]) {
      const answer = await pushTo(
        fixture.server.url,
        '/rest/push',
        { data: [{ key: 'k', values: [{ context: '*', value: 'x' }] }] },
        { 'Client-Token': token },
      );
      expect(answer.status).toBe(409);
    }
    // The listing leaves both out (as any repository it cannot serve) and logs why; repo list names them.
    const listing = await read(fixture.server.url, '/rest/info/all');
    expect(listing.json.filter((r: { account: string }) => r.account === 'case')).toEqual([]);
    expect(fixture.server.logText()).toMatch(/case\/Dup\.git, case\/dup\.git/);
    expect(fixture.server.logText()).not.toContain(fixture.repos);
    // Asynchronous commands while the server in this process serves: a blocking wait would race its keep-alive timers.
    const listed = await cliWithInput(fixture.repos, '', 'repo', 'list');
    expect(listed.stderr).toMatch(/case\/dup/);
    expect(listed.stderr).not.toContain(fixture.repos);

    for (const args of [
      ['repo', 'create', 'case/DUP', '--context', 'E'],
      ['token', 'create', 'case/dup'],
      ['token', 'list', 'case/Dup'],
    ]) {
      const result = await cliWithInput(fixture.repos, '', ...args);
      expect(result.code, args.join(' ')).toBe(1);
      expect(result.stderr).toMatch(/case\/Dup\.git, case\/dup\.git/);
      expect(result.stderr).not.toContain(fixture.repos);
    }
  });

  it('once the second spelling is removed, the first is served again, and the other token still does not act on it', async () => {
    rmSync(join(fixture.repos, 'case', 'Dup.git'), { recursive: true, force: true });
    await until(async () => (await pull('case/dup')).status === 200, 'the pull to answer 200', 5_000);
    const answer = await pushTo(
      fixture.server.url,
      '/rest/push',
      { data: [{ key: 'k', values: [{ context: '*', value: 'forged' }] }] },
      { 'Client-Token': upperToken },
    );
    expect(answer.status).toBe(404);
    expect((await pull('case/dup')).json.properties.k).toEqual({ val: 'lower' });
  });
});
