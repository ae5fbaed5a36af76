/**
 * The web console holds account and repository names taken from the address to the server's
 * naming rule before it builds any request from them: in a real headless Chromium, with an admin
 * token and a client token held, an address naming `..`, `../admin`, an encoded slash, a name over
 * the length limit or broken percent-encoding shows "Not a repository name" and the page asks the
 * server nothing built from it (every request the page makes is recorded). A good name, for
 * contrast, is asked for.
 *
 * Without a Chromium this file says so in one line and skips; with CI=true it fails instead.
 */
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, type Browser } from '../../support/browser.js';
import { cliOk, startTestServer, tempDir, type TestServer } from '../../support/harness.js';

const ACCOUNT = 'acme';
const REPOSITORY = 'app';
const LONG = 'a'.repeat(121);

/** Addresses whose names are not names, each with a text the page must never send to the server. */
const BAD_ADDRESSES: ReadonlyArray<{ hash: string; name: string }> = [
  { hash: '#/r/x/%2E%2E/overview', name: '..' },
  { hash: '#/r/acme/..%2Fadmin/overview', name: 'admin' },
  { hash: '#/r/%2E%2E/app/history', name: '..' },
  { hash: '#/r/acme/a%2Fb/keys', name: 'a/b' },
  { hash: '#/r/acme/a%252Fb/keys', name: 'a%2Fb' },
  { hash: '#/r/acme/./resolved', name: 'acme/.' },
  { hash: `#/r/acme/${LONG}/changes`, name: LONG },
  { hash: '#/r/acme/%E0%A4%A/keys', name: '%E0%A4%A' },
  { hash: '#/r/acme/app%20x/keys', name: 'app x' },
];

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!chromiumPath && process.env.CI === 'true')('the browser under CI', () => {
  it('is installed (CI=true makes a missing Chromium a failure)', () => {
    expect.fail(browserMissingLine);
  });
});

describe.runIf(!!chromiumPath)('the console and names from the address', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  /** Every request the page made since the last `visit`, as full URLs (after the browser resolved them). */
  let requests: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    dir = tempDir();
    cliOk(dir.path, 'repo', 'create', `${ACCOUNT}/${REPOSITORY}`, '--context', 'Env');
    const token = cliOk(dir.path, 'token', 'create', `${ACCOUNT}/${REPOSITORY}`, '--name', 'console').trim();
    const adminToken = cliOk(dir.path, 'admin-token', 'create', '--name', 'console-admin').trim();
    server = await startTestServer(dir.path);
    browser = await launchBrowser();
    page = await browser.context.newPage();
    // Both kinds of token held, as the attack needs: the admin token goes to /rest/admin routes.
    await page.addInitScript(
      ({ token, adminToken, account, repository }) => {
        sessionStorage.setItem('cfghub.admin', JSON.stringify({ kind: 'admin', token: adminToken }));
        sessionStorage.setItem('cfghub.session', JSON.stringify({ kind: 'client', token, account, repository }));
      },
      { token, adminToken, account: ACCOUNT, repository: REPOSITORY },
    );
    page.on('request', (request: Request) => requests.push(request.url()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    dir?.remove();
  });

  /** Opens the console at `hash` in a fresh page load and waits until the page has settled. */
  const visit = async (hash: string) => {
    await page.goto('about:blank');
    requests = [];
    pageErrors.length = 0;
    await page.goto(`${server.url}/ui/${hash}`);
    await page.waitForLoadState('networkidle');
  };

  /** What the page asked of the server's API. */
  const apiRequests = () => requests.filter((url) => new URL(url).pathname.startsWith('/rest/'));

  it('asks for a repository named by a good address (the recording sees the requests)', async () => {
    await visit(`#/r/${ACCOUNT}/${REPOSITORY}/overview`);
    await page.getByRole('heading', { name: `${ACCOUNT}/${REPOSITORY}` }).waitFor();
    expect(apiRequests().some((url) => url.includes(`/${ACCOUNT}/${REPOSITORY}`))).toBe(true);
  });

  for (const { hash, name } of BAD_ADDRESSES) {
    it(`shows "Not a repository name" for ${hash.length > 60 ? `${hash.slice(0, 60)}…` : hash} and asks the server nothing`, async () => {
      await visit(hash);
      expect(apiRequests()).toEqual([]);
      for (const url of requests.map((full) => full.split('#')[0])) {
        expect(url).not.toContain(name);
        expect(decodeURIComponent(new URL(url).pathname)).not.toContain(name);
      }
      expect(pageErrors).toEqual([]);
      const notice = page.getByTestId('not-a-repository-name');
      await notice.waitFor();
      expect(await notice.textContent()).toMatch(/Not a repository name.*is not a repository name/);
    });
  }

  it('shows the message when the address changes to a bad name in the same page', async () => {
    await visit(`#/r/${ACCOUNT}/${REPOSITORY}/keys`);
    await page.getByRole('heading', { name: `${ACCOUNT}/${REPOSITORY}` }).waitFor();
    await page.waitForLoadState('networkidle');
    requests = [];
    await page.evaluate(() => (location.hash = '#/r/x/%2E%2E/overview'));
    await page.getByTestId('not-a-repository-name').waitFor();
    await page.waitForLoadState('networkidle');
    expect(apiRequests()).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
