/**
 * Test support: a real headless Chromium (Debian's `chromium` package, which .ci/run installs),
 * driven by playwright-core, with a fresh profile per launch.
 *
 * Without a Chromium the browser tests are skipped with one line saying so, except with
 * CI=true, where a missing browser fails the run.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** CFGHUB_CHROMIUM names the browser (and only it); else Debian's and Ubuntu's places. */
const CANDIDATES = process.env.CFGHUB_CHROMIUM
  ? [process.env.CFGHUB_CHROMIUM]
  : ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium to drive, or undefined when none is installed. */
export const chromiumPath: string | undefined = CANDIDATES.find((path) => existsSync(path));

export const browserMissingLine = `browser tests skipped: no Chromium found (looked at ${CANDIDATES.join(', ')}); apt-get install -y chromium`;

export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  if (!chromiumPath) throw new Error(browserMissingLine);
  const profile = mkdtempSync(join(tmpdir(), 'cfghub-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: FLAGS,
    viewport,
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Where the console's screenshots go: the docs' pictures (docs/images/) only when asked with
 * UPDATE_SCREENSHOTS=1, else dist/screenshots/, a build folder git ignores, so `npm test` never
 * rewrites a tracked file.
 */
export const SCREENSHOTS = resolve(
  __dirname,
  process.env.UPDATE_SCREENSHOTS === '1' ? '../../docs/images' : '../../dist/screenshots',
);

/** Saves what the page shows as `console-NAME.png` in SCREENSHOTS, with no focus ring. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.screenshot({ path: resolve(SCREENSHOTS, `console-${name}.png`), fullPage: false });
}
