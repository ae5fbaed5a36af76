/**
 * Maintenance (deliverable 7): plain-git writers leave loose objects; once they pass the
 * limit (estimated from one object folder, as `git gc --auto` does) the server repacks the
 * repository with `git repack -d` in its writers' queue, and reads, pushes and `git fsck` stay
 * correct. Below the limit nothing is repacked.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { gitEnv } from '../../support/gitCli.js';
import { cliOk, getJson, gitdirOf, pushTo, serverForFile } from '../../support/harness.js';
import { looseObjectSample } from '../../../src/disk/objects/looseObjects.js';

/** Loose objects are repacked above 512 (2 in the sampled folder). */
const LIMIT = 512;

const fixture = serverForFile({ looseObjectLimit: LIMIT });

function git(gitdir: string, args: string[], input?: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], {
    input,
    env: gitEnv(env),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * Commits `count` new keys with plain git plumbing straight into the bare repository, as loose
 * objects (one blob per key, plus trees and the commit); returns the commit.
 */
function commitLooseKeys(fullName: string, prefix: string, count: number): string {
  const gitdir = gitdirOf(fixture.repos, fullName);
  const work = join(fixture.repos, `work-${prefix}`);
  mkdirSync(work, { recursive: true });
  const env = { GIT_INDEX_FILE: join(work, 'index') };
  git(gitdir, ['read-tree', 'main'], undefined, env);
  const paths: string[] = [];
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = `${prefix}.key${i}`;
    const path = join(work, `${i}.yaml`);
    writeFileSync(
      path,
      `key: ${key}\nreadme: ""\ndeprecated: false\nvdt: Text\npush: true\nvalues:\n  - context: "*;*"\n    value: v${i}\n    active: true\n`,
    );
    paths.push(path);
    names.push(`keys/${createHash('sha1').update(key).digest('hex').slice(0, 2)}/${key}.yaml`);
  }
  const blobs = git(gitdir, ['hash-object', '-w', '--stdin-paths'], paths.join('\n')).trim().split('\n');
  git(
    gitdir,
    ['update-index', '--add', '--index-info'],
    blobs.map((oid, i) => `100644 ${oid}\t${names[i]}\n`).join(''),
    env,
  );
  const tree = git(gitdir, ['write-tree'], undefined, env).trim();
  const commit = git(gitdir, ['commit-tree', tree, '-p', 'main', '-m', `${count} keys by hand`], undefined, {
    GIT_AUTHOR_NAME: 'Someone',
    GIT_AUTHOR_EMAIL: 'someone@example.com',
    GIT_COMMITTER_NAME: 'Someone',
    GIT_COMMITTER_EMAIL: 'someone@example.com',
  }).trim();
  git(gitdir, ['update-ref', 'refs/heads/main', commit]);
  return commit;
}

/** `git count-objects -v` as numbers. */
function countObjects(fullName: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of git(gitdirOf(fixture.repos, fullName), ['count-objects', '-v']).trim().split('\n')) {
    const [name, value] = line.split(': ');
    counts[name] = Number(value);
  }
  return counts;
}

const recordOf = async (fullName: string) =>
  ((await getJson(fixture.server.url, '/rest/info/all')).json as Record<string, any>[]).find(
    (r) => `${r.account}/${r.name}` === fullName,
  );

beforeAll(async () => {
  for (const name of ['acme/big', 'acme/small'])
    cliOk(fixture.repos, 'repo', 'create', name, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  for (const name of ['acme/big', 'acme/small']) expect((await recordOf(name))?.keyCount).toBe(0);
});

describe('repacking loose objects that plain git left', () => {
  it('repacks a repository past the limit in its writers queue; reads, pushes and git fsck stay correct', async () => {
    commitLooseKeys('acme/big', 'big', 2000);
    expect(looseObjectSample(gitdirOf(fixture.repos, 'acme/big'))).toBeGreaterThan(2);
    expect(countObjects('acme/big').count).toBeGreaterThan(2000);

    // Reading notices the new head, reads it at once, and queues the repack.
    const first = await getJson(fixture.server.url, '/rest/pull/acme/big', { Context: 'Prod;web' });
    expect(first.status).toBe(200);
    expect(first.json.properties['big.key1999']).toEqual({ val: 'v1999' });
    await fixture.server.settle('acme/big');

    const after = countObjects('acme/big');
    expect(after.count).toBe(0);
    expect(after['in-pack']).toBeGreaterThan(2000);
    expect(git(gitdirOf(fixture.repos, 'acme/big'), ['fsck', '--strict', '--no-progress'])).toBe('');

    expect(await recordOf('acme/big')).toMatchObject({ keyCount: 2000, valueCount: 2000 });
    const pushed = await pushTo(fixture.server.url, '/rest/push/acme/big', {
      changeComment: 'after the repack',
      data: [{ key: 'big.key7', values: [{ context: 'Prod;*', value: 'p7' }] }],
    });
    expect(pushed.status).toBe(200);
    const pulled = await getJson(fixture.server.url, '/rest/pull/acme/big', { Context: 'Prod;web' });
    expect(pulled.json.properties['big.key7']).toEqual({ val: 'p7' });
    expect(pulled.json.properties['big.key8']).toEqual({ val: 'v8' });
    await fixture.server.settle('acme/big');
    expect(git(gitdirOf(fixture.repos, 'acme/big'), ['fsck', '--strict', '--no-progress'])).toBe('');
  });

  it('leaves a few loose objects alone', async () => {
    commitLooseKeys('acme/small', 'small', 20);
    expect(looseObjectSample(gitdirOf(fixture.repos, 'acme/small'))).toBeLessThanOrEqual(2);
    const loose = countObjects('acme/small').count;
    expect(loose).toBeGreaterThan(20);
    expect(
      (await getJson(fixture.server.url, '/rest/pull/acme/small', { Context: 'Prod;web' })).json.properties[
        'small.key3'
      ],
    ).toEqual({ val: 'v3' });
    await fixture.server.settle('acme/small');
    expect(countObjects('acme/small').count).toBe(loose);
  });
});
