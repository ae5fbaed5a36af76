/** The documentation runner's reading of Markdown (test/support/readmeBlocks.ts): which pages and blocks run, their steps and ports. */
import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  documentationPages,
  fencedBlocks,
  isRun,
  selected,
  shows,
  stepsOf,
  withPorts,
} from '../../support/readmeBlocks.js';
import { tempDir } from '../../support/harness.js';

const MARKDOWN = [
  '# Title', // 1
  '## Try it', // 2
  '```sh', // 3
  'echo one', // 4
  '#> one', // 5
  'echo two', // 6
  'echo three', // 7
  '#> two', // 8
  '#> three', // 9
  '```', // 10
  '### Other', // 11
  '```sh norun', // 12
  'npm test', // 13
  '```', // 14
  '```yaml', // 15
  '# not a heading', // 16
  '```', // 17
  '```sh', // 18
  'echo last', // 19
  '```', // 20
].join('\n');

describe('README blocks', () => {
  const blocks = fencedBlocks(MARKDOWN);

  it('finds each fenced block with its heading and line, and runs only plain sh', () => {
    expect(blocks.map((b) => [b.line, b.section, b.info, isRun(b)])).toEqual([
      [4, 'Try it', 'sh', true],
      [13, 'Other', 'sh norun', false],
      [16, 'Other', 'yaml', false],
      [19, 'Other', 'sh', true],
    ]);
  });

  it('cuts a block into steps at each group of #> lines', () => {
    expect(stepsOf(blocks[0])).toEqual([
      { page: 'README.md', line: 4, section: 'Try it', code: 'echo one', expects: ['one'] },
      { page: 'README.md', line: 6, section: 'Try it', code: 'echo two\necho three', expects: ['two', 'three'] },
    ]);
    expect(stepsOf(blocks[3])).toEqual([
      { page: 'README.md', line: 19, section: 'Other', code: 'echo last', expects: [] },
    ]);
  });

  it('matches an expected line with … standing for anything within one line', () => {
    expect(shows('HTTP/1.1 200 OK\r\nETag: "abc"\r\n', 'ETag: "…"')).toBe(true);
    expect(shows('a x\nb', 'a…b')).toBe(false);
    expect(shows('a x b', 'a…b')).toBe(true);
    expect(shows('ba', 'a…b')).toBe(false);
  });
});

describe('documentation pages', () => {
  it('runs README.md first, then every Markdown page under docs/ in alphabetical order of its path', () => {
    const dir = tempDir('cfghub-pages-');
    try {
      for (const page of [
        'docs/watch.md',
        'docs/operations/replicas.md',
        'docs/cli.md',
        'docs/operations.md',
        'docs/images/a.png',
      ]) {
        mkdirSync(join(dir.path, page, '..'), { recursive: true });
        writeFileSync(join(dir.path, page), '');
      }
      expect(documentationPages(dir.path)).toEqual([
        'README.md',
        'docs/cli.md',
        'docs/operations.md',
        'docs/operations/replicas.md',
        'docs/watch.md',
      ]);
    } finally {
      dir.remove();
    }
  });

  it('keeps every README block under a filter, and a docs block whose page path or heading holds a word', () => {
    const readme = fencedBlocks('## Try it\n```sh\necho\n```\n')[0];
    const [first, second] = fencedBlocks(
      '## Tokens\n```sh\necho\n```\n## Groups\n```sh\necho\n```\n',
      'docs/security.md',
    );
    expect(first.page).toBe('docs/security.md');
    expect([readme, first, second].map((block) => selected(block, ['tokens']))).toEqual([true, true, false]);
    expect([readme, first, second].map((block) => selected(block, ['Security']))).toEqual([true, true, true]);
    expect([readme, first, second].map((block) => selected(block, ['replicas']))).toEqual([true, false, false]);
    expect([readme, first, second].map((block) => selected(block, undefined))).toEqual([true, true, true]);
  });

  it('gives each example server of 8080 to 8089 a free port, in addresses and port options', () => {
    const ports = [40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009];
    expect(withPorts('curl http://127.0.0.1:8080/healthz http://localhost:8083/x', ports)).toBe(
      'curl http://127.0.0.1:40000/healthz http://localhost:40003/x',
    );
    expect(withPorts('cfghub serve --port 8081 & PORT=8089 cfghub serve --port=8082', ports)).toBe(
      'cfghub serve --port 40001 & PORT=40009 cfghub serve --port=40002',
    );
    expect(withPorts('echo 8080 127.0.0.1:80801 10.0.0.1:8080', ports)).toBe('echo 8080 127.0.0.1:80801 10.0.0.1:8080');
  });
});
