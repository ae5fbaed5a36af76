/**
 * A sealed value changed outside cfghub: a pull by a caller holding the group's
 * key answers 409 repository_damaged naming the repository, the key and the group, never a 500, a path or the
 * ciphertext. The real server, a real bare repository, the real git CLI.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliOk, cliWithInput, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { keyPath, read } from '../../support/reads.js';

const PASSWORD = 'correct-horse-battery';
const fixture = serverForFile();

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Someone', '-c', 'user.email=someone@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  });
}

it('a secured value changed by plain git answers 409 repository_damaged naming the key, not 500', async () => {
  const repo = 'acme/damaged';
  cliOk(fixture.repos, 'repo', 'create', repo, '--context', 'Environment', '--token-free-push', '--token-free-pull');
  const created = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', repo, 'secrets');
  expect(created.code, created.stderr).toBe(0);
  const auth = { 'Security-Profile-Auth': JSON.stringify({ secrets: PASSWORD }) };
  const pushed = await pushTo(
    fixture.server.url,
    `/rest/push/${repo}`,
    {
      changeComment: 'a secret',
      enableKeyCreation: true,
      data: [
        {
          key: 'db.password',
          securityGroup: 'secrets',
          password: PASSWORD,
          values: [{ context: '*', value: 'Pr0d-s3cret' }],
        },
      ],
    },
    auth,
  );
  expect(pushed.status, reasonOf(pushed)).toBe(200);
  const before = await read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'Prod', ...auth });
  expect(before.status).toBe(200);

  // Flip one character of the ciphertext and commit it with plain git.
  const clone = join(fixture.repos, 'clone');
  git(fixture.repos, 'clone', '--quiet', gitdirOf(fixture.repos, repo), clone);
  const file = join(clone, keyPath('db.password'));
  const text = readFileSync(file, 'utf8');
  // A sealed text is `enc:v1:<key id>:<nonce>:<ciphertext and tag>`: change the ciphertext.
  const cipher = /enc:v1:[^:\s"']+:[A-Za-z0-9_-]+:([A-Za-z0-9_-]+)/.exec(text)![1];
  const flipped = (cipher[0] === 'A' ? 'B' : 'A') + cipher.slice(1);
  writeFileSync(file, text.replace(cipher, flipped));
  git(clone, 'commit', '--quiet', '-am', 'changed outside cfghub');
  git(clone, 'push', '--quiet', 'origin', 'HEAD:main');

  const after = await read(fixture.server.url, `/rest/pull/${repo}`, { Context: 'Prod', ...auth });
  expect(after.status, after.text).toBe(409);
  const body = JSON.parse(after.text) as { error: string; message: string; repository?: string };
  expect(body.error).toBe('repository_damaged');
  expect(body.repository).toBe(repo);
  expect(body.message).toContain(`repository ${repo}`);
  expect(body.message).toContain('db.password');
  expect(body.message).toContain('secrets');
  expect(after.text).not.toContain(fixture.repos);
  expect(after.text).not.toContain(flipped);
});
