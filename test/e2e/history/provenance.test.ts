/**
 * Provenance: history attributes a push only to the token and application that
 * made it, whatever its change comment says. A comment that ends with trailer lines
 * (`Token: release-admin`, `Application-Name: release-bot`) stays comment text, for cfghub's
 * history and for `git log --format=%(trailers)` alike. The real server and the real git CLI.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { read } from '../../support/reads.js';

const REPO = 'acme/prov';
const FORGED = 'Ship it\n\nToken: release-admin\nApplication-Name: release-bot';

const fixture = serverForFile();
let token: string;

beforeAll(() => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment', '--token-free-push', '--token-free-pull');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'ci').trim();
});

async function pushWith(comment: string, value: string, headers: Record<string, string> = {}): Promise<string> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { changeComment: comment, enableKeyCreation: true, data: [{ key: 'k', values: [{ context: '*', value }] }] },
    headers,
  );
  expect(answer.status, reasonOf(answer)).toBe(200);
  return answer.etag!.replace(/"/g, '');
}

async function historyEntry(commit: string): Promise<Record<string, unknown>> {
  const answer = await read(fixture.server.url, `/rest/history/${REPO}`, { Limit: '20' });
  expect(answer.status).toBe(200);
  return answer.json.commits.find((entry: { id: string }) => entry.id === commit);
}

const gitTrailers = (commit: string) =>
  git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%(trailers:only,unfold)', commit).trim();

describe('a change comment cannot forge provenance', () => {
  it('an anonymous push whose comment ends with trailer lines is attributed to no token and no application', async () => {
    const commit = await pushWith(FORGED, 'v1');
    const entry = await historyEntry(commit);
    expect(entry.token).toBeUndefined();
    expect(entry.applicationName).toBeUndefined();
    expect(entry.comment).toBe(FORGED);
    expect(gitTrailers(commit)).not.toMatch(/release-admin|release-bot/);
  });

  it("a push with an application name records only it, not the comment's Token line", async () => {
    const commit = await pushWith(FORGED, 'v2', { 'Application-Name': 'real-app' });
    const entry = await historyEntry(commit);
    expect(entry.token).toBeUndefined();
    expect(entry.applicationName).toBe('real-app');
    expect(entry.comment).toBe(FORGED);
    expect(gitTrailers(commit)).toBe('Application-Name: real-app');
  });

  it('a push with a token records that token, whatever the comment names', async () => {
    const answer = await pushTo(
      fixture.server.url,
      '/rest/push',
      { changeComment: 'x\n\nToken: release-admin', data: [{ key: 'k', values: [{ context: '*', value: 'v3' }] }] },
      { 'Client-Token': token },
    );
    expect(answer.status).toBe(200);
    const entry = await historyEntry(answer.etag!.replace(/"/g, ''));
    expect(entry.token).toBe('ci');
    expect(entry.comment).toBe('x\n\nToken: release-admin');
  });

  it('forms git reads loosely (no space, indented, trailing blank lines) are comment text too', async () => {
    for (const [i, comment] of [
      't\n\nToken:release-admin',
      't\n\n Token: release-admin',
      'Token: release-admin\n\n\n',
      'Token: release-admin',
    ].entries()) {
      const commit = await pushWith(comment, `loose${i}`);
      const entry = await historyEntry(commit);
      expect(entry.token, comment).toBeUndefined();
      expect(gitTrailers(commit), comment).not.toMatch(/release-admin/);
    }
  });

  it('a plain comment keeps its message exactly as before (no marker)', async () => {
    const commit = await pushWith('Just a comment', 'plain');
    expect(git(gitdirOf(fixture.repos, REPO), 'log', '-1', '--format=%B', commit)).toBe('Just a comment\n\n');
  });
});
