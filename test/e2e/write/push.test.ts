/**
 * The push, end to end: the real server on loopback, real bare repositories, checked with git.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  commitCount,
  getJson,
  git,
  gitdirOf,
  headOf,
  keyDocument,
  pushTo,
  reasonOf,
  serverForFile,
  startTestServer,
} from '../../support/harness.js';

const REPO = 'acme/app';
const fixture = serverForFile();
let token: string;

beforeAll(() => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Application,Instance', '--token-free-push');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'ci-bot').trim();
});

const push = (body: unknown, headers: Record<string, string> = {}) =>
  pushTo(fixture.server.url, `/rest/push/${REPO}`, body, headers);
const gitdir = () => gitdirOf(fixture.repos, REPO);

describe('an applied push', () => {
  it('is one commit whose message is the change comment, with trailers for who pushed', async () => {
    const before = commitCount(fixture.repos, REPO);
    const answer = await pushTo(
      fixture.server.url,
      '/rest/push',
      {
        changeComment: 'Point production at the new database',
        enableKeyCreation: true,
        data: [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db1.prod' }] }],
      },
      { 'Client-Token': token, 'Application-Name': 'deploy-tool', 'Client-Version': 'v1.5' },
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('');
    expect(answer.etag).toBe(`"${headOf(fixture.repos, REPO)}"`);
    expect(commitCount(fixture.repos, REPO)).toBe(before + 1);
    expect(git(gitdir(), 'log', '-1', '--format=%B')).toBe(
      'Point production at the new database\n\nApplication-Name: deploy-tool\nToken: ci-bot\nClient-Version: v1.5\n\n',
    );
    expect(git(gitdir(), 'log', '-1', '--format=%(trailers:key=Token,valueonly)').trim()).toBe('ci-bot');
    expect(keyDocument(fixture.repos, REPO, 'keys/7a/db.host.yaml')).toContain('value: db1.prod');
  });

  it('answers 200 with Content-Length 0 on the path form without a token when token-free push is on', async () => {
    const answer = await push({
      enableKeyCreation: true,
      data: [{ key: 'log.level', values: [{ context: '*;*;*', value: 'info' }] }],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('');
    // No change comment: a default subject naming what the push sent, never an empty one.
    expect(git(gitdir(), 'log', '-1', '--format=%B').trim()).toBe('Push: log.level');
  });

  it('writes a file with its raw content, so git show prints it', async () => {
    const content = 'host=${ db.host }\nlevel=${log.level}\n';
    const answer = await push({
      changeComment: 'add a file',
      data: [{ file: '/conf/app.properties', context: '*;*;*', content }],
    });
    expect(answer.status).toBe(200);
    expect(git(gitdir(), 'show', 'refs/heads/main:files/_;_;_/conf/app.properties')).toBe(content);
  });

  it('leaves git fsck --strict clean', async () => {
    await fixture.server.settle(REPO);
    execFileSync('git', ['--git-dir', gitdir(), 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
  });
});

describe('a push that changes nothing', () => {
  it('answers 200 with the current head as ETag and makes no commit', async () => {
    const head = headOf(fixture.repos, REPO);
    const before = commitCount(fixture.repos, REPO);
    const same = await push({ data: [{ key: 'log.level', values: [{ context: '*;*;*', value: 'info' }] }] });
    expect(same.status).toBe(200);
    expect(same.etag).toBe(`"${head}"`);
    const createdAndDeleted = await push({
      enableKeyCreation: true,
      data: [
        { key: 'temp.key', values: [{ context: '*;*;*', value: 'x' }] },
        { key: 'temp.key', opp: 'delete' },
      ],
    });
    expect(createdAndDeleted.status).toBe(200);
    expect(createdAndDeleted.etag).toBe(`"${head}"`);
    const empty = await push({ data: [] });
    expect(empty.status).toBe(200);
    expect(commitCount(fixture.repos, REPO)).toBe(before);
  });
});

describe('If-Match', () => {
  it('applies the push when it names the head, and answers 412 when it does not', async () => {
    const head = headOf(fixture.repos, REPO);
    const body = { data: [{ key: 'log.level', values: [{ context: 'Dev;*;*', value: 'debug' }] }] };
    const stale = await push(body, { 'If-Match': '"0000000000000000000000000000000000000000"' });
    expect(stale.status).toBe(412);
    expect(stale.json).toMatchObject({ error: 'precondition_failed' });
    expect(headOf(fixture.repos, REPO)).toBe(head);
    const fresh = await push(body, { 'If-Match': `"${head}"` });
    expect(fresh.status).toBe(200);
    expect(headOf(fixture.repos, REPO)).not.toBe(head);
  });
});

describe('a refused push', () => {
  it('answers 304 with the reason in the ETag and makes no commit', async () => {
    const head = headOf(fixture.repos, REPO);
    const answer = await push({
      data: [
        { key: 'log.level', values: [{ context: 'Staging;*;*', value: 'warn' }] },
        { key: 'no.such.key', values: [{ context: '*;*;*', value: 'x' }] },
      ],
    });
    expect(answer.status).toBe(304);
    expect(reasonOf(answer)).toBe(
      'data[1] key no.such.key: key does not exist and key creation is off (enableKeyCreation)',
    );
    expect(headOf(fixture.repos, REPO)).toBe(head);
    expect(keyDocument(fixture.repos, REPO, 'keys/37/log.level.yaml')).not.toContain('Staging');
  });
});

describe('the listing', () => {
  it('counts keys, values and active tokens from the head', async () => {
    const listing = await getJson(fixture.server.url, '/rest/info/all');
    expect(listing.status).toBe(200);
    const record = listing.json.find((r: { name: string }) => r.name === 'app');
    expect(record).toMatchObject({
      account: 'acme',
      name: 'app',
      keyCount: 2,
      userCount: 1,
      context: ['Environment', 'Application', 'Instance'],
    });
    expect(record.valueCount).toBe(3);
  });
});

describe('a clone of a repository', () => {
  it('checks out, and holds no token and no token hash', () => {
    const clone = tempDirPath();
    execFileSync('git', ['clone', '-q', gitdir(), clone], { stdio: 'pipe' });
    const tokenFile = JSON.parse(readFileSync(join(fixture.repos, '.cfghub', 'tokens.json'), 'utf8'));
    const hash: string = tokenFile.tokens[0].hash;
    const everything = [
      git(join(clone, '.git'), 'log', '-p', '--all'),
      ...allFiles(clone).map((file) => readFileSync(file).toString('latin1')),
    ].join('\n');
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(hash);
    expect(readFileSync(join(clone, 'files/_;_;_/conf/app.properties'), 'utf8')).toContain('${ db.host }');
  });
});

describe('a large push', () => {
  it('is written as a pack that git verifies, no loose objects, and a fresh server reads it back', async () => {
    const data = Array.from({ length: 40 }, (_, i) => ({
      key: `bulk.${i}`,
      values: [{ context: '*;*;*', value: `v${i}` }],
    }));
    const answer = await push({ changeComment: 'bulk', enableKeyCreation: true, data });
    expect(answer.status).toBe(200);
    await fixture.server.settle(REPO);
    const counts = Object.fromEntries(
      git(gitdir(), 'count-objects', '-v')
        .trim()
        .split('\n')
        .map((line) => line.split(': ')),
    );
    expect(counts.count).toBe('0'); // no loose objects: every push is one pack
    expect(Number(counts['in-pack'])).toBeGreaterThan(40);
    const packFolder = join(gitdir(), 'objects', 'pack');
    for (const name of readdirSync(packFolder).filter((n) => n.endsWith('.idx'))) {
      execFileSync('git', ['--git-dir', gitdir(), 'verify-pack', join(packFolder, name)]);
    }
    execFileSync('git', ['--git-dir', gitdir(), 'fsck', '--strict', '--no-dangling'], { stdio: 'pipe' });
    const fresh = await startTestServer(fixture.repos);
    try {
      const listing = await getJson(fresh.url, '/rest/info/all');
      expect(listing.json.find((r: { name: string }) => r.name === 'app').keyCount).toBeGreaterThanOrEqual(42);
      const again = await pushTo(fresh.url, `/rest/push/${REPO}`, {
        data: [{ key: 'bulk.7', values: [{ context: '*;*;*', value: 'changed' }] }],
      });
      expect(again.status).toBe(200);
      expect(keyDocument(fixture.repos, REPO, `keys/${shardOf('bulk.7')}/bulk.7.yaml`)).toContain('value: changed');
    } finally {
      await fresh.close();
    }
  });
});

function shardOf(key: string): string {
  return createHash('sha1').update(key.toLowerCase()).digest('hex').slice(0, 2);
}

function tempDirPath(): string {
  return join(fixture.repos, `clone-${Date.now()}`);
}

function allFiles(root: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (statSync(path).isDirectory()) out.push(...allFiles(path));
    else out.push(path);
  }
  return out;
}
