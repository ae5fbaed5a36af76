/**
 * The console's schemas editor and its Preview step, in real headless Chromium against the real
 * server, checked with the real git: the schemas document edited and saved (one commit changing
 * schemas.yaml, only after the preview is confirmed); a schema existing values break refused in
 * the preview with the list of what breaks, and a save the server refuses shown the same way,
 * nothing written; a change of keys previewed context by context (before and after) with nothing
 * written until confirmed, and one commit once confirmed; a refused change's preview showing the
 * refusal, with no way to confirm it.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissingLine, chromiumPath, launchBrowser, screenshot, type Browser } from '../../support/browser.js';
import { cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { holdsFor } from '../../support/poll.js';

const REPO = 'acme/console-schemas';
const fixture = serverForFile();
let browser: Browser | undefined;
let page: Page;
let token: string;
let adminToken: string;
let gitdir: string;

async function made(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout.trim();
}

/** Every ref with its commit, and every file under objects/: what a write would change. */
function written(): { refs: string; objects: string[] } {
  const objects: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }))
      if (entry.isDirectory()) walk(join(folder, entry.name));
      else objects.push(join(folder, entry.name));
  };
  walk(join(gitdir, 'objects'));
  return { refs: git(gitdir, 'for-each-ref', '--format=%(refname) %(objectname)'), objects: objects.sort() };
}

const head = () => git(gitdir, 'rev-parse', 'refs/heads/main').trim();

/** Opens a tab of the repository with the console holding the client token and, when asked, the admin token. */
async function open(tab: string, { admin = false } = {}): Promise<void> {
  await page.goto(`${fixture.server.url}/ui/`);
  await page.evaluate(
    ({ token, adminToken }) => {
      sessionStorage.setItem(
        'cfghub.session',
        JSON.stringify({ kind: 'client', token, account: 'acme', repository: 'console-schemas' }),
      );
      if (adminToken) sessionStorage.setItem('cfghub.admin', JSON.stringify({ kind: 'admin', token: adminToken }));
      else sessionStorage.removeItem('cfghub.admin');
    },
    { token, adminToken: admin ? adminToken : undefined },
  );
  await page.goto(`${fixture.server.url}/ui/#/r/acme/console-schemas/${tab}`);
  await page.reload();
}

