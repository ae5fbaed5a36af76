/**
 * The console's Preview step before a revert and a restore, in real headless Chromium against the
 * real server, checked with the real git: the revert of a commit and the restore of a tag each
 * shown first as their dry run (context by context, before and after), nothing written while the
 * preview waits (refs by `git for-each-ref`, objects by `git count-objects -v` and the object
 * files), one commit made only once confirmed; a revert the schemas refuse shown refused, with no
 * way to confirm it; a head moved between the preview and the confirmation refused (If-Match),
 * nothing written.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, screenshot, type Browser } from '../../support/browser.js';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { diskState } from '../../support/dryRuns.js';
import { holdsFor } from '../../support/poll.js';

const REPO = 'acme/console-rollback';
const fixture = serverForFile();
let browser: Browser | undefined;
let page: Page;
let token: string;
let gitdir: string;
/** The commits: the seed (tagged v1), a production move, a port that a later schema forbids. */
const commits = { seed: '', production: '', lowPort: '' };

async function made(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

const head = () => git(gitdir, 'rev-parse', 'refs/heads/main').trim();
const written = () => diskState(gitdir);

async function pushed(data: unknown[], changeComment: string, extra: object = {}): Promise<string> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { enableKeyCreation: true, changeComment, data, ...extra },
    { 'Client-Token': token },
  );
  expect(answer.status, reasonOf(answer)).toBe(200);
  return head();
}

/** Opens a tab of the repository with the console holding the client token. */
async function open(tab: string): Promise<void> {
  await page.goto(`${fixture.server.url}/ui/`);
  await page.evaluate((token) => {
    sessionStorage.setItem(
      'cfghub.session',
      JSON.stringify({ kind: 'client', token, account: 'acme', repository: 'console-rollback' }),
    );
  }, token);
  await page.goto(`${fixture.server.url}/ui/#/r/acme/console-rollback/${tab}`);
  await page.reload();
}

