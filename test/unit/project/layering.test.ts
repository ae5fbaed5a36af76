/**
 * The layers as docs/design/architecture.md draws them, checked on the source: src/git (git's
 * formats) and src/layout (the configuration layout in git) never touch the disk, a process or
 * the network, and import nothing from the layers above them; src/domain imports nothing of ours
 * outside itself; src/service (every room of it) touches no disk, process or network itself and
 * imports nothing of the adapters above it; src/http reaches the disk only through the service,
 * but for the git HTTP backend. So "src/disk is the only code that touches the disk" is a fact
 * this test keeps. Imports are read with TypeScript's own pre-parser (type-only imports count too).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../..');
const SRC = join(ROOT, 'src');

/** Node modules that reach the disk, a child process or the network. */
const IO_MODULES = new Set(['fs', 'fs/promises', 'child_process', 'net'].flatMap((name) => [name, `node:${name}`]));

/** What each checked folder may import of ours (folders under src/). */
const ALLOWED: Record<string, readonly string[]> = {
  lib: ['lib', 'domain'], // src/domain/errors.ts only in fact: the base of every error
  git: ['git', 'domain'], // src/domain/errors.ts only in fact: the base of every error
  layout: ['layout', 'lib', 'git', 'domain'],
  domain: ['domain', 'lib'],
  // src/client/redirects.ts only: a replica's fetches refuse redirects as every cfghub client does.
  service: ['service', 'disk', 'layout', 'git', 'domain', 'lib', 'api', 'client'],
};

/** What src/http may import of ours: everything below it but the disk, and itself. */
const HTTP_ALLOWED = ['http', 'service', 'api', 'domain', 'layout', 'lib'];

/** The one disk module src/http may use: git's own HTTP backend, which serves clones from the repository folders. */
const HTTP_DISK_DOOR = 'disk/gitCli/gitHttpBackend.ts';

/**
 * Files of src/http that still import src/disk, each for a reason that a service door of its own
 * would remove. The list may only shrink: a test fails when a file on it no longer needs to be there.
 */
const HTTP_DISK_LEFT: Record<string, string> = {
  'http/deps.ts': 'the repository registry handed to the routes',
  'http/metrics.ts': 'held-pack and admin-token figures read for the scrape',
  'http/rooms.ts':
    'the admin token store, one for the admin API, change requests (an admin acts as its label) and clients',
  'http/routes/changeRoutes.ts': 'the GitRepository type',
  'http/routes/gitRoutes.ts': 'the GitRepository type beside the backend',
  'http/routes/replicationRoutes.ts': "the folder identity record's schema",
  'http/routes/rollbackRoutes.ts': 'the GitRepository type',
};

/** Every module specifier a source text imports or re-exports (static or dynamic). */
function importsOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** The .ts files of a folder under src/, recursively (our folders are shallow). */
function sourcesOf(folder: string): string[] {
  const entries = readdirSync(join(SRC, folder), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The HTTP adapter's error answers: they know the service's errors alone, which
 * translates every store error (src/service/errors.ts), so they import only src/service, src/domain
 * and their own folder. (Other files of src/http still import src/disk, for types or the clone
 * endpoint; see the README's "Project layout".)
 */
const HTTP_ERROR_FILES = ['http/answer/errorAnswer.ts', 'http/answer/errors.ts'];

/** Each import of the folder's files that breaks its rule, as "file: specifier (why)". */
function violations(
  folder: string,
  files = sourcesOf(folder),
  allowed = ALLOWED[folder]!,
  ioAllowed = false,
): string[] {
  const found: string[] = [];
  for (const file of files) {
    const name = relative(ROOT, file);
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (IO_MODULES.has(specifier)) {
        if (!ioAllowed) found.push(`${name}: ${specifier} (disk, process or network)`);
      } else if (specifier.startsWith('.')) {
        const target = relative(SRC, resolve(dirname(file), specifier));
        const layer = target.split(sep)[0] ?? '';
        if (target.startsWith('..') || !allowed.includes(layer)) found.push(`${name}: ${specifier} (src/${layer})`);
      }
    }
  }
  return found;
}

describe('layering', () => {
  it('reads every kind of import, type-only and dynamic included', () => {
    const text = [
      "import * as fs from 'node:fs';",
      "import type { GitRepository } from '../disk/repository.js';",
      "export { x } from './x.js';",
      "const y = await import('node:child_process');",
    ].join('\n');
    expect(importsOf(text)).toEqual(['node:fs', '../disk/repository.js', './x.js', 'node:child_process']);
  });

  it('finds the files it checks', () => {
    for (const folder of Object.keys(ALLOWED)) expect(sourcesOf(folder).length, folder).toBeGreaterThan(3);
  });

  it('src/git (git formats) touches no disk, process or network and imports only itself and src/domain', () => {
    expect(violations('git')).toEqual([]);
  });

  it('src/layout (configuration layout) touches no disk and imports only itself, src/git and src/domain', () => {
    expect(violations('layout')).toEqual([]);
  });

  it('src/domain imports nothing of ours outside src/domain, and no disk, process or network', () => {
    expect(violations('domain')).toEqual([]);
  });

  it('src/service, in every room, touches no disk, process or network and imports nothing above it', () => {
    expect(violations('service')).toEqual([]);
  });

  it('src/http reaches the disk only through the service, but for the git HTTP backend and the files listed', () => {
    const found = new Map<string, string[]>();
    for (const file of sourcesOf('http')) {
      const name = relative(SRC, file);
      const disk = importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => relative(SRC, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'))
        .filter((target) => target.split(sep)[0] === 'disk' && target !== HTTP_DISK_DOOR);
      if (disk.length > 0) found.set(name, disk);
    }
    const outside = [...found].filter(([name]) => !(name in HTTP_DISK_LEFT)).map(([name, disk]) => `${name}: ${disk}`);
    expect(outside, 'a new import of src/disk in src/http: go through the service').toEqual([]);
    const mended = Object.keys(HTTP_DISK_LEFT).filter((name) => !found.has(name));
    expect(mended, 'these no longer import src/disk: take them off the list').toEqual([]);
    // Anything else of ours src/http imports is below it; the disk is weighed above.
    const others = violations('http', sourcesOf('http'), [...HTTP_ALLOWED, 'disk'], true);
    expect(others).toEqual([]);
  });

  it('src/http keeps no table keyed by the server: what a front holds is made and closed with it (http/parts.ts)', () => {
    const tables = sourcesOf('http').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/new (?:Weak)?Map<HttpDeps\b/g)].map(() => relative(SRC, file)),
    );
    expect(tables).toEqual([]);
  });

  it('the HTTP error answers import only src/service, src/domain and src/http: never the disk, git or the layout', () => {
    const files = HTTP_ERROR_FILES.map((file) => join(SRC, file));
    expect(violations('http', files, ['service', 'domain', 'http'])).toEqual([]);
  });
});
