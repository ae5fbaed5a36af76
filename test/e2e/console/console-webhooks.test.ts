/**
 * The console's Webhooks tab in a real headless Chromium against the real server and a real
 * receiver: with an admin token it lists the repository's hooks (never a secret) and the delivery
 * log with each delivery's status and attempts, and its Redeliver button sends a delivery again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, type Browser } from '../../support/browser.js';
import { cliOk, headOf, pushTo, reasonOf, startTestServer, tempDir, type TestServer } from '../../support/harness.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/hooked';
const SECRET = 'console-hook-secret-81b2';

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!!chromiumPath)('the Webhooks tab of the console', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: TestServer;
  let receiver: Server;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  const received: string[] = [];

  beforeAll(async () => {
    dir = tempDir();
    cliOk(dir.path, 'repo', 'create', REPO, '--context', 'Environment', '--token-free-pull', '--token-free-push');
    adminToken = cliOk(dir.path, 'admin-token', 'create', '--name', 'console-admin').trim();
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(String(req.headers['x-cfghub-delivery']));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    server = await startTestServer(dir.path);
    const added = await fetch(`${server.url}/rest/admin/repositories/${REPO}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`, secret: SECRET }),
    });
    expect(added.status).toBe(201);
    const pushed = await pushTo(server.url, `/rest/push/${REPO}`, {
      changeComment: 'first',
      enableKeyCreation: true,
      data: [{ key: 'a', values: [{ context: '*', value: '1' }] }],
    });
    expect(pushed.status, reasonOf(pushed)).toBe(200);
    await until(() => received.length === 1, 'the first delivery');
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    receiver?.closeAllConnections();
    receiver?.close();
    dir?.remove();
  });

  it('says webhooks need an admin token when the user holds none', async () => {
    await page.goto(`${server.url}/ui/#/r/acme/hooked/webhooks`);
    expect(await page.getByTestId('webhooks-need-admin').textContent()).toContain('need an admin token');
  });

  it('lists the hooks and the delivery log, and redelivers from it', async () => {
    await page.evaluate(
      (token) => sessionStorage.setItem('cfghub.admin', JSON.stringify({ kind: 'admin', token })),
      adminToken,
    );
    await page.reload();
    const delivered = page.locator('tr[data-status="delivered"]');
    await delivered.first().waitFor();
    expect(await page.getByTestId('webhooks').textContent()).toContain('/in');
    expect(await page.content()).not.toContain(SECRET);
    expect(await delivered.first().textContent()).toContain(headOf(dir.path, REPO).slice(0, 12));
    expect(await delivered.first().textContent()).toContain('HTTP 204');
    await page.getByRole('button', { name: `Redeliver ${headOf(dir.path, REPO).slice(0, 12)}` }).click();
    await until(() => received.length === 2, 'the redelivery to reach the receiver');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => page.locator('tr[data-delivery]').count()).toBe(2);
    expect(received[1]).not.toBe(received[0]);
  });
});