/** The preview's row for a context and key: its before and after as shown. */
async function shownChange(context: string, key: string): Promise<{ before: string; after: string }> {
  const row = page.locator(`tr[data-context="${context}"][data-key="${key}"]`);
  return {
    before: (await row.locator('td.before').textContent())!,
    after: (await row.locator('td.after').textContent())!,
  };
}

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!!chromiumPath)('the preview before a revert and a restore in the console', () => {
  beforeAll(async () => {
    await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance');
    token = await made('token', 'create', REPO, '--name', 'rollbacker');
    gitdir = gitdirOf(fixture.repos, REPO);
    commits.seed = await pushed(
      [
        {
          key: 'db.host',
          values: [
            { context: '*;*;*', value: 'db.local' },
            { context: 'Production;*;*', value: 'db.prod' },
          ],
        },
        {
          key: 'db.port',
          vdt: 'Integer',
          values: [
            { context: '*;*;*', value: 5432 },
            { context: 'Production;Web;node-1', value: 6432 },
            { context: 'Production;Billing;node-7', value: 7432 },
          ],
        },
      ],
      'seed',
    );
    await made('tag', 'create', REPO, 'v1', '--comment', 'first release');
    commits.production = await pushed(
      [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db2.prod' }] }],
      'Production database moved',
    );
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('previews a revert context by context, writes nothing until confirmed, then commits it once', async () => {
    const before = head();
    await open('history');
    const item = page.locator(`li.commit[data-commit="${commits.production}"]`);
    await item.getByRole('button', { name: /^Revert commit/ }).click();
    await item.getByLabel('Revert comment (optional)').fill('Back to the old database');
    const state = written();
    await item.getByRole('button', { name: 'Preview the revert' }).click();
    await item.getByTestId('preview-summary').waitFor();
    expect(await item.getByTestId('preview-summary').textContent()).toContain(
      `Would commit on ${before.slice(0, 12)}: 1 key changed; 2 of 2 contexts would read something else.`,
    );
    for (const context of ['Production;Web;node-1', 'Production;Billing;node-7'])
      expect(await shownChange(context, 'db.host')).toEqual({ before: 'db2.prod', after: 'db.prod' });
    await screenshot(page, 'revert-preview');
    // Nothing is written while the preview waits for the user's word, nor when they go back.
    await holdsFor(500, () => expect(written()).toBe(state));
    await item.getByRole('button', { name: 'Back' }).click();
    expect(await item.getByTestId('preview').count()).toBe(0);
    expect(written()).toBe(state);

    await item.getByRole('button', { name: 'Preview the revert' }).click();
    await item.getByRole('button', { name: 'Confirm revert' }).click();
    await item.getByText('Reverted as commit').waitFor();
    const after = head();
    expect(git(gitdir, 'rev-list', `${before}..${after}`).trim().split('\n')).toHaveLength(1);
    expect(git(gitdir, 'log', '-1', '--format=%s', after).trim()).toBe('Back to the old database');
    expect(git(gitdir, 'log', '-1', '--format=%B', after)).toContain(`This reverts commit ${commits.production}.`);
    await holdsFor(300, () => expect(head()).toBe(after)); // and only once
  });

  it('previews the restore of a tag context by context, writes nothing until confirmed, then commits it once', async () => {
    commits.lowPort = await pushed(
      [{ key: 'db.port', values: [{ context: 'Production;Web;node-1', value: 80 }] }],
      'Port 80',
    );
    const before = head();
    await open('overview');
    const tags = page.getByRole('region', { name: 'Tags' });
    const state = written();
    await tags.getByRole('button', { name: /^Restore… the keys and files of tag v1/ }).click();
    await tags.getByTestId('preview-summary').waitFor();
    expect(await tags.getByTestId('preview-summary').textContent()).toContain('1 key changed; 1 of 2 contexts');
    expect(await shownChange('Production;Web;node-1', 'db.port')).toEqual({ before: '80', after: '6432' });
    await screenshot(page, 'restore-preview');
    await holdsFor(500, () => expect(written()).toBe(state));

    await tags.getByRole('button', { name: 'Confirm restore of v1' }).click();
    await tags.getByText('Restored as commit').waitFor();
    const after = head();
    expect(git(gitdir, 'rev-list', `${before}..${after}`).trim().split('\n')).toHaveLength(1);
    expect(git(gitdir, 'log', '-1', '--format=%s', after).trim()).toBe('Restore v1');
    expect(git(gitdir, 'diff', '--stat', 'v1', after, '--', 'keys', 'files').trim()).toBe('');
  });

  it('shows a revert the schemas refuse as refused in its preview, with no way to confirm it', async () => {
    await pushed([], 'Ports of 1000 and up', {
      schemas: { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1000 } }] },
    });
    // Reverting the restore would bring port 80 back, which the schemas now refuse.
    const restored = git(gitdir, 'log', '-1', '--format=%H', '--grep=^Restore v1', 'refs/heads/main').trim();
    await open('history');
    const item = page.locator(`li.commit[data-commit="${restored}"]`);
    await item.getByRole('button', { name: /^Revert commit/ }).click();
    const state = written();
    await item.getByRole('button', { name: 'Preview the revert' }).click();
    const refusal = item.getByTestId('preview-refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('The server would refuse this revert; nothing would be written.');
    expect(await refusal.getByTestId('breaks').locator('li').allTextContents()).toEqual([
      'key db.port at Production;Web;node-1 breaks schemas.yaml keys[0] (db.port): (value): must be >= 1000',
    ]);
    expect(await item.getByRole('button', { name: 'Confirm revert' }).isDisabled()).toBe(true);
    expect(written()).toBe(state);
  });

  it('refuses a confirmation when the head moved after the preview, writes nothing, and asks for a new preview', async () => {
    const first = await pushed(
      [{ key: 'db.host', values: [{ context: 'Staging;*;*', value: 'db.stage' }] }],
      'Staging',
    );
    await open('history');
    const staging = page.locator(`li.commit[data-commit="${first}"]`);
    await staging.getByRole('button', { name: /^Revert commit/ }).click();
    await staging.getByRole('button', { name: 'Preview the revert' }).click();
    await staging.getByTestId('preview-summary').waitFor();
    // Another writer, between the preview and the confirmation.
    await pushed([{ key: 'db.user', values: [{ context: '*;*;*', value: 'app' }] }], 'A user');
    const state = written();
    await staging.getByRole('button', { name: 'Confirm revert' }).click();
    await staging.getByText('The repository changed since the preview').waitFor();
    expect(await staging.getByRole('alert').textContent()).toContain('Preview the revert again.');
    expect(written()).toBe(state);
  });
});
