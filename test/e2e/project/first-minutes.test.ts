/**
 * The rough edges of a new user's first minutes: short commit ids wherever a commit is
 * asked for (and a 400 for an ambiguous one), a JSON mistake located by line and column, a date
 * alone as midnight UTC, one error code for every malformed request, and the command line's
 * messages about the repositories folder, the port and the version. The real server, the real
 * `cfghub` command and the real git CLI.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cli,
  CLI,
  cliOk,
  createOpenRepository,
  git,
  gitdirOf,
  pushTo,
  reasonOf,
  serverForFile,
} from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const REPO = 'acme/first';

const fixture = serverForFile();
let gitdir: string;

async function pushOk(comment: string | undefined, key: string, value: string): Promise<string> {
  const body = {
    ...(comment === undefined ? {} : { changeComment: comment }),
    enableKeyCreation: true,
    data: [{ key, values: [{ context: '*;*', value }] }],
  };
  const answer = await pushTo(fixture.server.url, `/rest/push/${REPO}`, body);
  expect(answer.status, `push refused: ${reasonOf(answer)} ${answer.body}`).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

async function post(path: string, headers: Record<string, string>) {
  const response = await fetch(`${fixture.server.url}${path}`, { method: 'POST', headers });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text ? JSON.parse(text) : undefined,
    etag: response.headers.get('etag')?.replace(/"/g, ''),
  };
}

const pull = (headers: Record<string, string>) =>
  read(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Production;web', ...headers });

beforeAll(() => {
  createOpenRepository(fixture.repos, REPO);
  gitdir = gitdirOf(fixture.repos, REPO);
});

describe('short commit ids', () => {
  it('revert, restore, diff and history take a unique prefix of 7 or more hex digits', async () => {
    const first = await pushOk('First', 'pool.size', '1');
    const second = await pushOk('Second', 'pool.size', '2');
    // Over REST: Commit (revert) and From (diff) with git's own short ids.
    const short = git(gitdir, 'rev-parse', '--short=7', second).trim();
    expect(short).toHaveLength(7);
    const diff = await read(fixture.server.url, `/rest/diff/${REPO}`, { From: first.slice(0, 7), To: short });
    expect(diff.status, diff.text).toBe(200);
    expect(diff.json).toMatchObject({ from: first, to: second });
    const reverted = await post(`/rest/revert/${REPO}`, { Commit: short.toUpperCase() });
    expect(reverted.status, reverted.text).toBe(200);
    expect(git(gitdir, 'log', '-1', '--format=%s%n%b')).toContain(`This reverts commit ${second}.`);
    const history = await read(fixture.server.url, `/rest/history/${REPO}`, { Before: reverted.etag!.slice(0, 10) });
    expect(history.json.commits[0].id).toBe(second);
    // From the command line: restore (and revert) with a short id.
    const restored = cli(fixture.repos, 'restore', REPO, second.slice(0, 8));
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ outcome: 'applied' });
    expect((await pull({})).json.properties['pool.size'].val).toBe('2');
    const revertedByCli = cli(
      fixture.repos,
      'revert',
      REPO,
      git(gitdir, 'rev-parse', '--short', 'refs/heads/main').trim(),
    );
    expect(revertedByCli.code, revertedByCli.stderr).toBe(0);
    expect((await pull({})).json.properties['pool.size'].val).toBe('1');
  });

  it('refuses an ambiguous prefix (400 listing the commits), and looks a prefix no commit starts up as a tag', async () => {
    // Two commits starting with the same 7 digits: a plain-git commit, and its object copied
    // under another name with that prefix (git reads loose objects by name, and so does cfghub).
    const tree = git(gitdir, 'rev-parse', 'refs/heads/main^{tree}').trim();
    const loose = execFileSync('git', ['--git-dir', gitdir, 'commit-tree', tree, '-m', 'unreferenced'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'a',
        GIT_AUTHOR_EMAIL: 'a@b',
        GIT_COMMITTER_NAME: 'a',
        GIT_COMMITTER_EMAIL: 'a@b',
      },
    }).trim();
    const twin = `${loose.slice(0, 7)}${loose[7] === '0' ? '1' : '0'}${loose.slice(8)}`;
    copyFileSync(
      join(gitdir, 'objects', loose.slice(0, 2), loose.slice(2)),
      join(gitdir, 'objects', twin.slice(0, 2), twin.slice(2)),
    );
    const head = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    const ambiguous = await post(`/rest/revert/${REPO}`, { Commit: loose.slice(0, 7) });
    expect(expectJsonError(ambiguous, 400)).toMatch(
      new RegExp(
        `commit id ${loose.slice(0, 7)} is ambiguous in ${REPO}: it starts 2 commits \\(${[loose, twin]
          .sort()
          .map((id) => id.slice(0, 12))
          .join(', ')}\\); give more digits`,
      ),
    );
    expect(
      expectJsonError(await read(fixture.server.url, `/rest/diff/${REPO}`, { From: loose.slice(0, 7) }), 400),
    ).toMatch(/ambiguous/);
    // One more digit tells them apart.
    expect(
      (await read(fixture.server.url, `/rest/diff/${REPO}`, { From: loose.slice(0, 8), To: head })).json.from,
    ).toBe(loose);
    expect(git(gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(head);
    // A prefix that starts no commit is a 404 for revert, and a tag name for restore.
    expectJsonError(await post(`/rest/revert/${REPO}`, { Commit: 'f00dfeed' }), 404);
    cliOk(fixture.repos, 'tag', 'create', REPO, 'feed123');
    expect((await post(`/rest/restore/${REPO}`, { To: 'feed123' })).status).toBe(200);
  });
});

describe('dates and JSON mistakes', () => {
  it('reads Repository-Date given as a date alone as midnight UTC', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const atTomorrow = await pull({ 'Repository-Date': tomorrow });
    expect(atTomorrow.status, atTomorrow.text).toBe(200);
    expect(expectJsonError(await pull({ 'Repository-Date': '2001-02-03' }), 404)).toBe(
      `repository ${REPO} did not exist at 2001-02-03`,
    );
    expect(expectJsonError(await pull({ 'Repository-Date': '2001-02-30' }), 400)).toMatch(
      /or a date alone \(2026-01-31, midnight UTC\)/,
    );
  });

  it('names the line and column of a JSON mistake, without quoting the body', async () => {
    const answer = await pushTo(fixture.server.url, `/rest/push/${REPO}`, '{"data": [\n  {"key": "s3cret-name",}\n]}');
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      error: 'bad_request',
      message:
        'the body is not valid JSON: a property name in double quotes was expected, at line 2, column 25 (character 36)',
    });
    const unexpected = await pushTo(fixture.server.url, `/rest/push/${REPO}`, '{"data": [tru]}');
    expect(unexpected.json.message).toMatch(
      /^the body is not valid JSON: unexpected character: a value was expected .*, at line 1, column 11 \(character 11\)$/,
    );
  });

  it('answers every malformed request with the one code bad_request', async () => {
    for (const answer of [
      await read(fixture.server.url, `/rest/pull/${REPO}`, {}), // no Context: found by the service
      await read(fixture.server.url, '/rest/info/all', { 'Client-Version': 'v9.0' }), // found by the adapter
      await pushTo(fixture.server.url, `/rest/push/${REPO}`, '{'),
    ]) {
      expect((answer as { json: { error: string } }).json.error).toBe('bad_request');
    }
  });

  it('gives a push without a change comment a subject naming what it sent', async () => {
    await pushOk(undefined, 'feature.flag', 'on');
    expect(git(gitdir, 'log', '-1', '--format=%s').trim()).toBe('Push: feature.flag');
    expect((await read(fixture.server.url, `/rest/history/${REPO}`, { Limit: '1' })).json.commits[0].comment).toBe(
      'Push: feature.flag',
    );
  });
});

describe('the command line in a new folder', () => {
  const run = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, CFGHUB_REPOS: '', ...env },
      timeout: 20_000,
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it('prints its version', () => {
    const version = (JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as { version: string })
      .version;
    expect(run(fixture.repos, ['--version'])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('names the repositories folder it searched, and refuses a missing one or a file', () => {
    const elsewhere = join(fixture.repos, 'elsewhere');
    mkdirSync(elsewhere);
    expect(run(elsewhere, ['tag', 'list', REPO])).toMatchObject({
      code: 1,
      stderr: `cfghub: there is no repositories folder ${join(elsewhere, 'repos')} (from ./repos of the current folder ${elsewhere}): run the command where the server runs, or set CFGHUB_REPOS (or --repos) to the folder the server uses\n`,
    });
    expect(run(elsewhere, ['tag', 'list', 'acme/none'], { CFGHUB_REPOS: fixture.repos })).toMatchObject({
      code: 1,
      stderr: `cfghub: repository acme/none does not exist in the repositories folder ${fixture.repos}\n`,
    });
    writeFileSync(join(elsewhere, 'afile'), '');
    expect(run(elsewhere, ['repo', 'list', '--repos', 'afile'])).toMatchObject({
      code: 2,
      stderr: `cfghub: the repositories folder ${join(elsewhere, 'afile')} (from --repos) is a file, not a folder\n`,
    });
    expect(run(elsewhere, ['serve', '--port', '0'], { CFGHUB_REPOS: join(elsewhere, 'afile') })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is not a folder'),
    });
  });

  it('fails at once, naming the folder, where a folder cannot be made (no mkdir spin under /proc)', () => {
    const result = run(fixture.repos, ['repo', 'create', 'a/b', '--context', 'A', '--repos', '/proc/cfghub-nope']);
    expect(result).toMatchObject({ code: 1, stderr: 'cfghub: cannot create the folder /proc/cfghub-nope (ENOENT)\n' });
  });

  it('reports a bad PORT as PORT, and a port in use with what to do', async () => {
    expect(run(fixture.repos, ['serve'], { PORT: 'abc' })).toMatchObject({
      code: 2,
      stderr: 'cfghub: PORT must be a whole number from 0 to 65535, got "abc"\n',
    });
    expect(run(fixture.repos, ['serve', '--port', '70000'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--port must be a whole number from 0 to 65535'),
    });
    const taken: Server = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(
          process.execPath,
          [CLI, 'serve', '--port', String(port), '--repos', join(fixture.repos, 'served')],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += String(chunk)));
        child.on('close', (code) => done({ code, stderr }));
      });
      expect(result).toEqual({
        code: 1,
        stderr: `cfghub: port ${port} on 127.0.0.1 is already in use (another cfghub?): stop it, or serve on another port with --port N or PORT=N\n`,
      });
    } finally {
      taken.close();
    }
  });

  it('names the repositories folder in its first log line, and makes it when missing', async () => {
    const folder = join(fixture.repos, 'new', 'repos');
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--repos', folder], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    try {
      const deadline = Date.now() + 20_000;
      while (!out.includes('"listening"') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const first = JSON.parse(out.split('\n')[0]);
      expect(first).toMatchObject({ event: 'repositories', folder, created: true });
      expect(existsSync(folder)).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('close', resolve));
    }
  });
});
