/** The README runner's reading of Markdown (test/support/readmeBlocks.ts): which blocks run, and their steps. */
import { describe, expect, it } from 'vitest';
import { fencedBlocks, isRun, shows, stepsOf } from '../support/readmeBlocks.js';

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
      { line: 4, section: 'Try it', code: 'echo one', expects: ['one'] },
      { line: 6, section: 'Try it', code: 'echo two\necho three', expects: ['two', 'three'] },
    ]);
    expect(stepsOf(blocks[3])).toEqual([{ line: 19, section: 'Other', code: 'echo last', expects: [] }]);
  });

  it('matches an expected line with … standing for anything within one line', () => {
    expect(shows('HTTP/1.1 200 OK\r\nETag: "abc"\r\n', 'ETag: "…"')).toBe(true);
    expect(shows('a x\nb', 'a…b')).toBe(false);
    expect(shows('a x b', 'a…b')).toBe(true);
    expect(shows('ba', 'a…b')).toBe(false);
  });
});
