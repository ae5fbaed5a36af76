/**
 * The web console in a real headless Chromium against the real server: sign in with a
 * token, browse a repository, pick a context and see what its pull gives, change a value with a
 * comment and find the commit in the history and in `git log`, see a refused push's reason beside
 * the change it names, revert the change. The same run saves screenshots of the main screens, and
 * checks labels, keyboard focus and a narrow window. The screenshots go to dist/screenshots/, so
 * `npm test` never rewrites a tracked file; `UPDATE_SCREENSHOTS=1` writes them to docs/images/
 * instead, the pictures the README and docs/web-console.md show.
 *
 * Without a Chromium this file says so in one line and skips; with CI=true it fails instead.
 */
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoRepository } from '../../../src/service/admin/demo.js';
import { RepositoryRegistry } from '../../../src/disk/registry.js';
import { browserMissingLine, chromiumPath, launchBrowser, screenshot, type Browser } from '../../support/browser.js';
import {
  cliOk,
  cliWithInput,
  createRepo,
  git,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';

const REPO = 'acme/shop';
const PASSWORD = 'group-password-1';

if (!chromiumPath && process.env.CI !== 'true') console.log(browserMissingLine);

describe.runIf(!chromiumPath && process.env.CI === 'true')('the browser under CI', () => {
  it('is installed (CI=true makes a missing Chromium a failure)', () => {
    expect.fail(browserMissingLine);
  });
});

describe.runIf(!!chromiumPath)('the web console in headless Chromium', () => {
  let dir: ReturnType<typeof tempDir>;
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let token: string;
  let adminToken: string;
  let gitdir: string;
  /** Script errors and console errors in the page: a screen that throws fails the test. */
  const pageErrors: string[] = [];

  const shot = (name: string) => screenshot(page, name);

  /** Every form control has a label (its own <label>, or aria-label), every button a name. */
  const expectLabelled = async () => {
    const unlabelled = await page.evaluate(() => {
      const out: string[] = [];
      for (const el of document.querySelectorAll<HTMLInputElement>('input, select, textarea')) {
        if (!(el.labels?.length || el.getAttribute('aria-label'))) out.push(el.outerHTML.slice(0, 80));
      }
      for (const el of document.querySelectorAll<HTMLElement>('button, a')) {
        if (!(el.textContent?.trim() || el.getAttribute('aria-label'))) out.push(el.outerHTML.slice(0, 80));
      }
      return out;
    });
    expect(unlabelled).toEqual([]);
  };

  /** A tab of the repository screen. */
  const tab = (name: string) =>
    page.getByRole('navigation', { name: 'Repository' }).getByRole('link', { name, exact: true });

  const gitSubject = () => git(gitdir, 'log', '-1', '--format=%s', 'refs/heads/main').trim();

  beforeAll(async () => {
    dir = tempDir();
    const registry = new RepositoryRegistry(dir.path);
    await ensureDemoRepository(registry);
    registry.close();
    createRepo(dir.path, REPO, 'Environment,Application,Instance', '--description', 'The web shop');
    token = cliOk(dir.path, 'token', 'create', REPO, '--name', 'console').trim();
    adminToken = cliOk(dir.path, 'admin-token', 'create', '--name', 'console-admin').trim();
    const group = await cliWithInput(dir.path, `${PASSWORD}\n`, 'group', 'create', REPO, 'secrets');
    expect(group.code, group.stderr).toBe(0);
    gitdir = gitdirOf(dir.path, REPO);
    server = await startTestServer(dir.path);
    const seeded = await pushTo(
      server.url,
      `/rest/push/${REPO}`,
      {
        changeComment: 'Initial shop configuration',
        enableKeyCreation: true,
        data: [
          {
            key: 'db.host',
            readme: 'Database host',
            values: [
              { context: '*;*;*', value: 'localhost' },
              { context: 'Production;*;*', value: 'db1.prod' },
              { context: 'Production;Web;*', value: 'db-web.prod' },
            ],
          },
          { key: 'db.port', vdt: 'Integer', values: [{ context: '*;*;*', value: 5432 }] },
          {
            key: 'log.level',
            readme: 'Root log level',
            values: [
              { context: '*;*;*', value: 'info' },
              { context: 'Production;*;*', value: 'warn' },
              { context: 'Development;*;*', value: 'debug' },
              { context: 'Staging;*;*', value: 'trace', active: false },
            ],
          },
          { key: 'search.legacy', vdt: 'Boolean', deprecated: true, values: [{ context: '*;*;*', value: false }] },
          {
            key: 'db.password',
            securityGroup: 'secrets',
            password: PASSWORD,
            values: [{ context: 'Production;*;*', value: 's3cret-value' }],
          },
          {
            file: 'conf/app.properties',
            context: '*;*;*',
            content: 'host=${ db.host }\nport=${ db.port }\nlog.level=${ log.level }\n',
          },
          { key: 'shop.name', values: [{ context: 'Production;Web;node-1', value: 'Shop (node 1)' }] },
        ],
      },
      { 'Client-Token': token, 'Application-Name': 'seed' },
    );
    expect(seeded.status, reasonOf(seeded)).toBe(200);
    cliOk(dir.path, 'tag', 'create', REPO, 'v1', '--comment', 'first release');
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
  }, 120_000);

  afterEach(() => {
    // A refused push, a 401 or 403 are answers the console expects; the browser logs those requests as failed loads.
    const unexpected = pageErrors.splice(0).filter((text) => !/status of (304|401|403|409)/.test(text));
    expect(unexpected).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    dir?.remove();
  });

  it('serves the console at /ui/ and lists the repositories, with a filter', async () => {
    await page.goto(`${server.url}/`);
    expect(page.url()).toBe(`${server.url}/ui/`);
    await page.getByRole('heading', { name: 'Repositories' }).waitFor();
    const rows = page.locator('table.repos tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(() => page.locator('table.repos').textContent()).toContain('The web shop');
    await expectLabelled();
    await shot('repositories');
    await page.getByLabel('Filter repositories').fill('shop');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('acme/shop');
    await page.getByLabel('Filter repositories').fill('nothing-like-this');
    await page.getByText('No repository matches').waitFor();
  });

  it('browses a token-free repository without signing in, and shows the server message for one that needs a token', async () => {
    await page.goto(`${server.url}/ui/#/r/demo/HowItWorks/keys`);
    await page.locator('tr[data-key="db.host"]').waitFor();
    expect(await page.locator('tr[data-key="db.host"]').textContent()).toContain('db.prod.example.com');

    await page.goto(`${server.url}/ui/#/r/acme/shop/keys`);
    const answer = await fetch(`${server.url}/rest/info/${REPO}`);
    const expected = (await answer.json()) as { error: string; message: string };
    expect(answer.status).toBe(403);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(`${answer.status} ${expected.error} ${expected.message}`);
  });

  it('signs in with a token kept in session storage, never in the URL', async () => {
    await page.getByRole('link', { name: 'Sign in', exact: true }).first().click();
    await page.getByLabel('Client token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('Sign-in failed');

    await page.getByLabel('Client token').fill(token);
    await page.getByLabel('Client token').press('Enter'); // the keyboard submits the form
    await page.getByTestId('signed-in').waitFor();
    expect(await page.getByTestId('signed-in').textContent()).toContain('acme/shop');
    await page.locator('tr[data-key="db.host"]').waitFor();
    expect(page.url()).not.toContain(token);
    const stored = await page.evaluate(() => sessionStorage.getItem('cfghub.session'));
    expect(JSON.parse(stored!)).toMatchObject({ kind: 'client', token, account: 'acme', repository: 'shop' });
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(token);
  });

  it('shows keys with values per context, type, readme, deprecation and locked values, filtered by text and context', async () => {
    const host = page.locator('tr[data-key="db.host"]');
    expect(await host.textContent()).toContain('Database host');
    expect(await host.locator('li').count()).toBe(3);
    expect(await page.locator('tr[data-key="db.port"]').textContent()).toContain('Integer');
    expect(await page.locator('tr[data-key="search.legacy"]').textContent()).toContain('deprecated');
    const secret = await page.locator('tr[data-key="db.password"]').textContent();
    expect(secret).toContain('locked');
    expect(secret).toContain('group secrets');
    expect(secret).not.toContain('s3cret-value');
    expect(await page.locator('tr[data-key="log.level"] li.inactive').textContent()).toContain('Staging;*;*');

    await page.getByLabel('Filter keys').fill('db.');
    await expect.poll(() => page.locator('table.keys tbody tr').count()).toBe(3);
    await page.getByLabel('Filter keys').fill('');
    await page.getByLabel('Environment').selectOption('Development');
    // Values that apply to Development: wildcards and Development's own.
    await expect.poll(() => host.locator('li').count()).toBe(1);
    expect(await page.locator('tr[data-key="log.level"]').textContent()).toContain('debug');
    expect(await page.locator('tr[data-key="shop.name"]').count()).toBe(0);
    await page.getByLabel('Environment').selectOption('*');
    await expect.poll(() => host.locator('li').count()).toBe(3);
    await expectLabelled();
    await shot('keys');
  });

  it('resolves a context chosen level by level: the pull, the winning contexts and the rendered file', async () => {
    await tab('Resolved').click();
    await page.getByLabel('Environment').selectOption('Production');
    await page.getByLabel('Application').selectOption('Web');
    await page.getByLabel('Instance').selectOption('node-1');
    await expect.poll(() => page.getByTestId('pulled-context').textContent()).toBe('Production;Web;node-1');
    const row = (key: string) => page.locator(`table.resolved tr[data-key="${key}"]`);
    expect(await row('db.host').textContent()).toContain('db-web.prod');
    expect(await row('db.host').textContent()).toContain('Production;Web;*');
    expect(await row('log.level').textContent()).toContain('warn');
    expect(await row('log.level').textContent()).toContain('Production;*;*');
    expect(await row('shop.name').textContent()).toContain('Shop (node 1)');
    expect(await row('db.password').textContent()).toContain('locked');
    expect(await row('db.host').textContent()).toContain('Database host'); // the readme
    expect(await row('search.legacy').textContent()).toContain('deprecated');
    // What an application of that context pulls, compared with the API itself.
    const pulled = await fetch(`${server.url}/rest/pull/${REPO}`, {
      headers: { 'Client-Token': token, Context: 'Production;Web;node-1' },
    }).then((r) => r.json() as Promise<{ files: Record<string, { content: string }> }>);
    const file = page.getByRole('region', { name: 'File conf/app.properties' });
    expect(await file.locator('pre').textContent()).toBe(pulled.files['conf/app.properties'].content);
    expect(pulled.files['conf/app.properties'].content).toContain('host=db-web.prod');
    await expectLabelled();
    await shot('resolved');
  });

  it('explains on demand why a key resolves so: its candidates, which won and why, as /rest/explain says', async () => {
    // Still on Production;Web;node-1. log.level has four values: two qualify, one is inactive.
    const row = page.locator('table.resolved tr[data-key="log.level"]');
    expect(await row.getByTestId('won-by').textContent()).toBe('Production;*;*');
    await row.getByRole('button', { name: /^Why\?/ }).click();
    const panel = page.locator('tr[data-explains="log.level"]').getByTestId('explanation');
    await panel.getByTestId('explain-winner').waitFor();
    const answer = await fetch(`${server.url}/rest/explain/${REPO}`, {
      headers: { 'Client-Token': token, Context: 'Production;Web;node-1', KeyName: 'log.level' },
    }).then(
      (r) =>
        r.json() as Promise<{
          resolved: { context: string; weight: number };
          values: Array<{ context: string; qualifies: boolean }>;
        }>,
    );
    expect(answer.resolved.context).toBe('Production;*;*');
    expect(await panel.getByTestId('explain-winner').textContent()).toBe(answer.resolved.context);
    expect(await panel.textContent()).toContain(`weight ${answer.resolved.weight}`);
    const candidate = (context: string) => panel.locator(`tr[data-candidate="${context}"]`);
    expect(await panel.locator('tr[data-candidate]').count()).toBe(answer.values.length);
    expect(
      answer.values
        .filter((v) => v.qualifies)
        .map((v) => v.context)
        .sort(),
    ).toEqual(['*;*;*', 'Production;*;*']);
    expect(await candidate('Production;*;*').textContent()).toContain('wins');
    expect(await candidate('*;*;*').textContent()).toContain('qualifies, lighter');
    expect(await candidate('Development;*;*').textContent()).toContain('does not qualify');
    expect(await candidate('Staging;*;*').textContent()).toMatch(/inactive.*does not qualify/s);
    // With the repository's token: whether it could change the value, and what decides.
    expect(await panel.getByTestId('explain-write').textContent()).toContain('can change this value');
    await expectLabelled();
    await shot('explain');
    await row.getByRole('button', { name: /^Hide why/ }).click();
    await expect.poll(() => page.locator('tr[data-explains="log.level"]').count()).toBe(0);
  });

  it('changes a value with a comment: one commit, in the history and in git log', async () => {
    const before = headOf(dir.path, REPO);
    await tab('Keys').click();
    await page.getByRole('button', { name: 'Edit log.level for Production;*;*' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('edit-value'); // focus moves to the editor
    await page.getByLabel('Value').fill('error');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('link', { name: /Review and push 1 change/ }).click();
    await page.getByLabel('Change comment').fill('Quieter production logs');
    await expectLabelled();
    await page.getByRole('button', { name: 'Preview 1 change' }).click();
    await page.getByTestId('preview-summary').waitFor();
    await page.getByRole('button', { name: 'Confirm and push 1 change' }).click();
    await page.getByTestId('pushed').waitFor();

    const head = headOf(dir.path, REPO);
    expect(head).not.toBe(before);
    expect(git(gitdir, 'rev-parse', `${head}~1`).trim()).toBe(before);
    expect(gitSubject()).toBe('Quieter production logs');
    expect(git(gitdir, 'log', '-1', '--format=%B', 'refs/heads/main')).toContain('Application-Name: cfghub-console');
    expect(await page.getByTestId('pushed').textContent()).toContain(head.slice(0, 12));

    await page.getByRole('link', { name: 'See it in the history' }).click();
    const newest = page.locator('li.commit').first();
    await newest.waitFor();
    expect(await newest.getAttribute('data-commit')).toBe(head);
    const text = await newest.textContent();
    expect(text).toContain('Quieter production logs');
    expect(text).toContain('cfghub-console');
    expect(text).toContain('token console');
    const when = await newest.locator('time').getAttribute('datetime');
    expect(Date.parse(when!)).toBe(Date.parse(git(gitdir, 'log', '-1', '--format=%cI', 'refs/heads/main').trim()));
    await newest.locator('summary').click();
    expect(await newest.locator('.changes').textContent()).toMatch(/log\.level.*Production;\*;\*.*warn.*error/s);
    await expectLabelled();
    await shot('history');
  });

  it('collects a new key, a file edit, a deactivation and a deletion into one push: one commit', async () => {
    const before = headOf(dir.path, REPO);
    await tab('Keys').click();
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Key name').fill('cache.ttl');
    await page.getByLabel('Type').selectOption('Integer');
    await page.getByLabel('Readme').fill('Seconds to keep an answer');
    await page.locator('#edit-context-0').fill('Production');
    await page.getByLabel('Value').fill('300');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('button', { name: 'Add value to db.port' }).click();
    await page.locator('#edit-context-0').fill('Staging');
    await page.getByLabel('Value', { exact: true }).fill('6543');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('button', { name: 'Edit file conf/app.properties for *;*;*' }).click();
    await page.getByLabel('Content').fill('host=${ db.host }\nttl=${ cache.ttl }\n');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('button', { name: 'Deactivate log.level for Development;*;*' }).click();
    await page.getByRole('button', { name: 'Delete search.legacy for *;*;*' }).click();
    await page.getByRole('link', { name: /Review and push 5 changes/ }).click();
    await page.getByLabel('Change comment').fill('Cache settings');
    await page.getByRole('button', { name: 'Preview 5 changes' }).click();
    await page.getByRole('button', { name: 'Confirm and push 5 changes' }).click();
    await page.getByTestId('pushed').waitFor();

    expect(git(gitdir, 'rev-list', '--count', `${before}..refs/heads/main`).trim()).toBe('1');
    expect(gitSubject()).toBe('Cache settings');
    const exported = await fetch(`${server.url}/rest/export/${REPO}`, { headers: { 'Client-Token': token } }).then(
      (r) =>
        r.json() as Promise<{
          data: Array<{
            key?: string;
            file?: string;
            vdt?: string;
            readme?: string;
            content?: string;
            values?: Array<{ context: string; value: unknown; active: boolean }>;
          }>;
        }>,
    );
    const key = (name: string) => exported.data.find((e) => e.key === name)!;
    expect(key('cache.ttl')).toMatchObject({
      vdt: 'Integer',
      readme: 'Seconds to keep an answer',
      values: [{ context: 'Production;*;*', value: '300', active: true }],
    });
    expect(key('log.level').values!.find((v) => v.context === 'Development;*;*')).toMatchObject({
      value: 'debug',
      active: false,
    });
    expect(key('search.legacy').values).toEqual([]);
    expect(key('db.port').values!.find((v) => v.context === 'Staging;*;*')).toMatchObject({
      value: '6543',
      active: true,
    });
    expect(exported.data.find((e) => e.file === 'conf/app.properties')!.content).toBe(
      'host=${ db.host }\nttl=${ cache.ttl }\n',
    );
  });

  it('compares two points, also as what one context pulls differently', async () => {
    await tab('History').click();
    await page.getByText('Compare two points').click();
    await page.getByLabel(/^From/).fill('v1');
    await page.getByLabel(/Also show what an application/).check();
    await page.locator('#diff-context-0').selectOption('Production');
    await page.getByRole('button', { name: 'Compare' }).click();
    const resolved = page.getByRole('region', { name: 'Resolved difference' });
    await resolved.waitFor();
    expect(await resolved.textContent()).toMatch(/log\.level.*modified.*warn.*error/s);
    // A commit id is a point too: v1's commit gives the same difference.
    const v1 = git(gitdir, 'rev-parse', 'v1^{commit}').trim();
    await page.getByLabel(/^From/).fill(v1);
    const answered = page.waitForResponse(
      (r) => r.url().includes('/rest/diff/') && r.request().headers()['from'] === v1,
    );
    await page.getByRole('button', { name: 'Compare' }).click();
    expect((await answered).status()).toBe(200);
    await expect.poll(() => page.locator('.diff-result').textContent()).toContain(`From ${v1.slice(0, 12)} to`);
    expect(await resolved.textContent()).toMatch(/log\.level.*modified.*warn.*error/s);
    await page.getByText('Compare two points').click(); // fold it again
  });

  it('shows a refused push with its reason beside the change it names, and changes nothing', async () => {
    const before = headOf(dir.path, REPO);
    await tab('Keys').click();
    await page.getByRole('button', { name: 'Edit db.host for Production;*;*' }).click();
    await page.getByLabel('Value').fill('db2.prod');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('button', { name: 'Edit db.port for *;*;*' }).click();
    await page.getByLabel('Value').fill('not-a-number');
    await page.getByRole('button', { name: 'Add to changes' }).click();
    await page.getByRole('link', { name: /Review and push 2 changes/ }).click();
    await page.getByLabel('Change comment').fill('Move the database');
    await page.getByRole('button', { name: 'Preview 2 changes' }).click();
    await page.getByTestId('preview-refusal').waitFor();

    // The reason as the server gave it, beside the second change (data[1]).
    const direct = await pushTo(
      server.url,
      `/rest/push/${REPO}`,
      { data: [{ key: 'db.port', values: [{ context: '*;*;*', value: 'not-a-number' }] }] },
      { 'Client-Token': token },
    );
    expect(direct.status).toBe(304);
    const here = page.locator('ol.pending li[data-index="1"]').getByTestId('refusal-here');
    expect(await here.textContent()).toContain('not an Integer');
    expect(await page.getByTestId('preview-refusal').textContent()).toContain('data[1]');
    expect(await page.getByRole('button', { name: 'Confirm and push 2 changes' }).isDisabled()).toBe(true);
    expect(await page.locator('ol.pending li[data-index="0"]').getByTestId('refusal-here').count()).toBe(0);
    expect(headOf(dir.path, REPO)).toBe(before);
    await shot('refusal');

    await page.getByRole('button', { name: /Remove change 2/ }).click();
    await page.getByRole('button', { name: /Remove change 1/ }).click();
    await page.getByText('No changes collected').waitFor();
  });

  it('reverts the change from the history: a new commit, and the pull is as before', async () => {
    const changed = git(gitdir, 'log', '-1', '--format=%H', '--grep=Quieter production logs', 'refs/heads/main').trim();
    await tab('History').click();
    const item = page.locator(`li.commit[data-commit="${changed}"]`);
    await item.waitFor();
    await item.getByRole('button', { name: /^Revert commit/ }).click();
    await item.getByRole('button', { name: 'Preview the revert' }).click();
    await item.getByTestId('preview-summary').waitFor();
    await item.getByRole('button', { name: 'Confirm revert' }).click();
    await item.getByText('Reverted as commit').waitFor();
    expect(gitSubject()).toBe('Revert "Quieter production logs"');
    const pulled = await fetch(`${server.url}/rest/pull/${REPO}`, {
      headers: { 'Client-Token': token, Context: 'Production;Web;node-1' },
    }).then((r) => r.json() as Promise<{ properties: Record<string, { val: unknown }> }>);
    expect(pulled.properties['log.level'].val).toBe('warn');
    await expect
      .poll(() => page.locator('li.commit').first().textContent())
      .toContain('Revert "Quieter production logs"');
  });

  it('shows settings, tags and security groups', async () => {
    await tab('Settings, tags, groups').click();
    await page.getByText('Environment › Application › Instance').waitFor();
    const tags = page.getByRole('region', { name: 'Tags' });
    expect(await tags.textContent()).toContain('first release');
    const groups = page.getByRole('region', { name: 'Security groups' });
    await expect.poll(() => groups.locator('tbody').textContent()).toContain('secrets');
    await expectLabelled();
    await shot('settings');

    // Restore the tag: one new commit whose keys and files are those of v1.
    await tags.getByRole('button', { name: /^Restore/ }).click();
    await tags.getByTestId('preview-summary').waitFor();
    await tags.getByRole('button', { name: 'Confirm restore of v1' }).click();
    await tags.getByText('Restored as commit').waitFor();
    expect(gitSubject()).toBe('Restore v1');
    expect(git(gitdir, 'diff', '--stat', 'v1', 'refs/heads/main', '--', 'keys', 'files').trim()).toBe('');
  });

  it('explains that creating a tag needs an admin token, and a client token cannot stand in for one', async () => {
    // Signed in with the client token only: the control says what it needs, and offers no form.
    const tags = page.getByRole('region', { name: 'Tags' });
    expect(await tags.getByTestId('create-tag-needs-admin').textContent()).toContain('needs an admin token');
    expect(await page.getByRole('button', { name: 'Create tag' }).count()).toBe(0);
    // The client token offered as an admin token is refused by the server, with its message.
    await page.getByRole('link', { name: 'Add a token' }).click();
    await page.getByLabel('For the administration of every repository').check();
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const direct = await pushTo(
      server.url,
      `/rest/admin/repositories/${REPO}/tags`,
      { name: 'by-client' },
      { Authorization: `Bearer ${token}` },
    );
    expect(direct.status).toBe(401);
    expect(await alert.textContent()).toContain(`401 unauthorized ${(direct.json as { message: string }).message}`);
    expect(await page.evaluate(() => sessionStorage.getItem('cfghub.admin'))).toBeNull();
    expect(git(gitdir, 'tag', '-l').trim().split('\n')).toEqual(['v1']);
  });

  it('signs in with an admin token as well, lists every repository and creates a tag at the head, seen by git', async () => {
    await page.getByLabel('Admin token').fill(adminToken);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByTestId('admin-signed-in').waitFor();
    await page.getByRole('heading', { name: 'Repositories' }).waitFor();
    expect(await page.getByTestId('listing-source').textContent()).toContain('Every repository');
    await expect.poll(() => page.locator('table.repos tbody tr').count()).toBe(2);
    // Kept in session storage beside the client token, never in a URL.
    expect(page.url()).not.toContain(adminToken);
    expect(JSON.parse((await page.evaluate(() => sessionStorage.getItem('cfghub.admin')))!)).toEqual({
      kind: 'admin',
      token: adminToken,
    });
    expect(JSON.parse((await page.evaluate(() => sessionStorage.getItem('cfghub.session')))!)).toMatchObject({ token });
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(adminToken);

    await page.goto(`${server.url}/ui/#/r/acme/shop/overview`);
    const tags = page.getByRole('region', { name: 'Tags' });
    await page.getByLabel('Tag name').fill('v2');
    await page.getByLabel(/^Comment/).fill('after the console changes');
    await expectLabelled();
    await page.getByRole('button', { name: 'Create tag' }).click();
    await page.getByTestId('tag-created').waitFor();
    const head = headOf(dir.path, REPO);
    // The real git: the tag exists and points at the head's commit.
    expect(git(gitdir, 'tag', '-l').trim().split('\n')).toEqual(['v1', 'v2']);
    expect(git(gitdir, 'for-each-ref', '--format=%(*objectname)%(objectname)', 'refs/tags/v2').trim()).toContain(head);
    expect(git(gitdir, 'rev-parse', 'v2^{commit}').trim()).toBe(head);
    expect(await page.getByTestId('tag-created').textContent()).toContain(head.slice(0, 12));
    await expect.poll(() => tags.locator('tbody').textContent()).toContain('after the console changes');
    await shot('create-tag');

    // A taken name: the server's refusal, beside the name field, and nothing changes.
    await page.getByLabel('Tag name').fill('v2');
    await page.getByRole('button', { name: 'Create tag' }).click();
    const refusal = page.getByTestId('tag-refusal');
    await refusal.waitFor();
    const again = await pushTo(
      server.url,
      `/rest/admin/repositories/${REPO}/tags`,
      { name: 'v2' },
      { Authorization: `Bearer ${adminToken}` },
    );
    expect(again.status).toBe(409);
    expect(await refusal.textContent()).toContain((again.json as { message: string }).message);
    expect(await page.getByLabel('Tag name').getAttribute('aria-describedby')).toBe('tag-name-error');
    expect(git(gitdir, 'rev-parse', 'v2^{commit}').trim()).toBe(head);
  });

  it('is usable with the keyboard alone', async () => {
    await page.goto(`${server.url}/ui/`);
    await page.getByRole('heading', { name: 'Repositories' }).waitFor();
    await page.locator('table.repos').waitFor();
    // Tab from the top reaches the filter, then the repository links; Enter opens one.
    const focusable: string[] = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      focusable.push(
        await page.evaluate(
          () => (document.activeElement as HTMLElement | null)?.id || document.activeElement?.textContent?.trim() || '',
        ),
      );
      if (focusable.at(-1) === 'demo/HowItWorks') break;
    }
    expect(focusable).toContain('repo-filter');
    expect(focusable.at(-1)).toBe('demo/HowItWorks');
    await page.keyboard.press('Enter');
    await page.locator('tr[data-key="db.host"]').waitFor();
    expect(page.url()).toContain('#/r/demo/HowItWorks/keys');
  });

  it('fits a narrow window without sideways scrolling of the page', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${server.url}/ui/#/r/acme/shop/keys`);
    await page.locator('tr[data-key="db.host"]').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot('narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('with an admin token alone, shows a private repository through the admin API: settings, tags with commits, groups', async () => {
    await page.goto(`${server.url}/ui/#/r/acme/shop/overview`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    const overview = page.getByTestId('admin-overview');
    await overview.waitFor();
    expect(await page.getByRole('alert').first().textContent()).toContain('403'); // the public API's refusal, as it is
    const v2 = overview.locator('tr[data-tag="v2"]');
    await v2.waitFor();
    expect(await v2.textContent()).toContain(git(gitdir, 'rev-parse', 'v2^{commit}').trim().slice(0, 12));
    await expect.poll(() => overview.textContent()).toContain('secrets');
    expect(await overview.getByRole('button', { name: 'Create tag' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Sign out (admin)' }).click();
    await expect.poll(() => page.getByTestId('admin-overview').count()).toBe(0);
    expect(await page.evaluate(() => sessionStorage.getItem('cfghub.admin'))).toBeNull();
  });
});
