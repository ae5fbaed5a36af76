/**
 * Change requests in the web console (docs/changes.md), in real headless Chromium against the
 * real server: collected changes opened as a change request, reviewed with the server's preview
 * per context, approved as a second token (the author's own approval refused), applied (a commit
 * with Approved-By trailers, checked with git), and a conflict with what changed since shown.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, type Browser } from '../../support/browser.js';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';

const REPO = 'acme/console-changes';
const fixture = serverForFile();
const tokens: Record<string, string> = {};
let browser: Browser | undefined;
let page: Page;

async function made(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** Signs the console in as a token of the repository (the session the sign-in form keeps), and opens a tab. */
async function asToken(label: string, tab: string): Promise<void> {
  await page.goto(`${fixture.server.url}/ui/`);
  await page.evaluate((session) => sessionStorage.setItem('cfghub.session', JSON.stringify(session)), {
    kind: 'client',
    token: tokens[label],
    account: 'acme',
    repository: 'console-changes',
  });
  await page.goto(`${fixture.server.url}/ui/#/r/acme/console-changes/${tab}`);
  await page.reload();
}

const hostAt = (context: string, value: string) => ({ key: 'db.host', values: [{ context, value }] });

describe.skipIf(!chromiumPath)('change requests in the console', () => {
  beforeAll(async () => {
    await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance');
    for (const label of ['alice', 'bob']) tokens[label] = await made('token', 'create', REPO, '--name', label);
    const seed = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      {
        enableKeyCreation: true,
        data: [
          {
            key: 'db.host',
            values: [
              { context: '*;*;*', value: 'db.local' },
              { context: 'Production;Web;node-1', value: 'db.prod' },
            ],
          },
        ],
      },
      { 'Client-Token': tokens.alice },
    );
    expect(seed.status, reasonOf(seed)).toBe(200);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('opens, reviews per context, approves as a second token and applies', async () => {
    const gitdir = gitdirOf(fixture.repos, REPO);
    const before = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    await asToken('alice', 'keys');
    await page.getByRole('button', { name: 'Edit db.host for Production;Web;node-1' }).click();
    await page.getByLabel('Value').fill('db2.prod');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('link', { name: /Review and push 1 change/ }).click();
    await page.getByLabel('Change comment').fill('New production database\nTicket OPS-7');
    await page.getByRole('button', { name: 'Open a change request' }).click();
    await page.getByTestId('requested').waitFor();
    expect(git(gitdir, 'rev-parse', 'refs/heads/main').trim()).toBe(before);
    expect(git(gitdir, 'log', '-1', '--format=%an %s', 'refs/changes/1').trim()).toBe('alice New production database');

    await page.getByRole('link', { name: 'Review it under Change requests' }).click();
    await page.getByRole('button', { name: 'New production database' }).click();
    const row = page.locator('tr[data-context="Production;Web;node-1"][data-key="db.host"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('db.proddb2.prod');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('alice is the author of change request 1');

    await asToken('bob', 'requests');
    await page.getByRole('button', { name: 'New production database' }).click();
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByTestId('request-status').textContent()).toContain('approvals: bob');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByTestId('request-status').textContent()).toContain('applied as');
    const head = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    expect(head).not.toBe(before);
    expect(
      git(
        gitdir,
        'log',
        '-1',
        '--format=%(trailers:key=Approved-By,valueonly)%(trailers:key=Change-Request,valueonly)',
        head,
      ),
    ).toBe('bob\n1\n\n');
    git(gitdir, 'fsck', '--strict', '--no-dangling');
  });

  it('shows a conflict with what changed on the branch since, naming key and context', async () => {
    const answer = await fetch(`${fixture.server.url}/rest/changes/${REPO}`, {
      method: 'POST',
      headers: { 'Client-Token': tokens.alice, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Another host', data: [hostAt('Production;Web;node-1', 'db3.prod')] }),
    });
    expect(answer.status).toBe(201);
    const main = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { data: [hostAt('Production;Web;node-1', 'db4.prod')] },
      { 'Client-Token': tokens.bob },
    );
    expect(main.status, reasonOf(main)).toBe(200);
    await asToken('bob', 'requests');
    await page.getByRole('button', { name: 'Another host' }).click();
    await page.getByTestId('preview-refusal').waitFor();
    expect(await page.getByTestId('preview-refusal').textContent()).toContain('key db.host at Production;Web;node-1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect
      .poll(() => page.locator('[role="alert"]').allTextContents())
      .toEqual(expect.arrayContaining([expect.stringContaining('409')]));
  });
});

if (!chromiumPath) console.warn(browserMissingLine);
