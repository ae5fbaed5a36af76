/**
 * The documentation's own promises, checked on the files: the README stays a short front door,
 * every relative link (and its #anchor) leads somewhere, the monitoring page's table names every
 * metric the code registers, CONTRIBUTING.md says why each package is there, and no file cites a
 * ticket or a path of one machine. (The examples
 * themselves run in test/e2e/project/readme.test.ts.)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../..');
const README_MAX_LINES = 250;

/** Files under a folder of the repository, recursively, whose names end with `suffix`. */
function filesUnder(folder: string, suffix: string): string[] {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(join(ROOT, path), { withFileTypes: true })) {
      const child = `${path}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(suffix)) found.push(child);
    }
  };
  walk(folder);
  return found.sort();
}

const PAGES = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...filesUnder('docs', '.md')];

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Markdown without its fenced blocks (a link-like text in a shell example is no link). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of withoutFences(markdown).matchAll(/^#{1,6} (.+)$/gm)) anchors.add(anchorOf(match[1].trim()));
  return anchors;
}

describe('the README', () => {
  it(`is a front door of at most ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('keeps the two commands, npm ci && npm start and npm ci && npm test', () => {
    expect(read('README.md')).toContain('npm ci && npm start');
    expect(read('README.md')).toContain('npm ci && npm test');
  });
});

describe('links in the documentation', () => {
  it.each(PAGES)('%s: every relative link leads to a file (and heading) that exists', (page) => {
    const broken: string[] = [];
    for (const match of withoutFences(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
      const link = match[1];
      if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
      const [path, anchor] = link.split('#');
      const target = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), path));
      if (!existsSync(join(ROOT, target))) {
        broken.push(`${link} (no ${target})`);
      } else if (anchor && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) {
        broken.push(`${link} (no heading #${anchor} in ${target})`);
      } else if (anchor && statSync(join(ROOT, target)).isDirectory()) {
        broken.push(`${link} (an anchor in a folder)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the monitoring page', () => {
  /** Metric names registered with prom-client anywhere in src/ (`name: 'cfghub_…'`). */
  const registered = new Set(
    filesUnder('src', '.ts').flatMap((file) =>
      [...read(file).matchAll(/\bname: '((?:cfghub|process)_[a-z_]+)'/g)].map((match) => match[1]),
    ),
  );
  const table = new Set(
    [...read('docs/operations/monitoring.md').matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]),
  );

  it('has a row for every metric the code registers, and none the code does not', () => {
    expect(registered.size).toBeGreaterThan(10);
    expect([...registered].filter((name) => !table.has(name)).sort(), 'registered, not in the table').toEqual([]);
    expect([...table].filter((name) => !registered.has(name)).sort(), 'in the table, not registered').toEqual([]);
  });
});

describe('CONTRIBUTING.md', () => {
  it('says why each package of package.json is there, one line each', () => {
    const manifest = JSON.parse(read('package.json')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const packages = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
    const contributing = read('CONTRIBUTING.md');
    const section = contributing.slice(contributing.indexOf('## Dependencies'));
    const explained = new Set([...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]));
    expect(packages.filter((name) => !explained.has(name)).sort()).toEqual([]);
  });
});

describe('the repository names rules, not tickets or machines', () => {
  // Built from pieces, so this file does not match its own patterns.
  const TICKET = new RegExp(['\\bissues?', ' \\d+\\b'].join(''), 'i');
  const CONTRACT = new RegExp(['contract', ' section'].join(''), 'i');
  const MACHINE_PATH = ['/wo', 'rk/'].join('');
  const SOURCES = [...filesUnder('src', ''), ...filesUnder('test', '')].filter((file) =>
    /\.(?:[cm]?[jt]sx?|cts|mjs|json|sh)$/.test(file),
  );

  it('cites no ticket ("issue N") and no section of an outside contract in src/ or test/: comments state the rule instead', () => {
    const found = SOURCES.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, n) => (TICKET.test(line) || CONTRACT.test(line) ? [`${file}:${n + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('names no path of one machine in the README, the docs, src/ or test/', () => {
    const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...filesUnder('docs', '.md'), ...SOURCES];
    expect(files.filter((file) => read(file).includes(MACHINE_PATH))).toEqual([]);
  });
});
