/**
 * The README's shell examples, as test/e2e/readme.test.ts runs them (issue 15). The convention,
 * also stated for contributors in the README:
 *
 * - A fenced block tagged `sh` is run, in README order, in one bash session (variables and the
 *   current folder carry over from block to block), with `set -e`: a failing command fails it.
 * - `sh norun` is shown as shell but not run (commands the test itself stands for, such as
 *   `npm test`). Any other tag (`text`, `yaml`, `json`, `ini`, none) is illustrative: not run.
 * - A comment line `#> TEXT` states output: some line of what the commands above it (since the
 *   block's start or the previous `#>` group) wrote, stdout and stderr together, holds TEXT.
 *   `…` in TEXT stands for anything within that line (`#> ETag: "…"`). The group of `#>` lines
 *   ends a step; each step's exit status and outputs are checked on their own.
 */

export interface ReadmeStep {
  /** Line of the README where the step's first command is (1-based). */
  readonly line: number;
  /** The `##`/`###` heading the block is under. */
  readonly section: string;
  readonly code: string;
  /** What the step's output must show, one entry per `#>` line. */
  readonly expects: readonly string[];
}

export interface ReadmeBlock {
  readonly line: number;
  readonly section: string;
  /** The fence's info string: `sh`, `sh norun`, `yaml`, … */
  readonly info: string;
  readonly code: string;
}

const FENCE = '```';
const EXPECT = '#>';

/** Every fenced block of a Markdown text, with its heading and line. */
export function fencedBlocks(markdown: string): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = markdown.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('#')) {
      const heading = /^#{1,6} (.*)$/.exec(line);
      if (heading) section = heading[1].trim();
      continue;
    }
    if (!line.startsWith(FENCE)) continue;
    const info = line.slice(FENCE.length).trim();
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith(FENCE)) end++;
    blocks.push({ line: start + 1, section, info, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Whether a block is run: tagged `sh`, without `norun`. */
export function isRun(block: ReadmeBlock): boolean {
  const [language, ...attributes] = block.info.split(/\s+/);
  return language === 'sh' && !attributes.includes('norun');
}

/** A block cut into steps at each group of `#>` lines. */
export function stepsOf(block: ReadmeBlock): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  let code: string[] = [];
  let expects: string[] = [];
  let first = block.line;
  const flush = () => {
    if (code.some((text) => text.trim() !== '') || expects.length) {
      steps.push({ line: first, section: block.section, code: code.join('\n'), expects });
    }
    code = [];
    expects = [];
  };
  block.code.split('\n').forEach((text, index) => {
    const trimmed = text.trim();
    if (trimmed.startsWith(EXPECT)) {
      expects.push(trimmed.slice(EXPECT.length).trim());
      return;
    }
    if (expects.length) flush();
    if (code.length === 0) first = block.line + index;
    code.push(text);
  });
  flush();
  return steps;
}

/** Whether some line of `output` holds `expected`, where `…` in it stands for anything in that line. */
export function shows(output: string, expected: string): boolean {
  const parts = expected.split('…');
  return output.split('\n').some((line) => {
    let at = 0;
    for (const part of parts) {
      const found = line.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
    return true;
  });
}