const schemasText = () => page.getByLabel('schemas.yaml');

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!!chromiumPath)('the schemas editor and the preview in the console', () => {
  beforeAll(async () => {
    await made('repo', 'create', REPO, '--context', 'Environment,Application,Instance');
    token = await made('token', 'create', REPO, '--name', 'editor');
    adminToken = await made('admin-token', 'create', '--name', 'console-admin');
    gitdir = gitdirOf(fixture.repos, REPO);
    const seed = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      {
        enableKeyCreation: true,
        data: [
          {
            key: 'db.port',
            vdt: 'Integer',
            values: [
              { context: '*;*;*', value: '5432' },
              { context: 'Production;Web;node-1', value: '6432' },
              { context: 'Production;Billing;node-7', value: '7432' },
            ],
          },
          { key: 'db.host', values: [{ context: 'Production;*;*', value: 'db.prod' }] },
        ],
      },
      { 'Client-Token': token },
    );
    expect(seed.status, reasonOf(seed)).toBe(200);
    browser = await launchBrowser();
    page = await browser.context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('edits the schemas document and saves it, after its preview, as one commit changing schemas.yaml', async () => {
    const before = head();
    await open('schemas', { admin: true });
    await page.getByTestId('schemas-summary').waitFor();
    expect(await page.getByTestId('schemas-summary').textContent()).toContain('0 key schemas');
    await schemasText().fill(
      'keys:\n  - key: db.port\n    schema: {type: integer, minimum: 1, maximum: 65535}\n' +
        'rules:\n  - context: Production;*;*\n    resolves: [db.host]\n',
    );
    await page.getByLabel('Change comment').fill('Ports and hosts');
    await page.getByRole('button', { name: 'Preview the schemas change' }).click();
    await page.getByTestId('preview-summary').waitFor();
    expect(await page.getByTestId('preview-summary').textContent()).toContain('the schemas document changed');
    const previewed = written();
    await screenshot(page, 'schemas');
    await holdsFor(300, () => expect(written()).toEqual(previewed)); // the preview wrote nothing

    await page.getByRole('button', { name: 'Confirm and save the schemas' }).click();
    await page.getByTestId('schemas-saved').waitFor();
    const after = head();
    expect(await page.getByTestId('schemas-saved').textContent()).toContain(after.slice(0, 12));
    expect(git(gitdir, 'rev-list', `${before}..${after}`).trim().split('\n')).toHaveLength(1);
    expect(git(gitdir, 'diff', '--name-only', before, after).trim()).toBe('schemas.yaml');
    expect(git(gitdir, 'log', '-1', '--format=%s', after).trim()).toBe('Ports and hosts');
    expect(git(gitdir, 'log', '-1', '--format=%B', after)).toContain('Application-Name: cfghub-console');
    const stored = git(gitdir, 'show', `${after}:schemas.yaml`);
    expect(stored).toContain('maximum: 65535');
    expect(stored).toContain('resolves:');
    // The editor shows the document as the server now holds it.
    await expect.poll(() => page.getByTestId('schemas-summary').textContent()).toContain('1 key schemas');
    expect(await schemasText().inputValue()).toContain('maximum: 65535');
  });

  it('refuses a schema existing values break, listing what breaks, and writes nothing', async () => {
    const before = written();
    await open('schemas', { admin: true });
    await expect.poll(() => schemasText().inputValue()).toContain('maximum: 65535');
    await schemasText().fill('keys:\n  - key: db.port\n    schema: {type: integer, maximum: 1024}\n');
    await page.getByRole('button', { name: 'Preview the schemas change' }).click();
    const refusal = page.getByTestId('preview-refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("the change breaks the repository's schemas (3 breaks)");
    expect((await refusal.getByTestId('breaks').locator('li').allTextContents()).sort()).toEqual([
      'key db.port at *;*;* breaks schemas.yaml keys[0] (db.port): (value): must be <= 1024',
      'key db.port at Production;Billing;node-7 breaks schemas.yaml keys[0] (db.port): (value): must be <= 1024',
      'key db.port at Production;Web;node-1 breaks schemas.yaml keys[0] (db.port): (value): must be <= 1024',
    ]);
    expect(await page.getByRole('button', { name: 'Confirm and save the schemas' }).isDisabled()).toBe(true);
    expect(written()).toEqual(before);
    await screenshot(page, 'schemas-refused');
  });

  it('shows the server refusing a save it previewed when values changed in between, and writes nothing', async () => {
    await open('schemas', { admin: true });
    await expect.poll(() => schemasText().inputValue()).toContain('maximum: 65535');
    await schemasText().fill('keys:\n  - key: db.port\n    schema: {type: integer, maximum: 9000}\n');
    await page.getByRole('button', { name: 'Preview the schemas change' }).click();
    await page.getByTestId('preview-summary').waitFor();
    // Another writer, between the preview and the confirmation: a value the new schema breaks.
    const other = await pushTo(
      fixture.server.url,
      `/rest/push/${REPO}`,
      { data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: '9500' }] }] },
      { 'Client-Token': token },
    );
    expect(other.status, reasonOf(other)).toBe(200);
    const before = written();
    await page.getByRole('button', { name: 'Confirm and save the schemas' }).click();
    const refusal = page.getByTestId('schemas-refusal');
    await refusal.waitFor();
    expect(await refusal.getByTestId('breaks').locator('li').allTextContents()).toEqual([
      'key db.port at Staging;*;* breaks schemas.yaml keys[0] (db.port): (value): must be <= 9000',
    ]);
    expect(written()).toEqual(before);
    expect(git(gitdir, 'show', 'refs/heads/main:schemas.yaml')).toContain('maximum: 65535');
  });

  it('previews a change of keys context by context, writes nothing until confirmed, then commits once', async () => {
    const before = head();
    await open('keys');
    await page.getByRole('button', { name: 'Edit db.host for Production;*;*' }).click();
    await page.getByLabel('Value').fill('db2.prod');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('link', { name: /Review and push 1 change/ }).click();
    await page.getByLabel('Change comment').fill('New production database');
    const previewed = written();
    await page.getByRole('button', { name: 'Preview 1 change' }).click();
    await page.getByTestId('preview-summary').waitFor();
    expect(await page.getByTestId('preview-summary').textContent()).toMatch(
      /1 key changed; 2 of \d+ contexts would read something else/,
    );
    for (const context of ['Production;Web;node-1', 'Production;Billing;node-7']) {
      const row = page.locator(`tr[data-context="${context}"][data-key="db.host"]`);
      expect(await row.locator('td.before').textContent()).toBe('db.prod');
      expect(await row.locator('td.after').textContent()).toBe('db2.prod');
    }
    await screenshot(page, 'preview');
    // Nothing is written while the preview waits for the user's word, nor when they go back.
    await holdsFor(500, () => expect(written()).toEqual(previewed));
    await page.getByRole('button', { name: 'Back to the changes' }).click();
    expect(await page.getByTestId('preview').count()).toBe(0);
    expect(written()).toEqual(previewed);

    await page.getByRole('button', { name: 'Preview 1 change' }).click();
    await page.getByRole('button', { name: 'Confirm and push 1 change' }).click();
    await page.getByTestId('pushed').waitFor();
    const after = head();
    expect(git(gitdir, 'rev-list', `${before}..${after}`).trim().split('\n')).toHaveLength(1);
    expect(git(gitdir, 'log', '-1', '--format=%s', after).trim()).toBe('New production database');
    await holdsFor(300, () => expect(head()).toBe(after)); // and only once
  });

  it("shows a refused change's refusal in its preview, and cannot confirm it", async () => {
    await open('keys');
    await page.getByRole('button', { name: 'Edit db.port for Production;Web;node-1' }).click();
    await page.getByLabel('Value').fill('70000');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('link', { name: /Review and push 1 change/ }).click();
    await page.getByLabel('Change comment').fill('Too far');
    const before = written();
    await page.getByRole('button', { name: 'Preview 1 change' }).click();
    const refusal = page.getByTestId('preview-refusal');
    await refusal.waitFor();
    expect(await refusal.getByTestId('breaks').locator('li').allTextContents()).toEqual([
      'key db.port at Production;Web;node-1 breaks schemas.yaml keys[0] (db.port): (value): must be <= 65535',
    ]);
    expect(await page.getByRole('button', { name: 'Confirm and push 1 change' }).isDisabled()).toBe(true);
    expect(written()).toEqual(before);
  });
});
