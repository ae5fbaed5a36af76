/**
 * How the server serves the web console, without a browser: `/` redirects to `/ui/`,
 * the page and its assets come from this server with a Content-Security-Policy that allows this
 * origin only (no CDN), only the built files are served (nothing else is reachable through
 * `/ui/`), and the page refers to no other origin.
 */
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../../support/harness.js';

const fixture = serverForFile();

const get = (path: string) => fetch(`${fixture.server.url}${path}`, { redirect: 'manual' });

describe('the web console as served', () => {
  it('redirects / and /ui to /ui/', async () => {
    const root = await get('/');
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/ui/');
    const bare = await get('/ui');
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/ui/');
  });

  it('serves the page, script and style sheet from this server, under a same-origin policy', async () => {
    const page = await get('/ui/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/https?:/);
    const html = await page.text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//); // nothing from another origin
    for (const [asset, type] of [
      ['app.js', 'text/javascript; charset=utf-8'],
      ['styles.css', 'text/css; charset=utf-8'],
      ['favicon.svg', 'image/svg+xml'],
    ]) {
      expect(html).toContain(asset);
      const answer = await get(`/ui/${asset}`);
      expect(answer.status, asset).toBe(200);
      expect(answer.headers.get('content-type')).toBe(type);
      expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const script = await (await get('/ui/app.js')).text();
    // The size docs/web-console.md gives: zod's namespace object imported anywhere the console
    // reaches keeps all of zod (about 390 KB in all).
    expect(Buffer.byteLength(script)).toBeLessThan(320 * 1024);
    // No CDN or remote call. Identifiers that are never fetched may appear: XML namespaces (www.w3.org)
    // and the JSON Schema dialects the schema library names (json-schema.org).
    expect(script).not.toMatch(/https?:\/\/(?!www\.w3\.org\/|json-schema\.org\/)[a-z0-9.-]+\.[a-z]{2,}\//i);
  });

  it('answers any other path under /ui/ with a JSON 404 and reaches nothing outside the built folder', async () => {
    for (const path of [
      '/ui/nothing.js',
      '/ui/..%2Fcli%2Fmain.cjs',
      '/ui/%2e%2e/package.json',
      '/ui/main.tsx',
      '/ui/sub/app.js',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      const body = (await answer.json()) as { error: string; message: string };
      expect(body.error).toBe('not_found');
      expect(body.message).not.toContain(fixture.repos);
    }
  });
});
