/**
 * The watch of pull and rawFile, against the real server: a request with
 * If-None-Match and Wait is held until the answer for its context changes, a push that changes
 * nothing for the context wakes nobody, a plain-git commit wakes watchers, the wait ends with 304,
 * shutdown ends watches at once, and the ETag depends on the content alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitEnv } from '../../support/gitCli.js';
import { cliOk, gitdirOf, pushTo, serverForFile, startTestServer } from '../../support/harness.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/watched';
const fixture = serverForFile();

interface Answer {
  status: number;
  etag: string | null;
  text: string;
}

async function pull(
  context: string,
  headers: Record<string, string> = {},
  query = '',
  target = fixture.server,
): Promise<Answer> {
  const response = await fetch(`${target.url}/rest/pull/${REPO}${query}`, {
    headers: { Context: context, ...headers },
  });
  return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
}

/** A watch that records when it ends, so a test can tell it is still held. */
function watch(
  context: string,
  etag: string,
  wait = 60,
  path = `/rest/pull/${REPO}`,
  headers: Record<string, string> = {},
) {
  const state = { done: false };
  const answer = fetch(`${fixture.server.url}${path}`, {
    headers: { Context: context, 'If-None-Match': etag, Wait: String(wait), ...headers },
  }).then(async (response) => {
    const result = { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
    state.done = true;
    return result;
  });
  return { state, answer };
}

const setValue = (context: string, value: string, comment = 'change') =>
  pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: comment,
    enableKeyCreation: true,
    data: [{ key: 'color', values: [{ context, value }] }],
  });

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  expect((await setValue('*;*', 'grey', 'first')).status).toBe(200);
  expect(
    (
      await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
        changeComment: 'a file',
        data: [{ file: 'app.conf', context: '*;*', content: 'color=${ color }\n' }],
      })
    ).status,
  ).toBe(200);
});

describe('the ETag of a pull', () => {
  it('depends on the content only: a commit that changes nothing for the context keeps it, one that does changes it', async () => {
    const before = await pull('Prod;web');
    expect(await setValue('Dev;*', 'blue')).toMatchObject({ status: 200 });
    const after = await pull('Prod;web');
    expect(after.etag).toBe(before.etag);
    expect(JSON.parse(after.text).generatedOn).toBeDefined();
    expect((await pull('Prod;web', { 'If-None-Match': before.etag! })).status).toBe(304);
    expect((await pull('Dev;web')).etag).not.toBe(before.etag);
  });

  it('is the same from another server process', async () => {
    const first = await pull('Prod;web');
    const other = await startTestServer(fixture.repos);
    try {
      expect((await pull('Prod;web', {}, '', other)).etag).toBe(first.etag);
    } finally {
      await other.close();
    }
  });
});

