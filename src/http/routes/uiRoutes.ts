/**
 * The web console: `GET /` redirects to `/ui/`, and `/ui/…` serves the files that
 * `npm run build` bundles into `dist/ui` (src/ui/build.mjs). Every asset comes from this server
 * (no CDN), and the Content-Security-Policy says so to the browser: scripts, styles, images and
 * requests only from this origin. The console holds no power of its own: it calls the public REST
 * API like any client, with the token its user signed in with.
 *
 * Only the files found in the built folder are served, by exact name (no path is joined from the
 * request), so nothing outside that folder can be reached. The console's own navigation lives in
 * the URL's fragment (`/ui/#/repo/acme/app/keys`), which never reaches the server.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Request, RequestHandler, Response } from 'express';
import type { HttpDeps } from '../deps.js';
import { HttpError } from '../answer/errors.js';
import { sendBytes } from '../answer/headers.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
};

const POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The built console's folder: `dist/ui` beside the compiled server (dist/http/routes → dist/ui), or, when
 * the server runs from its TypeScript sources (the tests), the project's `dist/ui`.
 */
function builtFolder(): string | undefined {
  const candidates = [new URL('../../ui/', import.meta.url), new URL('../../../dist/ui/', import.meta.url)].map((url) =>
    fileURLToPath(url),
  );
  // app.js tells the built folder from src/ui, which holds index.html too.
  return candidates.find((dir) => existsSync(`${dir}index.html`) && existsSync(`${dir}app.js`));
}

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

/** The built files, read once: a few hundred KiB at most. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const dot = name.lastIndexOf('.');
    const type = TYPES[dot === -1 ? '' : name.slice(dot)];
    if (type) assets.set(name, { body: readFileSync(`${dir}${name}`), type });
  }
  return assets;
}

/** The console's handlers: `/` and `/ui` redirect, `/ui/` is its page, `/ui/:name` its files. */
export function uiRoutes(_ctx: HttpDeps): Record<'root' | 'redirect' | 'page' | 'file', RequestHandler> {
  let assets: Map<string, Asset> | undefined;
  const assetsNow = (): Map<string, Asset> => {
    if (!assets) {
      const dir = builtFolder();
      if (!dir) throw new HttpError(503, 'ui_unavailable', 'the web console is not built: run npm run build');
      assets = loadAssets(dir);
    }
    return assets;
  };

  const send = (res: Response, asset: Asset, cache: string) => {
    res.setHeader('Content-Security-Policy', POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', cache);
    sendBytes(res, 200, asset.type, asset.body);
  };

  return {
    root: (_req: Request, res: Response) => res.redirect(302, '/ui/'),
    redirect: (_req: Request, res: Response) => res.redirect(301, '/ui/'),
    page: (_req: Request, res: Response) => send(res, assetsNow().get('index.html')!, 'no-cache'),
    file: (req: Request, res: Response) => {
      const asset = assetsNow().get(String(req.params.name));
      if (!asset) throw new HttpError(404, 'not_found', 'no such file in the web console');
      send(res, asset, 'no-cache');
    },
  };
}
