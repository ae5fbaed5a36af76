/**
 * The console's Readers tab in a real headless Chromium against the real server: with an admin
 * token it lists who reads the repository (application, context, commit served, reads), marks a
 * reader whose commit is not the head as behind, and without one says an admin token is needed.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, type Browser } from '../../support/browser.js';
import {
  cliOk,
  createRepo,
  headOf,
  pushTo,
  reasonOf,
  startTestServer,
  tempDir,
  TOKEN_FREE,
  type TestServer,
} from '../../support/harness.js';

const REPO = 'acme/readers';

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!!chromiumPath)('the Readers tab of the console', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let adminToken: string;

  const push = async (value: string) => {
    const answer = await pushTo(server.url, `/rest/push/${REPO}`, {
      changeComment: `pool ${value}`,
      enableKeyCreation: true,
      data: [{ key: 'pool.size', values: [{ context: '*;*', value }] }],
    });
    expect(answer.status, reasonOf(answer)).toBe(200);
  };
  const pull = (context: string, application: string) =>
    fetch(`${server.url}/rest/pull/${REPO}`, { headers: { Context: context, 'Application-Name': application } });

  beforeAll(async () => {
    dir = tempDir();
    createRepo(dir.path, REPO, 'Environment,Instance', ...TOKEN_FREE);
    adminToken = cliOk(dir.path, 'admin-token', 'create', '--name', 'console-admin').trim();
    server = await startTestServer(dir.path);
    await push('10');
    expect((await pull('Production;node-1', 'billing')).status).toBe(200);
    await push('20');
    expect((await pull('Production;node-2', 'billing')).status).toBe(200);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    dir?.remove();
  });

  it('says the record needs an admin token when the user holds none', async () => {
    await page.goto(`${server.url}/ui/#/r/acme/readers/readers`);
    expect(await page.getByTestId('readers-need-admin').textContent()).toContain('needs an admin token');
  });

  it('lists the readers with an admin token, the one left on an old commit marked behind', async () => {
    await page.evaluate(
      (token) => sessionStorage.setItem('cfghub.admin', JSON.stringify({ kind: 'admin', token })),
      adminToken,
    );
    await page.goto(`${server.url}/ui/#/r/acme/readers/keys`);
    await page.reload();
    await page
      .getByRole('navigation', { name: 'Repository' })
      .getByRole('link', { name: 'Readers', exact: true })
      .click();
    const behind = page.locator('tr[data-context="Production;node-1"]');
    const current = page.locator('tr[data-context="Production;node-2"]');
    await current.waitFor();
    expect(await behind.textContent()).toContain('behind the head');
    expect(await current.textContent()).not.toContain('behind the head');
    expect(await current.textContent()).toContain(headOf(dir.path, REPO).slice(0, 12));
    expect(await behind.locator('th').textContent()).toBe('billing');
  });
});