describe('a watch', () => {
  it('wakes on a change of its context and not on a change of another', async () => {
    const prod = await pull('Prod;web');
    const dev = await pull('Dev;web');
    const prodWatch = watch('Prod;web', prod.etag!);
    const devWatch = watch('Dev;web', dev.etag!);
    expect((await setValue('Dev;*', 'green')).status).toBe(200);
    const devAnswer = await devWatch.answer;
    expect(devAnswer.status).toBe(200);
    expect(JSON.parse(devAnswer.text).properties.color.val).toBe('green');
    expect(devAnswer.etag).not.toBe(dev.etag);
    // The Prod watcher's group was looked at before the Dev one (groups go in order of arrival): still held.
    expect(prodWatch.state.done).toBe(false);
    expect((await setValue('Prod;*', 'red')).status).toBe(200);
    const prodAnswer = await prodWatch.answer;
    expect(prodAnswer.status).toBe(200);
    expect(JSON.parse(prodAnswer.text).properties.color.val).toBe('red');
  });

  it('answers at once when the client does not hold the current answer', async () => {
    const answer = await watch('Prod;web', '"an-old-etag"').answer;
    expect(answer.status).toBe(200);
  });

  it('answers 304 with the same ETag when the wait ends without a change', async () => {
    const current = await pull('Prod;web');
    const started = Date.now();
    const answer = await watch('Prod;web', current.etag!, 1).answer;
    expect(answer.status).toBe(304);
    expect(answer.etag).toBe(current.etag);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('takes the wait as a query parameter too, and refuses a wait out of range', async () => {
    const current = await pull('Prod;web');
    const held = fetch(`${fixture.server.url}/rest/pull/${REPO}?wait=30`, {
      headers: { Context: 'Prod;web', 'If-None-Match': current.etag! },
    });
    expect((await setValue('Prod;web', 'orange')).status).toBe(200);
    const answer = await held;
    expect(answer.status).toBe(200);
    expect((await answer.json()).properties.color.val).toBe('orange');
    for (const wait of ['0', '301', 'soon']) {
      const refused = await pull('Prod;web', { 'If-None-Match': current.etag!, Wait: wait });
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text).message).toContain('Wait must be a whole number of seconds from 1 to 300');
    }
  });

  it('is not held for a read of the past (Tag)', async () => {
    cliOk(fixture.repos, 'tag', 'create', REPO, 'v1');
    const tagged = await pull('Prod;web', { Tag: 'v1' });
    const started = Date.now();
    const answer = await pull('Prod;web', { Tag: 'v1', 'If-None-Match': tagged.etag!, Wait: '30' });
    expect(answer.status).toBe(304);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('wakes on a commit made with plain git', async () => {
    const current = await pull('Prod;web');
    const held = watch('Prod;web', current.etag!);
    const clone = join(fixture.repos, 'clone');
    const run = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', ...args], {
        cwd: fixture.repos,
        env: gitEnv(),
        stdio: 'pipe',
      });
    run('clone', '--quiet', gitdirOf(fixture.repos, REPO), clone);
    const keyFile = execFileSync('git', ['ls-files', 'keys'], { cwd: clone, encoding: 'utf8' })
      .split('\n')
      .find((f) => f.endsWith('/color.yaml'))!;
    mkdirSync(join(clone, 'keys'), { recursive: true });
    writeFileSync(
      join(clone, keyFile),
      'key: color\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*;*"\n    value: plain-git\n    active: true\n',
    );
    execFileSync(
      'git',
      ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', 'commit', '--quiet', '-am', 'by hand'],
      { cwd: clone, env: gitEnv() },
    );
    execFileSync('git', ['push', '--quiet', 'origin', 'HEAD:main'], { cwd: clone, env: gitEnv(), stdio: 'pipe' });
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).properties.color.val).toBe('plain-git');
  });

  it('wakes on a push through another server process on the same folder', async () => {
    const current = await pull('Prod;web');
    const held = watch('Prod;web', current.etag!);
    const other = await startTestServer(fixture.repos);
    try {
      const pushed = await pushTo(other.url, `/rest/push/${REPO}`, {
        changeComment: 'elsewhere',
        data: [{ key: 'color', values: [{ context: 'Prod;*', value: 'from-the-other' }] }],
      });
      expect(pushed.status).toBe(200);
    } finally {
      await other.close();
    }
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).properties.color.val).toBe('from-the-other');
  });

  it('of rawFile wakes when the rendered file changes', async () => {
    const path = `/rest/rawFile/${REPO}`;
    const first = await fetch(`${fixture.server.url}${path}`, { headers: { Context: 'Test;web', File: 'app.conf' } });
    const etag = first.headers.get('etag')!;
    expect(await first.text()).toBe('color=plain-git\n');
    const held = watch('Test;web', etag, 60, path, { File: 'app.conf' });
    expect((await setValue('Test;*', 'violet')).status).toBe(200);
    const answer = await held.answer;
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('color=violet\n');
  });
});

describe('the limit of watchers, and shutdown', () => {
  it('answers 503 with Retry-After over the limit; shutdown ends the held watch at once with 304', async () => {
    const limited = await startTestServer(fixture.repos, { maxWatchers: 1 });
    let closed = false;
    try {
      const current = await pull('Prod;web', {}, '', limited);
      const first = fetch(`${limited.url}/rest/pull/${REPO}`, {
        headers: { Context: 'Prod;web', 'If-None-Match': current.etag!, Wait: '300' },
      });
      // The second watch only once the server holds the first: sent at once, it may arrive first.
      const held = async () => /^cfghub_watchers 1$/m.test(await (await fetch(`${limited.url}/metrics`)).text());
      await until(held, 'the server to hold the first watch', 30_000);
      const second = await fetch(`${limited.url}/rest/pull/${REPO}`, {
        headers: { Context: 'Prod;web', 'If-None-Match': current.etag!, Wait: '1' },
      });
      const text = await second.text();
      expect(second.status).toBe(503);
      expect(second.headers.get('retry-after')).toBe('1');
      expect(JSON.parse(text)).toMatchObject({ error: 'too_many_watchers' });
      // The first watch is held (it fills the limit); shutting down answers it at once.
      const started = Date.now();
      await limited.close();
      closed = true;
      const answer = await first;
      expect(answer.status).toBe(304);
      expect(answer.headers.get('etag')).toBe(current.etag);
      expect(answer.headers.get('connection')).toBe('close');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      if (!closed) await limited.close();
    }
  });
});
